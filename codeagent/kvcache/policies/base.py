"""Shared selection logic: every policy is a scoring rule plus these keep/merge/drop helpers."""

from __future__ import annotations

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.registry import POLICIES
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan

__all__ = ["BasePolicy", "POLICIES", "select_topk", "hybrid_select"]


def _must_fit(must: torch.Tensor, view: CacheView, budget: int) -> torch.Tensor:
    """Cut the must-keep set to the budget: recent and sinks first, then the newest others."""
    if int(must.sum()) <= budget:
        return must
    struct = view.structural_mask() & must
    order = torch.argsort(view.table["pos"], descending=True)
    out = torch.zeros_like(must)
    for group in (struct, must & ~struct):
        for i in order[group[order]].tolist():
            if int(out.sum()) >= budget:
                return out
            out[i] = True
    return out


def select_topk(view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor) -> CompressionPlan:
    """Keep ``must`` and the highest scorers up to ``budget``; drop the rest."""
    must = _must_fit(must, view, budget)
    free = budget - int(must.sum())
    s = scores.clone().float()
    s[must] = float("-inf")
    extra = torch.topk(s, k=min(max(free, 0), int((~must).sum()))).indices if free > 0 else torch.empty(0, dtype=torch.long)
    keep = torch.cat([must.nonzero()[:, 0], extra])
    return CompressionPlan(keep=sorted(keep.tolist()))


def hybrid_select(view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor, mode: str) -> CompressionPlan:
    """CodeComp's hybrid: keep the top scorers, merge similar mid scorers of one block, drop the rest.

    ``mode`` selective = keep/drop only; merge = every non-kept slot may merge; hybrid = the top
    ``keep_fraction`` of the free budget is kept as is and the remainder is filled with merge groups.
    """
    cfg: KVConfig = view.cfg
    if mode == "selective":
        return select_topk(view, scores, budget, must)
    must = _must_fit(must, view, budget)
    free = budget - int(must.sum())
    if free <= 0:
        return CompressionPlan(keep=sorted(must.nonzero()[:, 0].tolist()))
    s = scores.clone().float()
    s[must] = float("-inf")
    n_keep = int(free * cfg.keep_fraction) if mode == "hybrid" else 0
    order = torch.argsort(s, descending=True)
    kept = order[:n_keep]
    pool_mask = ~must
    pool_mask[kept] = False
    pool = pool_mask.nonzero()[:, 0]  # ascending = position order
    groups = _similar_runs(view, pool, cfg)
    slots_left = free - n_keep
    gscore = [float(scores[g].sum()) for g in groups]
    chosen = sorted(range(len(groups)), key=lambda i: -gscore[i])[:slots_left]
    keep = set(must.nonzero()[:, 0].tolist()) | set(kept.tolist())
    merge = []
    for i in chosen:
        g = groups[i]
        if len(g) == 1:
            keep.add(g[0])
        else:
            merge.append((g, [max(float(scores[j]), 1e-4) for j in g]))
    return CompressionPlan(keep=sorted(keep), merge=merge)


def _similar_runs(view: CacheView, pool: torch.Tensor, cfg: KVConfig) -> list[list[int]]:
    """Split ``pool`` (ascending slots) into runs of neighbours in one block with similar keys."""
    if pool.numel() == 0:
        return []
    if pool.numel() == 1:
        return [[int(pool[0])]]
    keys = view.keys(pool)  # [n, L, D]
    keys = torch.nn.functional.normalize(keys, dim=-1)
    sim = (keys[1:] * keys[:-1]).sum(-1).mean(-1)  # mean over layers of per-layer cosine
    block = view.table["block_id"][pool]
    same = (block[1:] == block[:-1]) & (block[1:] >= 0) & (sim >= cfg.merge_threshold)
    adjacent = (pool[1:] - pool[:-1]) == 1
    link = (same & adjacent).tolist()
    runs, cur = [], [int(pool[0])]
    for j, linked in enumerate(link):
        nxt = int(pool[j + 1])
        if linked and len(cur) < cfg.max_merge:
            cur.append(nxt)
        else:
            runs.append(cur)
            cur = [nxt]
    runs.append(cur)
    return runs


class BasePolicy:
    """A policy: a ``scores`` rule, a must-keep set and the shared selection."""

    name = "base"
    uses_lifecycle = False
    needs_attention = True
    """Whether the engine must collect attention statistics for this policy (they cost prefill time)."""

    def __init__(self, cfg: KVConfig) -> None:
        self.cfg = cfg

    def must_keep(self, view: CacheView) -> torch.Tensor:
        """Slots never dropped by this policy: sinks and the recent window."""
        return view.structural_mask()

    def scores(self, view: CacheView) -> torch.Tensor:
        """Importance of every slot (higher is kept)."""
        return view.table["pos"].float()

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        """Keep/merge/drop down to ``budget`` slots."""
        return select_topk(view, self.scores(view), budget, self.must_keep(view))

    def on_commit(self, view: CacheView, subtask: int) -> CompressionPlan | None:
        """Extra compression when a subtask is committed; None when the policy does nothing."""
        return None
