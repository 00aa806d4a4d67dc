"""Twin lines: the lines after the earlier stretch the newest lines repeat."""

from __future__ import annotations

import torch

from codeagent.kvcache.tags import SegmentKind, SpanInfo, State
from codeagent.kvcache.twins import twin_rows
from codeagent.kvcache.uses import line_keys

FILLER = "".join(f"value_{i} = compute_{i}(base, {i})\n" for i in range(10))

BASE = """class Base:
    def message(self) -> str:
        if self.hint is not None:
            hint = self.hint
        elif self.param is not None:
            hint = self.param.error_hint()
        else:
            return f"bad value: {self.text}"

        joined = join_hints(hint)
        return f"bad value for {joined}: {self.text}"
"""

OVERRIDE = """class Missing(Base):
    def message(self) -> str:
        if self.hint is not None:
            hint: str | None = self.hint
        elif self.param is not None:
            hint = self.param.error_hint()
        else:
            hint = None
"""


def line_tokens(text: str) -> tuple[list[str], torch.Tensor, torch.Tensor, dict[int, frozenset[str]]]:
    """``text`` as one token per line: the lines, their keys, end-of-line flags and the keys' identifiers."""
    rows = text.splitlines(keepends=True)
    offsets, at = [], 0
    for r in rows:
        offsets.append((at, at + len(r)))
        at += len(r)
    keys, _counts, words = line_keys(text, offsets)
    return rows, torch.tensor(keys), torch.ones(len(rows), dtype=torch.bool), words


def test_the_lines_after_an_overridden_methods_twin_are_found_from_its_newest_matched_line():
    rows, keys, eol, words = line_tokens(BASE + FILLER + OVERRIDE)
    got = [rows[i].strip() for i in twin_rows(keys, eol, words, follow=2).tolist()]
    # the last line differs (the code being written): the twin's counterpart of it and the line after come back
    assert got == ['return f"bad value: {self.text}"', "joined = join_hints(hint)"]
    got = [rows[i].strip() for i in twin_rows(keys, eol, words, follow=1).tolist()]
    assert got == ['return f"bad value: {self.text}"']


def test_no_twin_without_enough_informative_matches():
    rows, keys, eol, words = line_tokens(BASE + FILLER + OVERRIDE)
    assert twin_rows(keys, eol, words, follow=0).numel() == 0
    # lines of one identifier (else:, try:, pass) say nothing: a tail matching only those has no twin
    plain = "try:\n    pass\nelse:\n    pass\n"
    rows, keys, eol, words = line_tokens(plain + FILLER + plain.replace("try", "while running") + "done = True\n")
    assert twin_rows(keys, eol, words, follow=2).numel() == 0
    rows, keys, eol, words = line_tokens(FILLER + FILLER.replace("base", "other"))
    assert twin_rows(keys, eol, words, follow=2).numel() == 0
    for lines in range(0, 18):  # too few lines for a stretch before the newest: none, never an error
        rows, keys, eol, words = line_tokens("".join((OVERRIDE * 3).splitlines(True)[:lines]))
        assert twin_rows(keys, eol, words, follow=2).numel() == 0 or lines >= 16


def test_pin_twin_lines_keeps_what_followed_the_twin_past_the_budget(make_engine):
    """Read as a view, then brought to a budget of a fifth of the cache: with ``pin_twin_lines`` the line after the
    twin (``joined = join_hints(hint)``) is pinned and stays; without it the line goes. Once the newest lines have
    moved on (more code, no twin), the next enforce returns that pin to the active state."""
    kept = {}
    for follow in (0, 2):
        eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8, pin_twin_lines=follow)
        eng.append_message("user", "Finish the override.", SpanInfo(kind=SegmentKind.ISSUE))
        eng.append_message("user", BASE + FILLER + OVERRIDE, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        eng.manager.enforce(eng.state, budget=len(eng.table) // 5)
        t = eng.table
        kept[follow] = eng.tok.decode(t["token"].tolist())
        if follow:
            twin = eng.tok.decode(t["token"][t["twin"] & (t["state"] == int(State.PINNED))].tolist())
            assert "joined = join_hints(hint)" in twin
            eng.append_message("user", FILLER.replace("base", "other"), SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
            eng.manager.enforce(eng.state, budget=len(eng.table) - 4)
            t = eng.table
            assert not bool(t["twin"].any())
            assert "join_hints(hint)" not in eng.tok.decode(t["token"][t["state"] == int(State.PINNED)].tolist())
    assert "joined = join_hints(hint)" in kept[2] and "join_hints(hint)" not in kept[0]
