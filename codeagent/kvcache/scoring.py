"""Importance scores: score = a*structural + b*semantic + c*temporal (CodeComp)."""

from __future__ import annotations

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.tags import BlockType, SegmentKind
from codeagent.kvcache.view import CacheView


def _table(names: dict[str, float], enum, default: float) -> torch.Tensor:
    out = torch.full((max(int(e) for e in enum) + 1,), default)
    for e in enum:
        out[int(e)] = names.get(e.name.lower(), default)
    return out


def structural(view: CacheView) -> torch.Tensor:
    """Block-type weight x segment-kind weight, plus a boundary bonus, decaying with depth."""
    cfg = view.cfg
    t = view.table
    bw = _table(cfg.block_weights, BlockType, 0.3)[t["block_type"].long()]
    kw = _table(cfg.kind_weights, SegmentKind, 0.5)[t["kind"].long()]
    s = bw * kw + cfg.boundary_bonus * t["boundary"].float()
    return s * cfg.depth_decay ** t["depth"].float().clamp(min=0)


def rank01(x: torch.Tensor) -> torch.Tensor:
    """Percentile rank in [0, 1] (robust to the heavy tail of attention mass)."""
    n = x.numel()
    if n <= 1:
        return torch.ones_like(x, dtype=torch.float32)
    r = torch.empty(n, dtype=torch.float32)
    r[torch.argsort(x)] = torch.arange(n, dtype=torch.float32) / (n - 1)
    return r


def observed(view: CacheView, kernel: int) -> torch.Tensor:
    """Attention from the last observation window (mean over layers), max-pooled along the slots
    and averaged over heads: ``[slots]``."""
    obs = view.table["attn_obs"].mean(dim=0)  # [heads, slots]
    pooled = torch.nn.functional.max_pool1d(obs[None], kernel_size=kernel, stride=1, padding=kernel // 2)[0]
    return pooled.mean(dim=0)[: len(view)]


def semantic(view: CacheView) -> torch.Tensor:
    """Attention the slot draws: decayed mass (mean over layers/heads), rank-normalised, mixed
    with the pooled observation-window attention at ``obs_weight``."""
    mass = rank01(view.attention("attn_dec") + 1e-3 * view.attention("attn_cum"))
    w = view.cfg.obs_weight
    if w <= 0 or len(view) == 0:
        return mass
    return (1 - w) * mass + w * rank01(observed(view, view.cfg.pool_kernel))


def temporal(view: CacheView) -> torch.Tensor:
    """Recency (halving every ``recency_halflife`` positions) plus access heat."""
    t = view.table
    age = (view.logical - t["pos"]).float().clamp(min=0)
    recency = 0.5 ** (age / view.cfg.recency_halflife)
    hits = t["hits"]
    heat = hits / hits.max() if bool((hits > 0).any()) else torch.zeros_like(hits)
    return 0.7 * recency + 0.3 * heat


def importance(view: CacheView, cfg: KVConfig | None = None) -> torch.Tensor:
    """The combined importance score of every slot."""
    cfg = cfg or view.cfg
    s = structural(view)
    if s.numel():
        s = s / s.max().clamp(min=1e-6)
    return cfg.structural_weight * s + cfg.semantic_weight * semantic(view) + cfg.temporal_weight * temporal(view)
