import pytest

from calc import evaluate
from calc.tokens import tokenize


def test_tokenize():
    assert tokenize("12 + 3.5") == [12.0, "+", 3.5]


def test_precedence():
    assert evaluate("2 + 3 * 4") == 14


def test_parentheses():
    assert evaluate("2 * (3 + 4)") == 14


def test_division():
    assert evaluate("7 / 2") == 3.5


def test_division_by_zero():
    with pytest.raises(ZeroDivisionError):
        evaluate("1 / 0")
