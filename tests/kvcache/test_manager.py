"""The KV manager's invariants over random sessions (hypothesis), and its lifecycle transitions.

The property tests drive the real engine, tokenizer, tagger and policies around a tiny randomly
initialised Llama (same code path as the embedded model, 100x cheaper), since the invariants do
not depend on what the model knows.
"""

from __future__ import annotations

import json
import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeagent.kvcache.config import KVConfig, ModelConfig
from codeagent.kvcache.engine import Engine
from codeagent.kvcache.models import LoadedModel
from codeagent.kvcache.ops import apply_plan
from codeagent.kvcache.registry import POLICIES, load_policies
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo, State

load_policies()

PY = '''import os
from typing import Any


def fetch(url: str, retries: int = 3, backoff: float = 0.5) -> bytes:
    """Fetch a URL."""
    for attempt in range(retries):
        if attempt:
            sleep(backoff * attempt)
    return b""


class Client:
    def get(self, path, *, timeout=None):
        # ask the server
        return self.session.get(path, timeout=timeout)
'''
LOG = '''============================= test session starts ==============================
collected 3 items

tests/test_client.py ..F                                                  [100%]
Traceback (most recent call last):
  File "tests/test_client.py", line 12, in test_get
    assert client.get("/x") == 1
AssertionError: assert None == 1
FAILED tests/test_client.py::test_get - AssertionError
'''
TEXT = "1. Read the client.\n2. Fix the retry loop.\n3. Run the tests and make sure they pass.\n"

SEGMENTS = [
    ("user", SegmentKind.ISSUE, "The client retries forever when the server is down. Make retries stop.", None),
    ("assistant", SegmentKind.PLAN, TEXT, None),
    ("tool", SegmentKind.FILE_VIEW, PY, "python"),
    ("tool", SegmentKind.TEST_LOG, LOG, None),
    ("assistant", SegmentKind.CODE, "```python\n" + PY.split("\n\n\n")[1] + "\n```\n", None),
    ("assistant", SegmentKind.TEXT, "The loop never ends because attempt is never checked.", None),
]


@pytest.fixture(scope="module")
def tiny(loaded):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=loaded.model.config.vocab_size, hidden_size=64, intermediate_size=128,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=8192, eos_token_id=2, bos_token_id=1)
    model = LlamaForCausalLM(cfg).eval()
    return LoadedModel(model=model, tokenizer=loaded.tokenizer, source="tiny")


op = st.one_of(
    st.tuples(st.just("append"), st.integers(0, len(SEGMENTS) - 1), st.sampled_from(["s1", "s2", "s3", None])),
    st.tuples(st.just("commit"), st.sampled_from(["s1", "s2", "s3"]), st.none()),
    st.tuples(st.just("debug"), st.sampled_from(["s1", None]), st.none()),
    st.tuples(st.just("generate"), st.integers(1, 6), st.none()),
)


