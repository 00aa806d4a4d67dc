import math
from shapes.geometry import circle_area
from shapes.report import summarize

def test_circle_area():
    assert math.isclose(circle_area(1), math.pi)
    assert math.isclose(circle_area(3), 9 * math.pi)

def test_summary_radius_one():
    assert summarize("circle", 1) == "circle r=1: area 3.14, perimeter 6.28"
