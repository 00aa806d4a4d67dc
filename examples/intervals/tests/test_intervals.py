from spans.intervals import merge


def test_overlapping():
    assert merge([(1, 4), (2, 6)]) == [(1, 6)]


def test_touching():
    assert merge([(1, 3), (3, 5)]) == [(1, 5)]
