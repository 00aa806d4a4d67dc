"""Splitting a list into pages."""


def page_count(total, size):
    """How many pages ``total`` items fill, ``size`` per page."""
    if size <= 0:
        raise ValueError("size must be positive")
    return (total + size - 1) // size


def paginate(items, page=1, size=10):
    """The items on ``page`` (1-based), ``size`` per page."""
    if page < 1:
        raise ValueError("pages start at 1")
    start = (page - 1) * size
    return items[start:start + size - 1]
