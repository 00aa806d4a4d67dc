"""A small calculator: tokenize and evaluate arithmetic expressions."""

from calc.evaluate import evaluate

__all__ = ["evaluate"]
