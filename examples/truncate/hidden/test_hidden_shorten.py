from textkit.shorten import truncate

def test_never_longer_than_width():
    for width in range(3, 12):
        assert len(truncate("abcdefghijklmnop", width)) <= width

def test_exact_fit():
    assert truncate("abcdef", 6) == "abcdef"
    assert truncate("abcdefg", 6) == "abc..."
