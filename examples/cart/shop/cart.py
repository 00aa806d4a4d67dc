"""A shopping cart."""

from dataclasses import dataclass, field


@dataclass
class Line:
    name: str
    price: float
    quantity: int = 1


@dataclass
class Cart:
    lines: list = field(default_factory=list)

    def add(self, name, price, quantity=1):
        """Add a line (or more of an existing one)."""
        for line in self.lines:
            if line.name == name:
                line.quantity += quantity
                return
        self.lines.append(Line(name, price, quantity))

    def total(self):
        """Sum of price times quantity over all lines."""
        return round(sum(line.price for line in self.lines), 2)

    def count(self):
        """Number of items."""
        return sum(line.quantity for line in self.lines)
