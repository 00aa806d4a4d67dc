from billing.invoice import render_invoice
from billing.money import format_money

def test_format_money():
    assert format_money(1234.5) == "$1,234.50"
    assert format_money(0.07) == "$0.07"

def test_two_lines():
    assert render_invoice([("A", 1, 0.25), ("B", 3, 0.1)]).endswith("Total: $0.55")
