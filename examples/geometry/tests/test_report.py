from shapes.report import summarize


def test_rectangle_summary():
    assert summarize("rectangle", 2, 3) == "rectangle 2x3: area 6.00"


def test_circle_summary():
    assert summarize("circle", 2) == "circle r=2: area 12.57, perimeter 12.57"
