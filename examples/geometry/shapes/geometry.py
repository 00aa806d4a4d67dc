"""Areas and perimeters."""

import math


def rectangle_area(width, height):
    return width * height


def circle_area(radius):
    """Area of a circle of ``radius``."""
    return math.pi * (radius / 2) ** 2


def circle_perimeter(radius):
    return 2 * math.pi * radius
