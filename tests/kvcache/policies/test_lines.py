"""Whole-line decisions (``kv.unit=line``), protected spans and the order in which pins give way.

Real engine, tokenizer and tagger (SmolLM2); the policies decide from real slot tables.
"""

from __future__ import annotations

import json

import torch

from codeagent.kvcache.policies.base import line_units
from codeagent.kvcache.policies.lifecycle import continuations
from codeagent.kvcache.tags import SegmentKind, SpanInfo, State
from codeagent.kvcache.view import CacheView

CODE = "\n".join(
    f"def handler_{i}(request, retries={i}):\n"
    f"    value = request.payload['field_{i}'] * {i} + offset_{i}\n"
    f"    return compute_{i}(value, retries=retries)  # step {i}\n"
    for i in range(12)
)


def _line_of(engine) -> list[int]:
    """A line number per slot of an uncompressed table (a new line after a line end or a new segment)."""
    t = engine.table
    out, line = [], 0
    for i in range(len(t)):
        if i and (bool(t["eol"][i - 1]) or int(t["seg"][i]) != int(t["seg"][i - 1])):
            line += 1
        out.append(line)
    return out


def test_the_engine_marks_the_tokens_that_end_a_line(make_engine):
    eng = make_engine(policy="full")
    eng.append("alpha = 1\nbeta = 2\n\ngamma = 3", SpanInfo(kind=SegmentKind.CODE))
    t = eng.table
    ends = [eng.tok.decode([int(x)]) for x in t["token"][t["eol"]]]
    assert ends and all("\n" in e for e in ends)
    assert "".join(ends).count("\n") == 3
    assert not bool(t["eol"][-1])  # "3" ends the text, not a line


def test_line_units_cut_at_line_ends_segments_and_gaps(make_engine):
    eng = make_engine(policy="full")
    eng.append("a = 1\nb = 2\n", SpanInfo(kind=SegmentKind.CODE))
    eng.append("c = 3\n", SpanInfo(kind=SegmentKind.CODE))
    view = CacheView.of(eng.state)
    n = len(view)
    units = line_units(view, torch.arange(n))
    assert [i for u in units for i in u] == list(range(n))
    assert len(units) == 3
    for u in units:  # only a unit's last slot may end a line
        assert not bool(view.table["eol"][u[:-1]].any())
    gap = line_units(view, torch.tensor([0, 2, 3]))  # slot 1 sits outside the pool: 0 and 2 are not one line
    assert gap[0] == [0]


