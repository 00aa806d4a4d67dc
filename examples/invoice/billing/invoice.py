"""Plain-text invoices."""

from billing.money import format_money


def line_total(quantity, price):
    return quantity * price


def render_invoice(lines):
    """One row per (name, quantity, price) and a total row."""
    rows = []
    total = 0.0
    for name, quantity, price in lines:
        amount = line_total(quantity, price)
        total += amount
        rows.append(f"{name} x{quantity}: {format_money(amount)}")
    rows.append(f"Total: {format_money(total)}")
    return "\n".join(rows)
