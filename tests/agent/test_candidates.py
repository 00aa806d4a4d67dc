"""Candidate helpers without a model."""

from __future__ import annotations

from codeagent.agent.candidates import Candidate, bypassed, dropped_calls
from codeagent.agent.phases import Shown

MERGE = "def merge(xs):\n    for x in sorted(xs):\n        if out and overlaps(out[-1], x):\n            pass\n"


def test_dropped_calls_are_the_helpers_the_rewrite_stops_calling() -> None:
    inlined = MERGE.replace("overlaps(out[-1], x)", "x[0] <= out[-1][1]")
    assert dropped_calls(MERGE, inlined, {"overlaps", "total"}) == ["overlaps"]
    assert dropped_calls(MERGE, MERGE.replace("<", "<="), {"overlaps"}) == []  # still calls it
    assert dropped_calls(MERGE, inlined, {"total"}) == []  # not a call of the old code
    assert dropped_calls(MERGE, inlined, set()) == []  # builtins like sorted are not helpers


def test_bypassed_names_the_shown_helpers_a_rewrite_stops_calling_but_not_tests_or_itself() -> None:
    shown = [Shown("m.py::merge", 1, 4, "python", MERGE),
             Shown("m.py::overlaps", 6, 7, "python", "def overlaps(a, b):\n    return a[0] < b[1]\n"),
             Shown("tests/test_m.py::test_merge", 1, 2, "python", "def test_merge():\n    merge([])\n")]
    inlined = MERGE.replace("overlaps(out[-1], x)", "x[0] <= out[-1][1]")
    assert bypassed(Candidate(n=1, code=inlined, replaced=["merge"]), shown) == ["overlaps"]
    assert bypassed(Candidate(n=1, code=MERGE, replaced=["merge"]), shown) == []
    assert bypassed(Candidate(n=1, code="def overlaps(a, b):\n    return True\n", replaced=["overlaps"]), shown) == []
