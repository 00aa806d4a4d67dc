"""The cache map shows what survived where."""

from __future__ import annotations

from rich.console import Console

from codeagent.kvcache.render import GONE_GLYPH, MERGED_GLYPH, cache_map, render_cache
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import CompressionPlan


def test_map_marks_dropped_and_merged_stretches(make_engine, code_ids):
    eng = make_engine(policy="default", min_tokens=0, budget_tokens=4096)
    eng.append_message("user", "Fix the decoder.", SpanInfo(kind=SegmentKind.ISSUE))
    eng.append_tokens(code_ids[:300], info=SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s1"))
    n = len(eng.table)
    keep = list(range(0, 100)) + list(range(200, n))
    eng.manager._apply(eng.state, CompressionPlan(keep=keep, merge=[(list(range(100, 150)), [1.0] * 50)]), "test")
    text = cache_map(eng, width=n).plain
    assert len(text) == n
    assert GONE_GLYPH * 40 in text  # 150..199 dropped
    assert MERGED_GLYPH in text
    con = Console(record=True, width=120)
    con.print(render_cache(eng, width=100))
    out = con.export_text()
    assert "slots" in out and "tokens dropped" in out and "file_view" in out
    assert f"{len(eng.table)}/4096 slots" in out
