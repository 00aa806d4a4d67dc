"""Importance scores: score = a*structural + b*semantic + c*temporal (CodeComp).

The knobs come from the policy that scores (any object with the fields of ``ImportanceKnobs``).
"""

from __future__ import annotations

from typing import Protocol

import torch

from codeagent.kvcache.tags import BlockType, SegmentKind
from codeagent.kvcache.view import CacheView


class ImportanceKnobs(Protocol):
    """The settings the importance score reads."""

    structural_weight: float
    semantic_weight: float
    temporal_weight: float
    depth_decay: float
    boundary_bonus: float
    recency_halflife: int
    obs_weight: float
    proxy_weight: float
    pool_kernel: int
    block_weights: dict[str, float]
    kind_weights: dict[str, float]


def _table(names: dict[str, float], enum, default: float) -> torch.Tensor:
    out = torch.full((max(int(e) for e in enum) + 1,), default)
    for e in enum:
        out[int(e)] = names.get(e.name.lower(), default)
    return out


def structural(view: CacheView, k: ImportanceKnobs) -> torch.Tensor:
    """Block-type weight x segment-kind weight, plus a boundary bonus, decaying with depth."""
    t = view.table
    bw = _table(k.block_weights, BlockType, 0.3)[t["block_type"].long()]
    kw = _table(k.kind_weights, SegmentKind, 0.5)[t["kind"].long()]
    s = bw * kw + k.boundary_bonus * t["boundary"].float()
    return s * k.depth_decay ** t["depth"].float().clamp(min=0)


def rank01(x: torch.Tensor, stable: bool = False) -> torch.Tensor:
    """Percentile rank in [0, 1] (robust to the heavy tail of attention mass); ``stable`` breaks ties by slot
    order, so the result is reproducible (the learned proxy's features)."""
    n = x.numel()
    if n <= 1:
        return torch.ones_like(x, dtype=torch.float32)
    r = torch.empty(n, dtype=torch.float32)
    r[torch.argsort(x, stable=stable)] = torch.arange(n, dtype=torch.float32) / (n - 1)
    return r


def observed(view: CacheView, kernel: int) -> torch.Tensor:
    """Attention from the last observation window (mean over layers), max-pooled along the slots
    and averaged over heads: ``[slots]``."""
    obs = view.table["attn_obs"].mean(dim=0)  # [heads, slots]
    pooled = torch.nn.functional.max_pool1d(obs[None], kernel_size=kernel, stride=1, padding=kernel // 2)[0]
    return pooled.mean(dim=0)[: len(view)]


def semantic(view: CacheView, obs_weight: float = 0.0, pool_kernel: int = 7,
             proxy_weight: float = 0.0) -> torch.Tensor:
    """Attention the slot draws: decayed mass (mean over layers/heads), rank-normalised, mixed
    with the pooled observation-window attention at ``obs_weight``; the learned proxy's prediction
    (rank-normalised) takes ``proxy_weight`` of the result."""
    mass = rank01(view.attention("attn_dec") + 1e-3 * view.attention("attn_cum"))
    if obs_weight > 0 and len(view):
        mass = (1 - obs_weight) * mass + obs_weight * rank01(observed(view, pool_kernel))
    if proxy_weight > 0 and len(view):
        from codeagent.kvcache.proxy import shipped

        mass = (1 - proxy_weight) * mass + proxy_weight * rank01(shipped().predict(view))
    return mass


def temporal(view: CacheView, recency_halflife: int) -> torch.Tensor:
    """Recency (halving every ``recency_halflife`` positions) plus access heat."""
    t = view.table
    age = (view.logical - t["pos"]).float().clamp(min=0)
    recency = 0.5 ** (age / recency_halflife)
    hits = t["hits"]
    heat = hits / hits.max() if bool((hits > 0).any()) else torch.zeros_like(hits)
    return 0.7 * recency + 0.3 * heat


def importance(view: CacheView, k: ImportanceKnobs) -> torch.Tensor:
    """The combined importance score of every slot."""
    s = structural(view, k)
    if s.numel():
        s = s / s.max().clamp(min=1e-6)
    sem = semantic(view, k.obs_weight, k.pool_kernel, k.proxy_weight)
    return k.structural_weight * s + k.semantic_weight * sem + k.temporal_weight * temporal(view, k.recency_halflife)
