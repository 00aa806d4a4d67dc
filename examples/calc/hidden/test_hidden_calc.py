import pytest
from calc import evaluate

def test_fractions():
    assert evaluate("7 / 2") == 3.5
    assert evaluate("1 / 4") == 0.25

def test_mixed():
    assert evaluate("3 + 9 / 6") == 4.5

def test_zero_still_raises():
    with pytest.raises(ZeroDivisionError):
        evaluate("5 / 0")

def test_others_unchanged():
    assert evaluate("2 * (3 + 4)") == 14
