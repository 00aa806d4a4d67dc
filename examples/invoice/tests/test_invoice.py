from billing.invoice import render_invoice


def test_whole_dollars():
    assert render_invoice([("Pen", 2, 1.0)]) == "Pen x2: $2.00\nTotal: $2.00"


def test_cents_are_kept():
    assert render_invoice([("Widget", 2, 9.99)]) == "Widget x2: $19.98\nTotal: $19.98"
