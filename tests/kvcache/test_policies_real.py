"""The point of the project on the real model: a signature read early survives 4x compression
under the default policy, where a StreamingLLM window at the same budget loses it."""

from __future__ import annotations

import inspect
import json.decoder
import math
import shlex
import textwrap

import pytest

from codeagent.kvcache.tags import SegmentKind, SpanInfo

TARGET = "text, prefix, predicate=None):"


def _numbered(src: str, first: int = 1) -> str:
    return "".join(f"{i:>6}\t{line}" for i, line in enumerate(src.splitlines(keepends=True), first))


def _session(engine, commit: bool) -> int:
    """An agent session: issue, plan, a file view holding the target early, then other work."""
    tw = inspect.getsource(textwrap)
    start = tw.index("def indent(")
    view = tw[start - 1200: start + 900]
    engine.append_message("system", "You are a coding agent. Use the tools to fix issues.", SpanInfo(kind=SegmentKind.SYSTEM))
    engine.append_message("user", "Add a logging wrapper around textwrap.indent that keeps its signature.",
                          SpanInfo(kind=SegmentKind.ISSUE))
    engine.append_message("assistant", "1. Read textwrap.py.\n2. Read the JSON decoder and shlex for context.\n"
                          "3. Write the wrapper.", SpanInfo(kind=SegmentKind.PLAN))
    engine.append_message("assistant", "view textwrap.py", SpanInfo(kind=SegmentKind.TOOL_CALL, subtask="s1"))
    engine.append_message("tool", _numbered(view, 400), SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s1",
                                                              language="python"))
    if commit:
        engine.commit("s1")
    for name, mod in (("json/decoder.py", json.decoder), ("shlex.py", shlex)):
        src = inspect.getsource(mod)[:3500]
        engine.append_message("assistant", f"view {name}", SpanInfo(kind=SegmentKind.TOOL_CALL, subtask="s2"))
        engine.append_message("tool", _numbered(src), SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s2",
                                                             language="python"))
    return engine.logical


@pytest.mark.model
@pytest.mark.parametrize("policy,expect_recall", [("default", True), ("window", False)])
def test_signature_survives_quarter_budget(make_engine, policy, expect_recall):
    eng = make_engine(policy=policy, min_tokens=0)
    n = _session(eng, commit=eng.manager.policy.uses_lifecycle)
    assert n > 2000
    eng.manager.enforce(eng.state, budget=math.ceil(0.25 * n))
    assert len(eng.table) <= math.ceil(0.25 * n)
    eng.start_assistant(compress=False)
    eng.append("I'll add the wrapper with the same signature:\n```python\ndef indent(", compress=False)
    gen = eng.generate(12)
    recalled = " ".join(gen.text.split()).startswith(TARGET)
    assert recalled == expect_recall, f"{policy}: {gen.text!r}"