def _check_plan_blocks(engine, seen_violations):
    """Wrap the manager's apply so every merge group is checked to stay within one block."""
    mgr = engine.manager
    orig = mgr._apply

    def checked(state, plan, why):
        blocks = state.table["block_id"]
        for members, _ in plan.merge:
            if len({int(blocks[m]) for m in members}) != 1:
                seen_violations.append((why, members))
        orig(state, plan, why)

    mgr._apply = checked


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    policy=st.sampled_from(POLICIES.names()),
    mode=st.sampled_from(["selective", "merge", "hybrid"]),
    budget=st.integers(48, 400),
    merge_threshold=st.sampled_from([-1.0, 0.0, 0.5, 0.9]),
    fold=st.sampled_from(["eager", "pressure"]),
    unit=st.sampled_from(["token", "line"]),
    overflow=st.sampled_from(["merge_oldest", "release_lowest", "evict_lowest"]),
    ops=st.lists(op, min_size=3, max_size=14),
)
def test_budget_pins_and_consistency_hold_over_random_sessions(tiny, policy, mode, budget, merge_threshold, fold, unit,
                                                               overflow, ops):
    cfg = KVConfig(policy=policy, mode=mode, budget_tokens=budget, min_tokens=0, merge_threshold=merge_threshold,
                   sink_tokens=4, recent_tokens=16, pinned_cap=0.5, fold_commits=fold, unit=unit,
                   pinned_overflow=overflow)
    eng = Engine(tiny, ModelConfig(prefill_chunk=128, obs_window=8), cfg)
    violations: list = []
    _check_plan_blocks(eng, violations)
    for kind, a, b in ops:
        if kind == "append":
            role, seg_kind, text, lang = SEGMENTS[a]
            eng.append_message(role, text, SpanInfo(kind=seg_kind, subtask=b, language=lang))
        elif kind == "commit":
            eng.commit(a)
        elif kind == "debug":
            eng.set_debug(a)
        elif kind == "generate" and eng.last_logits is not None:
            eng.start_assistant()
            eng.generate(a)
            eng.end_assistant()
        t = eng.table
        t.check()  # columns agree, positions strictly increasing
        for layer in eng.cache.layers if len(t) else []:
            assert layer.keys.shape[2] == len(t) == layer.values.shape[2]
        if policy != "full":
            assert len(t) <= budget, f"{len(t)} slots for budget {budget}"
        assert not violations, f"merge across blocks: {violations[:2]}"
    if policy in ("commitkv", "default"):
        # pinned signature tokens survive (unless the pinned cap had to fold them, which is reported)
        pinned_sig = ((t["block_type"] == int(BlockType.FUNCTION_SIGNATURE)) & (t["state"] == int(State.PINNED))).sum()
        appended_view = any(k == "append" and SEGMENTS[x][1] == SegmentKind.FILE_VIEW for k, x, _ in ops)
        if appended_view and eng.state.counters.pinned_overflow == 0:
            assert int(pinned_sig) > 0


