"""Rare uses: the newest line using a definition the session uses once ranks above the other unpinned slots."""

from __future__ import annotations

import torch

from codeagent.kvcache.rare_uses import rare_use_ranks
from codeagent.kvcache.tags import SegmentKind, SpanInfo, State
from tests.kvcache.test_twins import line_tokens

HELPERS = '''def _call_if_exists(parent, attr):
    func = getattr(parent, attr, lambda: None)
    func()


LIMIT = 4096


'''
FILLER = "".join(f"        value_{i} = compute_{i}(base, {i}) + offset_{i}\n" for i in range(40))
METHOD = '''class Suite:
    def run(self, result):
        _call_if_exists(result, '_setupStdout')
        size = min(len(self.tests), LIMIT)
        base = 0
''' + FILLER + '''        try:
            self.run_all(result)
        finally:
'''


def test_the_newest_use_of_each_rare_name_ranks_newest_first():
    rows, keys, _eol, words = line_tokens(HELPERS + METHOD + "        size = LIMIT\n")
    body = torch.tensor([not r.startswith(("def ", "LIMIT =")) for r in rows])
    ranks = rare_use_ranks(keys, body, words, {"_call_if_exists", "LIMIT"}).tolist()
    got = sorted(((r, rows[i].strip()) for i, r in enumerate(ranks) if r), reverse=True)
    # LIMIT's newest use is the last line (not the older ``min(..., LIMIT)``); the call ranks after it
    assert got == [(2, "size = LIMIT"), (1, "_call_if_exists(result, '_setupStdout')")]
    # only candidate rows count: without the last line LIMIT falls back to its older use
    body[-1] = False
    ranks = rare_use_ranks(keys, body, words, {"LIMIT"}).tolist()
    assert [rows[i].strip() for i, r in enumerate(ranks) if r] == ["size = min(len(self.tests), LIMIT)"]
    assert not rare_use_ranks(keys, body, words, set()).any()
    assert not rare_use_ranks(keys, torch.zeros_like(body), words, {"LIMIT"}).any()


def test_a_line_using_two_rare_names_ranks_once():
    rows, keys, _eol, words = line_tokens(HELPERS + "_call_if_exists(LIMIT, 'x')\n" + FILLER)
    ranks = rare_use_ranks(keys, torch.ones(len(rows), dtype=torch.bool), words, {"_call_if_exists", "LIMIT"})
    assert sorted(set(ranks.tolist())) == [0, 1]
    assert [rows[i].strip() for i in ranks.nonzero()[:, 0].tolist()] == ["_call_if_exists(LIMIT, 'x')"]


def test_lift_rare_uses_keeps_the_one_call_of_a_helper_past_the_budget(make_engine):
    """A view brought to a budget of a fifth of the cache: with ``lift_rare_uses`` the one call of the helper
    (``_call_if_exists(result, '_setupStdout')``), far above the newest lines, stays; without it the call goes
    while the helper's header stays pinned either way. The ranks are cleared by the next enforce."""
    kept = {}
    for lift in (0, 1):
        eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=16, lift_rare_uses=lift)
        eng.append_message("user", "Finish the method.", SpanInfo(kind=SegmentKind.ISSUE))
        eng.append_message("user", HELPERS + METHOD, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        eng.manager.enforce(eng.state, budget=len(eng.table) // 5)
        t = eng.table
        kept[lift] = eng.tok.decode(t["token"].tolist())
        pinned = eng.tok.decode(t["token"][t["state"] == int(State.PINNED)].tolist())
        assert "def _call_if_exists(parent, attr):" in pinned
        if lift:
            assert "_call_if_exists(result, '_setupStdout')" in eng.tok.decode(t["token"][t["rare"] > 0].tolist())
            eng.manager.enforce(eng.state, budget=len(eng.table) - 4)
            assert int(eng.table["rare"].max()) > 0  # ranked again: the call is still the helper's one use
            eng.append_message("user", "        _call_if_exists(result, '_restoreStdout')\n" + FILLER,
                               SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
            eng.manager.enforce(eng.state, budget=len(eng.table) - 4)
            assert "_setupStdout" not in eng.tok.decode(eng.table["token"][eng.table["rare"] > 0].tolist())
    assert "_call_if_exists(result, '_setupStdout')" in kept[1]
    assert "_call_if_exists(result, '_setupStdout')" not in kept[0]
