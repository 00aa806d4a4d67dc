"""Evaluate an expression with the usual precedence (shunting-yard)."""

from calc.ops import BINARY, PRECEDENCE
from calc.tokens import tokenize


def _apply(values, op):
    right = values.pop()
    left = values.pop()
    values.append(BINARY[op](left, right))


def evaluate(text):
    """Value of an arithmetic expression such as ``"2 * (3 + 4)"``."""
    values, ops = [], []
    for token in tokenize(text):
        if isinstance(token, float):
            values.append(token)
        elif token == "(":
            ops.append(token)
        elif token == ")":
            while ops[-1] != "(":
                _apply(values, ops.pop())
            ops.pop()
        else:
            while ops and ops[-1] != "(" and PRECEDENCE[ops[-1]] >= PRECEDENCE[token]:
                _apply(values, ops.pop())
            ops.append(token)
    while ops:
        _apply(values, ops.pop())
    return values[0]
