"""Policies as dataclasses built by name from the ``kv`` settings; the lifecycle as a wrapper."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from codeagent.errors import InputError
from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.codecomp import CodeComp
from codeagent.kvcache.policies.commitkv import AttentionRecency
from codeagent.kvcache.policies.h2o import H2O
from codeagent.kvcache.policies.lifecycle import Lifecycle
from codeagent.kvcache.policies.snapkv import SnapKV
from codeagent.kvcache.registry import build_policy, policy_names
from codeagent.kvcache.tags import SegmentKind, SpanInfo, State


def test_every_registered_policy_is_a_dataclass_built_from_the_settings():
    names = policy_names()
    assert names[0] == "full" and {"default", "commitkv", "codecomp", "window", "h2o", "snapkv", "tova"} <= set(names)
    for name in names:
        policy = build_policy(KVConfig(policy=name))
        assert dataclasses.is_dataclass(policy), name
        assert isinstance(policy.needs_attention, bool) and isinstance(policy.compresses, bool)


def test_knobs_come_from_the_settings_of_the_same_name():
    cfg = KVConfig(policy="default", pool_kernel=5, keep_fraction=0.4, recent_tokens=9, pinned_cap=0.3,
                   summary_entries=2, block_weights={"function_signature": 2.0})
    default = build_policy(cfg)
    assert isinstance(default, Lifecycle) and isinstance(default.base, CodeComp)
    assert (default.pinned_cap, default.summary_entries, default.ranking) == (0.3, 2, "factor")
    assert (default.base.pool_kernel, default.base.keep_fraction, default.base.recent_tokens) == (5, 0.4, 9)
    assert default.base.block_weights == {"function_signature": 2.0}
    assert build_policy(cfg, "snapkv") == SnapKV(sink_tokens=4, recent_tokens=9, pool_kernel=5)
    commitkv = build_policy(cfg, "commitkv")
    assert isinstance(commitkv.base, AttentionRecency) and commitkv.ranking == "priority"


def test_unknown_policy_is_one_line_error():
    with pytest.raises(InputError, match="unknown policy 'nope'"):
        build_policy(KVConfig(policy="nope"))


def test_lifecycle_wraps_any_policy(make_engine):
    """Lifecycle(H2O()): pinned signatures survive a budget H2O alone is free to spend elsewhere."""
    from codeagent.kvcache.manager import KVManager

    src = "import os\n\n\ndef fetch(url, retries=3):\n    return url\n\n\n" + "total += 1\n" * 300  # not a binding
    eng = make_engine(policy="h2o", min_tokens=0)
    eng.manager = KVManager(eng.kv_cfg, Lifecycle(H2O(recent_tokens=8), fold_commits="eager", min_tokens=0))
    eng.append_message("tool", src, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="s1", language="python"))
    pinned = eng.table["pos"][eng.table["state"] == int(State.PINNED)]
    assert pinned.numel() > 0
    eng.commit("s1")  # eager: folded into summaries by the wrapper
    assert bool((eng.table["count"] > 1).any())
    eng.manager.enforce(eng.state, budget=pinned.numel() + 16)
    assert set(pinned.tolist()) <= set(eng.table["pos"].tolist())
    assert len(eng.table) <= pinned.numel() + 16


def test_state_ranking_orders_slots_by_lifecycle_state(make_engine, code_ids):
    eng = make_engine(policy="commitkv", min_tokens=0)
    eng.append_tokens(code_ids[:64])
    view = eng.manager.view(eng.state)
    eng.table.cols["state"][:32] = int(State.COMMITTED)
    priority = Lifecycle(AttentionRecency(), ranking="priority").scores(view)
    assert float(priority[:32].max()) < float(priority[32:].min())  # every committed slot below every active one
    factor = Lifecycle(AttentionRecency(), ranking="factor").scores(view)
    assert torch.allclose(factor[:32], 0.5 * AttentionRecency().scores(view)[:32])


def test_policy_defaults_are_the_settings_defaults():
    """A knob a policy dataclass shares with ``KVConfig`` has one default: the policy built in code (``CodeComp()``)
    and the one built from untouched settings behave alike, and changing a default means changing both."""
    import importlib
    import pkgutil

    import codeagent.kvcache.policies as package

    settings = KVConfig()
    classes = {obj for info in pkgutil.iter_modules(package.__path__)
               for obj in vars(importlib.import_module(f"{package.__name__}.{info.name}")).values()
               if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__.startswith(package.__name__)}
    assert {CodeComp, Lifecycle, SnapKV, H2O} <= classes
    checked = 0
    for cls in classes:
        for f in dataclasses.fields(cls):
            if f.init and f.name in KVConfig.model_fields:
                default = f.default_factory() if f.default is dataclasses.MISSING else f.default
                assert default == getattr(settings, f.name), (cls.__name__, f.name)
                checked += 1
    assert checked >= 20
