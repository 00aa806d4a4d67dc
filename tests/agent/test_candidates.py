"""Candidate helpers without a model."""

from __future__ import annotations

from codeagent.agent.candidates import dropped_calls

MERGE = "def merge(xs):\n    for x in sorted(xs):\n        if out and overlaps(out[-1], x):\n            pass\n"


def test_dropped_calls_are_the_helpers_the_rewrite_stops_calling() -> None:
    inlined = MERGE.replace("overlaps(out[-1], x)", "x[0] <= out[-1][1]")
    assert dropped_calls(MERGE, inlined, {"overlaps", "total"}) == ["overlaps"]
    assert dropped_calls(MERGE, MERGE.replace("<", "<="), {"overlaps"}) == []  # still calls it
    assert dropped_calls(MERGE, inlined, {"total"}) == []  # not a call of the old code
    assert dropped_calls(MERGE, inlined, set()) == []  # builtins like sorted are not helpers
