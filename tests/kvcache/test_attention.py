"""The attention hook: log(n) bias for merged slots, and statistics."""

from __future__ import annotations

import math
from types import SimpleNamespace

import torch

from codeagent.kvcache.attention import AttentionContext, codeagent_attention


def _module(layer_idx=0, groups=3):
    return SimpleNamespace(layer_idx=layer_idx, num_key_value_groups=groups, is_causal=True, training=False)


def test_merging_n_identical_slots_with_log_n_bias_equals_the_originals():
    torch.manual_seed(0)
    hq, hkv, d, n = 6, 2, 16, 5
    q = torch.randn(1, hq, 1, d)
    base_k = torch.randn(1, hkv, 4, d)
    base_v = torch.randn(1, hkv, 4, d)
    dup_k, dup_v = torch.randn(1, hkv, 1, d), torch.randn(1, hkv, 1, d)
    # n copies of one slot among 4 others
    k_orig = torch.cat([base_k[:, :, :2], dup_k.expand(1, hkv, n, d), base_k[:, :, 2:]], dim=2)
    v_orig = torch.cat([base_v[:, :, :2], dup_v.expand(1, hkv, n, d), base_v[:, :, 2:]], dim=2)
    ctx_orig = AttentionContext(log_count=None, window=1)
    out_orig, _ = codeagent_attention(_module(), q, k_orig, v_orig, None, codeagent=ctx_orig)
    # the same, with the copies merged into one slot of count n
    k_m = torch.cat([base_k[:, :, :2], dup_k, base_k[:, :, 2:]], dim=2)
    v_m = torch.cat([base_v[:, :, :2], dup_v, base_v[:, :, 2:]], dim=2)
    counts = torch.tensor([1.0, 1.0, float(n), 1.0, 1.0])
    ctx_m = AttentionContext(log_count=torch.log(counts), window=1)
    out_m, _ = codeagent_attention(_module(), q, k_m, v_m, None, codeagent=ctx_m)
    assert torch.allclose(out_orig, out_m, atol=1e-5)
    # the merged slot draws exactly the attention of the n copies together
    mass_orig = ctx_orig.mass[0][:, 2:2 + n].sum(-1)
    assert torch.allclose(ctx_m.mass[0][:, 2], mass_orig, atol=1e-5)
    # without the bias it would not
    out_nobias, _ = codeagent_attention(_module(), q, k_m, v_m, None, codeagent=AttentionContext(None, 1))
    assert not torch.allclose(out_orig, out_nobias, atol=1e-3)


def test_statistics_use_only_the_last_window_queries_and_respect_causality():
    torch.manual_seed(1)
    hq, hkv, d, t, w = 4, 2, 8, 10, 3
    q, k, v = torch.randn(1, hq, t, d), torch.randn(1, hkv, t, d), torch.randn(1, hkv, t, d)
    ctx = AttentionContext(log_count=None, window=w)
    codeagent_attention(_module(groups=2), q, k, v, None, codeagent=ctx)
    mass = ctx.mass[0]
    assert mass.shape == (hq, t) and ctx.queries == w
    assert torch.allclose(mass.sum(-1), torch.full((hq,), float(w)))
    # only the last w queries observed; keys after a query get nothing from it
    kk = k.repeat_interleave(2, dim=1)
    scores = (q[0, :, -w:] @ kk[0].transpose(-1, -2)) / math.sqrt(d)
    mask = torch.arange(t)[None, :] <= torch.arange(t - w, t)[:, None]
    probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)
    assert torch.allclose(mass, probs.sum(1), atol=1e-5)
