"""gather and merge on a real cache: tensors and slot table move together."""

from __future__ import annotations

import pytest
import torch

from codeagent.kvcache.ops import apply_plan
from codeagent.protocols import CompressionPlan


@pytest.fixture
def engine(make_engine, code_ids):
    eng = make_engine()
    eng.append_tokens(code_ids[:64])
    return eng


def test_merge_is_a_weighted_average_with_summed_count(engine):
    k0 = engine.cache.layers[3].keys.clone()
    v0 = engine.cache.layers[3].values.clone()
    pos0 = engine.table["pos"].clone()
    plan = CompressionPlan(keep=[i for i in range(64) if i not in (10, 11, 12, 40)],
                           merge=[([10, 11, 12], [1.0, 1.0, 2.0])])
    res = apply_plan(engine.cache, engine.table, plan)
    assert (res.before, res.after, res.dropped, res.merged, res.groups) == (64, 61, 1, 3, 1)
    t = engine.table
    j = int((t["pos"] == pos0[12]).nonzero()[0, 0])  # merged slot sits at its last member's position
    assert float(t["count"][j]) == 3.0
    expect_k = (k0[:, :, 10] + k0[:, :, 11] + 2 * k0[:, :, 12]) / 4
    expect_v = (v0[:, :, 10] + v0[:, :, 11] + 2 * v0[:, :, 12]) / 4
    assert torch.allclose(engine.cache.layers[3].keys[:, :, j], expect_k, atol=1e-6)
    assert torch.allclose(engine.cache.layers[3].values[:, :, j], expect_v, atol=1e-6)
    assert int((t["pos"] == pos0[40]).sum()) == 0  # dropped
    t.check()
    for layer in engine.cache.layers:
        assert layer.keys.shape[2] == len(t) == layer.values.shape[2]
    assert engine.kv_bytes() == 61 * engine.bytes_per_slot()


def test_a_plan_may_not_use_a_slot_twice(engine):
    with pytest.raises(ValueError):
        apply_plan(engine.cache, engine.table, CompressionPlan(keep=[1, 2], merge=[([2, 3], [1, 1])]))


def test_decoding_continues_after_merges(engine):
    plan = CompressionPlan(keep=list(range(0, 20)) + list(range(40, 64)),
                           merge=[(list(range(20, 30)), [1.0] * 10), (list(range(30, 40)), [1.0] * 10)])
    apply_plan(engine.cache, engine.table, plan)
    assert engine.table.log_count() is not None
    engine.append_tokens([198, 1370, 4093])
    gen = engine.generate(5)
    assert len(gen.token_ids) == 5 and torch.isfinite(engine.last_logits).all()
    engine.table.check()
