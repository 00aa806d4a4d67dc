"""Metrics on hand-made cases."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from codeagent.bench.metrics import (
    Row,
    edit_similarity,
    exact_match,
    levenshtein,
    mean_logprob,
    normalise_ws,
    retention,
    top1_accuracy,
)


def test_normalise_ws():
    assert normalise_ws("  a \t b\n\n c  ") == "a b c"
    assert normalise_ws("") == ""


def test_exact_match_whitespace_and_prefix():
    target = "url, retries=3, backoff=0.5):"
    assert exact_match("url,  retries=3,\n backoff=0.5):\n    return x", target) == 1.0
    assert exact_match("  url, retries=3, backoff=0.5):", target) == 1.0
    assert exact_match("url, retries=3, backoff=0.25):", target) == 0.0
    assert exact_match("url, retries=3", target) == 0.0  # too short
    assert exact_match("urlretries=3, backoff=0.5):", target) == 0.0  # whitespace is not dropped


def test_levenshtein_known_values():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("flaw", "lawn") == 2
    assert levenshtein("", "abc") == 3
    assert levenshtein("abc", "abc") == 0


def test_edit_similarity_known_values():
    assert edit_similarity("", "") == 1.0
    assert edit_similarity("abc", "") == 0.0
    assert edit_similarity("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert edit_similarity("abcd", "abcd") == 1.0
    assert edit_similarity("abcd", "abce") == pytest.approx(0.75)
    assert edit_similarity("ab", "ba") == edit_similarity("ba", "ab") == 0.0


def test_mean_logprob_and_top1():
    assert mean_logprob([-1.0, -2.0, -3.0]) == pytest.approx(-2.0)
    with pytest.raises(ValueError):
        mean_logprob([])
    assert top1_accuracy([1, 2, 3, 4], [1, 2, 0, 4]) == 0.75
    with pytest.raises(ValueError):
        top1_accuracy([1], [1, 2])


def test_retention():
    assert retention(0.5, 1.0) == 0.5
    assert retention(0.3, 0.6) == pytest.approx(0.5)
    assert retention(0.5, 0.0) is None
    assert retention(None, 1.0) is None
    assert retention(0.0, 0.5) == 0.0
    # log-probs: ratio of geometric-mean probabilities
    assert retention(-2.0, -1.0, logprob=True) == pytest.approx(math.exp(-1.0))
    assert retention(-1.0, -1.0, logprob=True) == 1.0
    assert retention(0.0, 0.0, logprob=True) == 1.0
    assert retention(-0.5, -1.5, logprob=True) == pytest.approx(math.e)
    assert retention(float("nan"), -1.0, logprob=True) is None


def test_row_model():
    row = Row(task_id="t", family="f", method="full", budget=1, n_context_tokens=10, top1=0.5, unknown=1)
    assert row.key == ("t", "full", 1.0) and row.error is None and row.exact is None
    with pytest.raises(ValidationError):
        Row(task_id="t", family="f", method="full", n_context_tokens=10)