def test_line_mode_keeps_or_drops_whole_lines(make_engine):
    eng = make_engine(policy="codecomp", unit="line", mode="selective", min_tokens=0, recent_tokens=16)
    eng.append(CODE, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    lines = _line_of(eng)
    pos_line = dict(zip(eng.table["pos"].tolist(), lines))
    size = {ln: lines.count(ln) for ln in set(lines)}
    eng.manager.enforce(eng.state, budget=len(eng.table) // 2)
    assert len(eng.table) <= len(lines) // 2
    kept: dict[int, int] = {}
    for p in eng.table["pos"].tolist():
        kept[pos_line[p]] = kept.get(pos_line[p], 0) + 1
    partial = {ln: (k, size[ln]) for ln, k in kept.items() if k != size[ln] and ln != 0}  # line 0 holds the sinks
    assert not partial, partial
    assert 0 < len(kept) < len(size)
    assert lines[-1] in kept  # the recent window, from the start of its line


def test_token_mode_cuts_lines_where_line_mode_does_not(make_engine):
    """The same budget in token mode leaves lines half kept (what line mode exists to avoid)."""
    eng = make_engine(policy="codecomp", unit="token", mode="selective", min_tokens=0, recent_tokens=16)
    eng.append(CODE, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    lines = _line_of(eng)
    pos_line = dict(zip(eng.table["pos"].tolist(), lines))
    eng.manager.enforce(eng.state, budget=len(eng.table) // 2)
    kept = [pos_line[p] for p in eng.table["pos"].tolist()]
    assert any(0 < kept.count(ln) < lines.count(ln) for ln in set(kept) if ln != 0)


def test_protected_spans_mark_only_their_tokens(make_engine):
    eng = make_engine(policy="default")
    text = "Repository map:\n  def f(x):\n\ndef f(x):\n    return x + 1\n"
    start = text.index("def f(x):\n    return")
    eng.append_message("user", text, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python",
                                              protect=((start, len(text)),)))
    t = eng.table
    prot = "".join(eng.tok.decode([int(x)]) for x in t["token"][t["protect"]])
    assert prot.strip() == "def f(x):\n    return x + 1"
    assert bool((t["state"][t["protect"]] == int(State.PINNED)).all())


def test_protected_code_and_the_issue_outlast_other_pins(make_engine):
    """Past the budget and the pinned cap, the caller's protected code and the issue stay whole; error lines
    and signatures give way, whole lines at a time."""
    eng = make_engine(policy="default", unit="line", pinned_overflow="release_lowest", min_tokens=0,
                      recent_tokens=16)
    issue = "The handler for field 3 multiplies by the wrong factor; it should add the offset first."
    eng.append_message("user", issue, SpanInfo(kind=SegmentKind.ISSUE, subtask="reproduce"))
    log = "\n".join(f"E   AssertionError: assert compute_{i}(1) == {i}" for i in range(30))
    eng.append_message("user", log, SpanInfo(kind=SegmentKind.ERROR, subtask="reproduce"))
    eng.set_debug("reproduce")
    target = CODE.split("\n\n")[3]
    view_text = CODE + "\n\n" + target + "\n"
    at = view_text.rindex(target)
    eng.append_message("user", view_text, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="localize", language="python",
                                                   protect=((at, at + len(target)),)))
    eng.append_message("user", "Reply with the corrected definition.", SpanInfo(kind=SegmentKind.TEXT))
    t = eng.table
    protected = set(t["pos"][t["protect"]].tolist())
    issue_pos = set(t["pos"][t["kind"] == int(SegmentKind.ISSUE)].tolist())
    pinned_before = int((t["state"] == int(State.PINNED)).sum())
    budget = len(protected) + len(issue_pos) + 60
    eng.manager.enforce(eng.state, budget=budget)
    t = eng.table
    kept = set(t["pos"].tolist())
    assert len(t) <= budget
    assert protected <= kept and issue_pos <= kept
    assert int((t["state"] == int(State.PINNED)).sum()) < pinned_before  # other pins gave way


def test_continuations_are_a_header_s_lines_after_its_first_raw_or_json_escaped(make_engine):
    """A header's parameter lines and closing line continue it, the line holding its name does not, in a file view
    and in the same file inside a JSON string (where ``\\\\ndef`` is one token that ends the line above)."""
    params = "".join(f"    option_{i}: int = {i},\n" for i in range(3))
    code = (f"import os\n\n\ndef helper(path: str) -> str:\n    return os.fspath(path)\n\n\n"
            f"def configure(\n{params}) -> None:\n")
    for text, info in ((code, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python")),
                       (json.dumps({"output": code}), SpanInfo(kind=SegmentKind.TOOL_OUTPUT))):
        eng = make_engine(policy="default", min_tokens=0)
        eng.append_message("user", text, info)
        t = eng.table
        units = line_units(CacheView.of(eng.state), (t["state"] == int(State.PINNED)).nonzero()[:, 0])
        lines = [eng.tok.decode(t["token"][u].tolist()).strip(" \\\n") for u in units]
        later = dict(zip(lines, continuations(t, units)))
        heads = [k for k in later if "helper(path" in k or "configure(" in k]
        assert len(heads) == 2 and not any(later[k] for k in heads)
        assert [later[f"option_{i}: int = {i},"] for i in range(3)] == [True] * 3 and later[") -> None:"] is True