def test_module_constants_are_pinned_with_the_signatures(make_engine):
    """A module-level constant is part of the file's interface: its line is pinned and outlives a compression
    that drops the function bodies around it; a local assignment in a body is not pinned."""
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8)
    body = "".join(f"    total += {i} * step\n" for i in range(40))
    view = f"import os\n\nRETRY_LIMIT = 20\n\ndef spin(step):\n    total = 0\n{body}    return total\n\nx = 1\n"
    eng.append_message("user", view, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    pinned = eng.tok.decode(eng.table["token"][eng.table["state"] == int(State.PINNED)].tolist())
    assert "RETRY_LIMIT = 20" in pinned and "def spin(step):" in pinned and "total = 0" not in pinned
    eng.manager.enforce(eng.state, budget=len(eng.table) // 3)
    kept = eng.tok.decode(eng.table["token"].tolist())
    assert "RETRY_LIMIT = 20" in kept and "total += 5 * step" not in kept


def test_short_function_bodies_are_pinned_with_their_header(make_engine):
    """A function whose body is one or two code lines (docstring aside) is code copied whole, so its body is
    pinned with the header; a longer body is not, and with ``pin_short_bodies=0`` neither is."""
    body = "".join(f"    total += {i} * step\n" for i in range(12))
    view = ("import math\n\n"
            "def hermite(ctx, n, z):\n    \"\"\"The Hermite function.\"\"\"\n"
            "    return ctx.hypercomb(lambda: _hermite_param(ctx, n, z, 0), [])\n\n"
            f"def spin(step):\n    total = 0\n{body}    return total\n\n"
            "class Box:\n    @property\n    def area(self):\n        return self.w * self.h\n\n"
            "x = 1\n")
    info = SpanInfo(kind=SegmentKind.FILE_VIEW, language="python")

    def pinned_text(n: int) -> str:
        eng = make_engine(policy="default", min_tokens=0, pin_short_bodies=n)
        eng.append_message("user", view, info)
        return eng.tok.decode(eng.table["token"][eng.table["state"] == int(State.PINNED)].tolist())

    on, off = pinned_text(2), pinned_text(0)
    for header in ("def hermite(ctx, n, z):", "def spin(step):", "def area(self):"):
        assert header in on and header in off
    assert "_hermite_param(ctx, n, z, 0)" in on and "return self.w * self.h" in on
    assert "total = 0" not in on and "total += 5 * step" not in on and "return total" not in on
    assert "_hermite_param" not in off and "self.w * self.h" not in off
    assert "The Hermite function" not in on
    # the same file in a JSON tool result: its escaped line breaks end lines, so the body is found there too
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_message("tool", json.dumps({"output": view}), SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    pinned = eng.tok.decode(eng.table["token"][eng.table["state"] == int(State.PINNED)].tolist())
    assert "_hermite_param(ctx, n, z, 0)" in pinned and "total += 5 * step" not in pinned


def test_a_short_body_pin_holds_its_code_not_the_views_prefix(make_engine):
    """In a view whose lines carry a prefix (`git blame -s`: a commit hash and the line number), a short body's
    pin covers the code of its lines; the prefix stays unpinned, scored like any other untagged token."""
    code = ("import math\n\nclass Box:\n    @property\n    def area(self):\n        return self.w * self.h\n\n"
            "def spin(step):\n    total = 0\n" + "".join(f"    total += {i} * step\n" for i in range(8))
            + "    return total\n")
    lines = code.splitlines()
    hashes = [f"{0xc0de000 + 97 * n:07x}" for n in range(len(lines))]
    view = "".join(f"{h} {n + 1:>3}) {line}\n" for n, (h, line) in enumerate(zip(hashes, lines)))
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_message("tool", view, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    pinned = eng.tok.decode(eng.table["token"][eng.table["state"] == int(State.PINNED)].tolist())
    body = lines.index("        return self.w * self.h")
    assert "return self.w * self.h" in pinned and "def area(self):" in pinned
    assert hashes[body] not in pinned and hashes[body][:5] not in pinned


def test_a_methods_short_body_is_pinned_in_a_numbered_view(make_engine):
    """In a `cat -n` view the indent after a line's number is a token of its own; it reads as the line's code, so
    a method's header is a header there as in the raw file and its short body is pinned (a view's numbers stay out)."""
    code = ("class Box:\n    def __init__(self, w, h):\n        self.w, self.h = w, h\n\n    def area(self):\n"
            "        return self.w * self.h\n\n    def grow(self, k):\n" + "".join(f"        self.w += {i} * k\n"
                                                                              for i in range(8)) + "        return self\n")
    view = "".join(f"{n + 1:>6}\t{line}\n" for n, line in enumerate(code.splitlines()))
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_message("tool", view, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    pinned = eng.tok.decode(eng.table["token"][eng.table["state"] == int(State.PINNED)].tolist())
    assert "return self.w * self.h" in pinned and "self.w, self.h = w, h" in pinned
    assert "self.w += 3 * k" not in pinned  # a long body is not pinned


def test_pinned_slots_survive_compression(make_engine, code_ids):
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_tokens(code_ids[:400])
    protected = torch.zeros(len(eng.table), dtype=torch.bool)
    protected[50:60] = True
    eng.table.cols["state"][protected] = int(State.PINNED)
    pos = set(eng.table["pos"][protected].tolist())
    eng.manager.enforce(eng.state, budget=100)
    assert len(eng.table) <= 100
    assert pos <= set(eng.table["pos"].tolist())


def test_commit_moves_spans_and_folds_them_into_summaries(make_engine):
    eng = make_engine(policy="default", min_tokens=0, summary_entries=2, fold_commits="eager")
    eng.append_message("user", "Fix the parser.", SpanInfo(kind=SegmentKind.ISSUE))
    eng.append_message("tool", PY, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s1", language="python"))
    eng.append_message("tool", LOG, SpanInfo(kind=SegmentKind.TEST_LOG, subtask="s2"))
    t = eng.table
    s1 = eng.subtask_index("s1")
    before = int((t["subtask"] == s1).sum())
    pinned_before = int(((t["subtask"] == s1) & (t["state"] == int(State.PINNED))).sum())
    assert pinned_before > 0  # the signatures and imports of the file view
    eng.commit("s1")
    t = eng.table
    mine = t["subtask"] == s1
    states = set(t["state"][mine].tolist())
    assert states <= {int(State.COMMITTED), int(State.PINNED)}
    assert int(mine.sum()) < before  # folded into summary entries
    assert int((t["count"][mine] > 1).sum()) > 0
    assert int(((t["subtask"] == s1) & (t["state"] == int(State.PINNED))).sum()) == pinned_before
    s2 = eng.subtask_index("s2")
    assert set(t["state"][t["subtask"] == s2].tolist()) <= {int(State.ACTIVE), int(State.PINNED)}
    assert eng.stats().commits == 1


def test_pressure_folding_waits_for_the_budget_then_folds_the_oldest_commit_first(make_engine):
    def session(fold: str):
        eng = make_engine(policy="default", min_tokens=0, summary_entries=2, fold_commits=fold)
        eng.append_message("user", "Fix the parser.", SpanInfo(kind=SegmentKind.ISSUE))
        eng.append_message("tool", PY, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s1", language="python"))
        eng.append_message("tool", LOG, SpanInfo(kind=SegmentKind.TEST_LOG, subtask="s2"))
        eng.append_message("tool", PY, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s3", language="python"))
        eng.commit("s1")
        eng.commit("s2")
        return eng

    eager, lazy = session("eager"), session("pressure")
    n = len(lazy.table)
    assert n == lazy.logical and bool((lazy.table["count"] == 1).all())  # committed, nothing folded yet
    s1, s2 = lazy.subtask_index("s1"), lazy.subtask_index("s2")
    assert set(lazy.table["state"][lazy.table["subtask"] == s1].tolist()) <= {int(State.COMMITTED), int(State.PINNED)}
    assert len(eager.table) < n
    # a budget that folding s1 alone meets: s1 is folded, s2 (committed later) and s3 are untouched
    s1_rows = int((lazy.table["subtask"] == s1).sum())
    s1_after_fold = int((eager.table["subtask"] == s1).sum())
    lazy.manager.enforce(lazy.state, budget=n - (s1_rows - s1_after_fold))
    t = lazy.table
    assert int((t["subtask"] == s1).sum()) == s1_after_fold and int((t["count"][t["subtask"] == s1] > 1).sum()) > 0
    assert bool((t["count"][t["subtask"] != s1] == 1).all()) and len(t) == n - (s1_rows - s1_after_fold)
    assert [s for _, s in lazy.state.book.unfolded] == ["s2"]
    # more pressure folds s2 next, and the budget holds
    lazy.manager.enforce(lazy.state, budget=len(eager.table) - 10)
    assert len(lazy.table) <= len(eager.table) - 10 and not lazy.state.book.unfolded
    assert int((lazy.table["count"][lazy.table["subtask"] == s2] > 1).sum()) > 0


@pytest.mark.parametrize("policy,checks", [("full", False), ("h2o", True)])
def test_cold_checks_run_only_where_attention_is_observed(make_engine, code_ids, policy, checks):
    eng = make_engine(policy=policy, min_tokens=0, compression_interval=32, cold_checks=1, commit_threshold=2.0)
    for i in range(4):
        eng.append_tokens(code_ids[i * 40:(i + 1) * 40], info=SpanInfo(subtask="s1"))
    cooled = bool((eng.table["state"] != int(State.ACTIVE)).any())
    assert cooled == checks


def test_debug_round_pins_error_lines_then_releases_them(make_engine):
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_message("tool", LOG, SpanInfo(kind=SegmentKind.TEST_LOG, subtask="s1"))
    err = eng.table["block_type"] == int(BlockType.ERROR)
    assert int(err.sum()) > 5
    assert not bool((eng.table["state"][err] == int(State.PINNED)).any())
    eng.set_debug("s1")
    assert bool((eng.table["state"][err] == int(State.PINNED)).all())
    eng.set_debug(None)
    assert not bool((eng.table["state"][err] == int(State.PINNED)).any())


def test_cold_spans_move_active_staged_committed(make_engine, code_ids):
    from codeagent.kvcache import lifecycle

    eng = make_engine(policy="commitkv", min_tokens=0, cold_checks=2, commit_threshold=0.5)
    eng.append_tokens(code_ids[:200], info=SpanInfo(subtask="s1"))
    t = eng.table
    seg0 = t["seg"] == 0
    t.stats["attn_dec"][:, :, seg0] = 0.0  # the span draws no attention any more
    t.stats["attn_dec"][:, :, ~seg0] = 1.0
    eng.append_tokens(code_ids[200:220])
    t.stats["attn_dec"][:, :, t["seg"] == 0] = 0.0
    seen = []
    for _ in range(4):  # two cold checks per transition
        seen.append(set(t["state"][t["seg"] == 0].tolist()) - {int(State.PINNED)})
        lifecycle.cold_check(t, eng.kv_cfg)
    seen.append(set(t["state"][t["seg"] == 0].tolist()) - {int(State.PINNED)})
    a, s, c = int(State.ACTIVE), int(State.STAGED), int(State.COMMITTED)
    assert seen == [{a}, {a}, {s}, {s}, {c}]
    # the span still drawing attention stayed active
    assert set(t["state"][t["seg"] == 1].tolist()) - {int(State.PINNED)} == {a}


def test_pinned_cap_merges_the_oldest_and_reports_it(make_engine, code_ids):
    eng = make_engine(policy="default", min_tokens=0, pinned_cap=0.1)
    eng.append_tokens(code_ids[:300])
    eng.table.cols["state"][:] = int(State.PINNED)
    eng.table.cols["block_id"][:] = 7
    eng.manager.enforce(eng.state, budget=200)
    assert eng.state.counters.pinned_overflow > 0
    assert any(e["why"] == "pinned-cap" for e in eng.state.counters.events)


def test_plan_rejects_out_of_range(make_engine, code_ids):
    from codeagent.protocols import CompressionPlan

    eng = make_engine()
    eng.append_tokens(code_ids[:10])
    with pytest.raises(ValueError):
        apply_plan(eng.cache, eng.table, CompressionPlan(keep=[0, 99]))


def test_pinned_cap_can_release_the_lowest_scoring(make_engine, code_ids):
    eng = make_engine(policy="default", min_tokens=0, pinned_cap=0.1, pinned_overflow="release_lowest")
    eng.append_tokens(code_ids[:300])
    eng.table.cols["state"][:] = int(State.PINNED)
    eng.manager.enforce(eng.state, budget=200)
    assert len(eng.table) <= 200
    released = eng.state.counters.pinned_overflow
    assert 300 - 20 <= released < 300  # whole lines: at most one line more than the excess
    assert int((eng.table["state"] == int(State.PINNED)).sum()) <= 20
    still = eng.table["state"] == int(State.PINNED)  # what stays pinned is whole lines: it ends at a line end
    ends = eng.table["eol"][still]  # (a line-end token may carry the next line's indent: "\n       ")
    assert not bool(still.any()) or bool(ends[-1]) or bool(still[-1])
    assert any(e["why"] == "pinned-cap" and e.get("released") for e in eng.state.counters.events)


@pytest.mark.parametrize("overflow", ["release_lowest", "evict_lowest"])
def test_pinned_cap_evict_lowest_drops_released_lines_before_live_slots(make_engine, code_ids, overflow):
    """evict_lowest: the lines past the cap go before any slot that was never pinned (released_lowest lets them
    compete token by token, so fragments of them stay and live slots go instead)."""
    eng = make_engine(policy="default", min_tokens=0, pinned_cap=0.1, pinned_overflow=overflow)
    eng.append_tokens(code_ids[:300])
    eng.table.cols["state"][:150] = int(State.PINNED)
    live = set(eng.table["pos"][150:].tolist())
    eng.manager.enforce(eng.state, budget=220)
    kept = set(eng.table["pos"].tolist())
    live_lost = len(live - kept)
    if overflow == "evict_lowest":
        assert live_lost == 0
    else:
        assert live_lost > 0


def test_observation_window_share_changes_the_semantic_term(make_engine, code_ids):
    from codeagent.kvcache.scoring import semantic

    eng = make_engine(policy="default", min_tokens=0)
    eng.append_tokens(code_ids[:200])
    view = eng.manager.view(eng.state)
    base = semantic(view, obs_weight=eng.kv_cfg.obs_weight)
    mixed = semantic(view, obs_weight=1.0)
    assert mixed.shape == base.shape and not torch.allclose(mixed, base)
    assert float(mixed.min()) >= 0.0 and float(mixed.max()) <= 1.0


def _enforce_short_of_pins(eng, view: str, short: int) -> tuple[int, int, str]:
    """Append ``view`` as a Python file view and bring the cache to ``short`` slots under what must stay (the pins,
    the sinks and the recent window): (the pinned slots before, that budget, the kept text)."""
    eng.append_message("user", view, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    t = eng.table
    pinned, edges = t["state"] == int(State.PINNED), eng.manager.policy.edges(eng.manager.view(eng.state))
    budget = int((pinned | edges).sum()) - short
    eng.manager.enforce(eng.state, budget=budget)
    return int(pinned.sum()), budget, eng.tok.decode(eng.table["token"].tolist())


def test_pins_past_the_room_the_recent_window_leaves_give_way_by_use_in_whole_lines(make_engine):
    """When the pins under the cap and the recent window together are past the budget, the cap releases whole lines,
    the least used first: the constant the code uses stays whole, and no pinned line keeps only its tail (before,
    the overflow was cut by position, oldest first, token by token: ``LIMIT_0`` to ``LIMIT_2 =`` went, `` 2``
    stayed)."""
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=48, pinned_cap=1.0)
    consts = "".join(f"LIMIT_{i} = {i}\n" for i in range(30))
    uses = "".join(f"    total += LIMIT_0 * {i}\n" for i in range(4))
    view = f"{consts}\n\ndef spin(step):\n    total = 0\n{uses}    return total\n"
    pinned, budget, kept = _enforce_short_of_pins(eng, view, 20)
    assert pinned <= budget  # under the cap: only the room the window leaves is short
    assert "LIMIT_0 = 0" in kept
    pairs = re.findall(r"(?:LIMIT_(\d+))? = (\d+)", kept[:kept.index("def spin")])  # (name's number, value)
    assert 0 < len(pairs) < 30 and all(n == v for n, v in pairs), pairs


@pytest.mark.parametrize("continuations", [True, False])
def test_pinned_cap_releases_a_header_s_continuation_lines_before_whole_definitions(make_engine, continuations):
    """A signature written one parameter per line: past the cap its parameter lines go first and the line holding
    its name stays, and so does a module binding used once, which by use count alone goes before them."""
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=32, pinned_cap=1.0,
                      release_continuations=continuations)
    params = "".join(f"    option_{i}: int = {i},\n" for i in range(12))
    body = "".join(f"    total_{i} = option_{i} + option_{i + 1}\n" for i in range(8))
    view = f"handler_func = print\n\n\ndef configure(\n{params}) -> None:\n    handler_func(option_0)\n{body}"
    kept = _enforce_short_of_pins(eng, view, 20)[2]
    assert "def configure(" in kept and len(re.findall(r"option_\d+: int = \d+,", kept)) < 12
    assert ("handler_func = print" in kept) == continuations
