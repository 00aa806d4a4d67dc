"""The attention hook: log(n) bias for merged slots, and statistics."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
import torch

from codeagent.kvcache.attention import STATS_BLOCK, AttentionContext, codeagent_attention


def _module(layer_idx=0, groups=3):
    return SimpleNamespace(layer_idx=layer_idx, num_key_value_groups=groups, is_causal=True, training=False)


@pytest.mark.parametrize("hq,hkv,d", [(9, 3, 64), (14, 2, 64), (12, 2, 128)], ids=["smollm2", "qwen-0.5b", "qwen-1.5b"])
def test_merging_n_identical_slots_with_log_n_bias_equals_the_originals(hq, hkv, d):
    torch.manual_seed(0)
    n = 5
    q = torch.randn(1, hq, 1, d)
    base_k = torch.randn(1, hkv, 4, d)
    base_v = torch.randn(1, hkv, 4, d)
    dup_k, dup_v = torch.randn(1, hkv, 1, d), torch.randn(1, hkv, 1, d)
    # n copies of one slot among 4 others
    k_orig = torch.cat([base_k[:, :, :2], dup_k.expand(1, hkv, n, d), base_k[:, :, 2:]], dim=2)
    v_orig = torch.cat([base_v[:, :, :2], dup_v.expand(1, hkv, n, d), base_v[:, :, 2:]], dim=2)
    ctx_orig = AttentionContext(log_count=None, window=1)
    out_orig, _ = codeagent_attention(_module(groups=hq // hkv), q, k_orig, v_orig, None, codeagent=ctx_orig)
    # the same, with the copies merged into one slot of count n
    k_m = torch.cat([base_k[:, :, :2], dup_k, base_k[:, :, 2:]], dim=2)
    v_m = torch.cat([base_v[:, :, :2], dup_v, base_v[:, :, 2:]], dim=2)
    counts = torch.tensor([1.0, 1.0, float(n), 1.0, 1.0])
    ctx_m = AttentionContext(log_count=torch.log(counts), window=1)
    out_m, _ = codeagent_attention(_module(groups=hq // hkv), q, k_m, v_m, None, codeagent=ctx_m)
    assert torch.allclose(out_orig, out_m, atol=1e-5)
    # the merged slot draws exactly the attention of the n copies together
    mass_orig = ctx_orig.mass[0][:, 2:2 + n].sum(-1)
    assert torch.allclose(ctx_m.mass[0][:, 2], mass_orig, atol=1e-5)
    # without the bias it would not
    out_nobias, _ = codeagent_attention(_module(groups=hq // hkv), q, k_m, v_m, None, codeagent=AttentionContext(None, 1))
    assert not torch.allclose(out_orig, out_nobias, atol=1e-3)


def _probs(q, k, groups, rows, bias=None):
    """Reference attention probabilities of query rows ``rows`` (bottom-right causal), [hq, rows, t]."""
    t, n = k.shape[2], q.shape[2]
    kk = k.repeat_interleave(groups, dim=1)
    scores = (q[0][:, rows] @ kk[0].transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if bias is not None:
        scores = scores + bias
    mask = torch.arange(t)[None, :] <= (rows + t - n)[:, None]
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), -1)


def test_window_statistics_use_only_the_last_queries_and_respect_causality():
    torch.manual_seed(1)
    hq, hkv, d, t, w = 4, 2, 8, 10, 3
    q, k, v = torch.randn(1, hq, t, d), torch.randn(1, hkv, t, d), torch.randn(1, hkv, t, d)
    ctx = AttentionContext(log_count=None, window=w)
    codeagent_attention(_module(groups=2), q, k, v, None, codeagent=ctx)
    assert ctx.obs[0].shape == (hq, t) and ctx.obs_queries == w and ctx.queries == t
    assert torch.allclose(ctx.obs[0].sum(-1), torch.full((hq,), float(w)))
    # the window: only the last w queries; keys after a query get nothing from it
    assert torch.allclose(ctx.obs[0], _probs(q, k, 2, torch.arange(t - w, t)).sum(1), atol=1e-5)
    # the cumulative statistics: every query
    assert torch.allclose(ctx.mass[0], _probs(q, k, 2, torch.arange(t)).sum(1), atol=1e-5)


def test_statistics_over_many_query_blocks_equal_the_full_matrix():
    # more queries than STATS_BLOCK, after a cached prefix, with merged-slot bias
    torch.manual_seed(2)
    hq, hkv, d, prefix, n = 6, 2, 8, 40, STATS_BLOCK * 2 + 37
    t = prefix + n
    w = 50
    q, k, v = torch.randn(1, hq, n, d), torch.randn(1, hkv, t, d), torch.randn(1, hkv, t, d)
    bias = torch.log(torch.randint(1, 4, (t,)).float())
    ctx = AttentionContext(log_count=bias, window=w)
    codeagent_attention(_module(groups=3), q, k, v, None, codeagent=ctx)
    assert (ctx.queries, ctx.obs_queries) == (n, w)
    assert torch.allclose(ctx.mass[0], _probs(q, k, 3, torch.arange(n), bias).sum(1), atol=1e-4)
    assert torch.allclose(ctx.obs[0], _probs(q, k, 3, torch.arange(n - w, n), bias).sum(1), atol=1e-4)


def test_sampled_statistics_spread_over_the_chunk_and_include_its_last_query():
    torch.manual_seed(3)
    hq, hkv, d, n, w, sample = 4, 2, 8, 300, 8, 10
    q, k, v = torch.randn(1, hq, n, d), torch.randn(1, hkv, n, d), torch.randn(1, hkv, n, d)
    ctx = AttentionContext(log_count=None, window=w, sample=sample)
    rows, sampled = ctx.rows(n)
    picked = rows[sampled]
    assert picked.numel() == sample and int(picked[-1]) == n - 1 and int(picked[0]) == 0
    assert int(picked.diff().max()) <= n // (sample - 1) + 1  # evenly spread, not bunched at the end
    codeagent_attention(_module(groups=2), q, k, v, None, codeagent=ctx)
    assert (ctx.queries, ctx.obs_queries) == (sample, w)
    assert torch.allclose(ctx.mass[0], _probs(q, k, 2, picked).sum(1), atol=1e-5)
    assert torch.allclose(ctx.obs[0], _probs(q, k, 2, torch.arange(n - w, n)).sum(1), atol=1e-5)
