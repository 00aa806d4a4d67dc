"""One-line summaries of shapes."""

from shapes.geometry import circle_area, circle_perimeter, rectangle_area


def summarize(shape, *size):
    if shape == "circle":
        return f"circle r={size[0]}: area {circle_area(size[0]):.2f}, perimeter {circle_perimeter(size[0]):.2f}"
    if shape == "rectangle":
        return f"rectangle {size[0]}x{size[1]}: area {rectangle_area(*size):.2f}"
    raise ValueError(f"unknown shape {shape!r}")
