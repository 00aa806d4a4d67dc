"""Money helpers shared by the billing modules."""


def to_cents(amount):
    """``amount`` (a float in dollars) as whole cents."""
    return int(round(amount * 100))


def format_money(amount):
    """``amount`` as ``$1,234.56``."""
    cents = to_cents(amount)
    dollars = cents // 100
    return f"${dollars:,}.{0:02d}"
