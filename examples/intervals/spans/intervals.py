"""Closed integer intervals as (start, end) tuples."""


def overlaps(a, b):
    """Whether closed intervals ``a`` and ``b`` share a point."""
    return a[0] < b[1] and b[0] < a[1]


def merge(intervals):
    """Sorted, merged intervals: overlapping or touching ones become one."""
    out = []
    for current in sorted(intervals):
        if out and overlaps(out[-1], current):
            out[-1] = (out[-1][0], max(out[-1][1], current[1]))
        else:
            out.append(current)
    return out


def total_length(intervals):
    return sum(end - start for start, end in merge(intervals))
