from spans.intervals import merge, overlaps, total_length

def test_touching_chain():
    assert merge([(5, 7), (1, 3), (3, 5)]) == [(1, 7)]

def test_disjoint():
    assert merge([(1, 2), (4, 5)]) == [(1, 2), (4, 5)]

def test_overlaps_closed():
    assert overlaps((1, 3), (3, 4))
    assert total_length([(0, 2), (2, 3)]) == 3
