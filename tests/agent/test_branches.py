"""Branch points: where the model prefers another token than the code's, outside names, comments and docstrings."""

from __future__ import annotations

import re

from codeagent.agent.branches import Branch, branch_points, choose, name_span
from codeagent.protocols import TokenScore

CODE = '''@cache
def overlaps(a, b):
    """Whether a and b share a point."""
    # closed intervals
    return a[0] < b[1] and b[0] < a[1]'''


def scores(code: str, prefer: dict[str, tuple[str, float]], logprob: float = -0.5) -> list[TokenScore]:
    """A token per word or symbol run; ``prefer`` maps a token's text to the model's other (choice, log-prob)."""
    out = []
    for m in re.finditer(r"\s*(?:\w+|[^\w\s]+)|\s+", code):
        tok = m.group(0)
        alts = ()
        if tok.strip() in prefer:
            choice, lp = prefer[tok.strip()]
            alts = ((" " + choice, lp), (tok.replace(tok.strip(), choice), lp - 1))
        out.append(TokenScore(m.start(), m.end(), logprob, alts))
    return out


def test_name_span_is_the_name_in_the_header_after_decorators() -> None:
    lo, hi = name_span(CODE, "Spans.overlaps")
    assert CODE[lo:hi] == "overlaps" and CODE[:lo].endswith("def ")
    assert name_span("x = 1", "missing") == (0, 0)


def test_branch_points_are_ordered_by_disagreement_and_skip_what_tests_cannot_see() -> None:
    prefer = {"<": ("<=", -0.2), "and": ("or", -1.0), "overlaps": ("merge", -0.01), "share": ("touch", -0.01),
              "closed": ("open", -0.01), "1": ("1\n", -0.01), "cache": ("lru_cache", -0.3)}
    found = branch_points("spans.py::overlaps", "overlaps", CODE, "python", scores(CODE, prefer))
    assert all(isinstance(b, Branch) and b.ref == "spans.py::overlaps" for b in found)
    heads = [b.head for b in found]
    assert heads[0].endswith("return a[0] <=") and heads[0].startswith("@cache\ndef overlaps(a, b):")
    assert [b.gap for b in found] == sorted((b.gap for b in found), reverse=True)
    assert any(h.endswith("< b[1] or") for h in heads)
    assert not any(h.endswith(("merge", "touch", "open", "1\n")) for h in heads)  # name, docstring, comment, space
    assert any(h.endswith("@ lru_cache") for h in heads)  # a decorator is code
    assert len(found) == 4  # the two '<', 'and', the decorator


def test_unlikely_choices_and_the_first_token_are_not_branch_points() -> None:
    prefer = {"<": ("<=", -4.0), "@": ("#", -0.1), "and": ("#", -0.1)}
    assert branch_points("a.py::overlaps", "overlaps", CODE, "python", scores(CODE, prefer)) == []


def test_scores_past_the_code_are_ignored() -> None:
    text = CODE + "\n```"
    found = branch_points("a.py::overlaps", "overlaps", CODE, "python", scores(text, {"```": ("end", -0.1)}))
    assert found == []


def test_choose_takes_the_most_doubted_points_and_saves_the_last_for_another_definition() -> None:
    a = [Branch("m.py::merge", "a1", 0.8), Branch("m.py::merge", "a2", -0.1), Branch("m.py::merge", "a3", -0.2)]
    b = [Branch("m.py::overlaps", "b1", -0.5), Branch("m.py::overlaps", "b2", -0.6)]
    assert [x.head for x in choose([a, b], 3)] == ["a1", "a2", "b1"]
    assert [x.head for x in choose([a, b], 4)] == ["a1", "a2", "a3", "b1"]
    assert [x.head for x in choose([b, [Branch("m.py::merge", "a0", 0.9)]], 3)] == ["a0", "b1", "b2"]  # mixed already
    assert [x.head for x in choose([a], 2)] == ["a1", "a2"]  # one definition: nothing to save
    assert [x.head for x in choose([a, b], 2, used={"a1"})] == ["a2", "b1"]
    assert [x.head for x in choose([a, b], 1)] == ["a1"]
    assert choose([[], []], 3) == []


def test_choose_skips_heads_a_reply_already_took_and_puts_a_restated_definition_first() -> None:
    a = [Branch("m.py::merge", "def merge(x):\n    return min", 0.8), Branch("m.py::merge", "def merge(x):\n    y", 0.1)]
    b = [Branch("m.py::overlaps", "def overlaps(a, b):\n    return a[0] <=", -0.5),
         Branch("m.py::overlaps", "def overlaps(a, b):\n    return b", -0.7)]
    greedy = "def merge(x):\n    return min(x)\n"  # forcing `min` there and finishing greedily writes this again
    assert [x.head.split()[-1] for x in choose([a, b], 2, replies=[greedy])] == ["y", "<="]
    assert [x.head.split()[-1] for x in choose([a, b], 3, first={"m.py::overlaps"})] == ["<=", "b", "min"]
    assert [x.head.split()[-1] for x in choose([a, b], 2, first={"m.py::overlaps"})] == ["<=", "min"]  # one saved


def test_a_token_that_would_lengthen_the_name_before_it_is_not_a_branch_point() -> None:
    code = "def summarize(shape):\n    return circle_area(shape)"
    at, part = code.index("("), code.index("_area")
    glue = [TokenScore(at, at + 1, -0.5, (("_circle", -0.1), (")", -0.2)))]  # after `summarize`: `_circle` or `)`
    swap = [TokenScore(part, part + 5, -0.5, (("_perimeter", -0.1),))]  # `_area` of `circle_area`: a name is code
    assert [b.head for b in branch_points("r.py::summarize", "summarize", code, "python", glue)] == ["def summarize)"]
    assert [b.head.splitlines()[-1] for b in branch_points("r.py::summarize", "summarize", code, "python", swap)] == \
        ["    return circle_perimeter"]
