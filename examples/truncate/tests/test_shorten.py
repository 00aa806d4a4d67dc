from textkit.shorten import initials, truncate


def test_short_text_unchanged():
    assert truncate("hi", 5) == "hi"


def test_cut_text_fits():
    assert truncate("hello world", 8) == "hello..."


def test_initials():
    assert initials("Ada Lovelace") == "A.L."
