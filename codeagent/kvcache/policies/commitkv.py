"""commitkv: lifecycle compression; committed subtasks become few summary entries, pins survive."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy, select_topk
from codeagent.kvcache.scoring import rank01, temporal
from codeagent.kvcache.tags import State
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan

# How much each lifecycle state is worth keeping, added to the in-state score (in [0, 1]).
STATE_PRIORITY = {State.ACTIVE: 3.0, State.STAGED: 2.0, State.COMMITTED: 1.0, State.EVICTABLE: 0.0, State.PINNED: 4.0}


def state_priority(view: CacheView) -> torch.Tensor:
    """Per-slot priority of its lifecycle state."""
    lut = torch.zeros(max(int(s) for s in State) + 1)
    for s, v in STATE_PRIORITY.items():
        lut[int(s)] = v
    return lut[view.table["state"].long()]


def summary_plan(view: CacheView, subtask: int, entries: int, weights: torch.Tensor) -> CompressionPlan | None:
    """Merge the committed, unpinned slots of ``subtask`` into ``entries`` summary slots per block."""
    t = view.table
    target = (t["subtask"] == subtask) & (t["state"] == int(State.COMMITTED)) & (t["count"] >= 1)
    target &= ~view.structural_mask()
    idx = target.nonzero()[:, 0]
    if idx.numel() < 2:
        return None
    merge: list[tuple[list[int], list[float]]] = []
    blocks = t["block_id"][idx]
    for b in torch.unique(blocks).tolist():
        members = idx[blocks == b]
        if members.numel() < 2:
            continue
        for chunk in torch.tensor_split(members, min(entries, members.numel())):
            if chunk.numel() >= 2:
                merge.append((chunk.tolist(), [max(float(weights[j]), 1e-4) for j in chunk]))
    if not merge:
        return None
    merged = {m for g, _ in merge for m in g}
    keep = [i for i in range(len(view)) if i not in merged]
    return CompressionPlan(keep=keep, merge=merge, note=f"commit: {len(merged)} slots into {len(merge)} summaries")


@POLICIES.register("commitkv")
class CommitKVPolicy(BasePolicy):
    """Evicts by lifecycle state first (evictable, committed, staged, active), attention within a
    state; pinned slots are never dropped; commits fold a subtask into summary entries."""

    uses_lifecycle = True

    def must_keep(self, view: CacheView) -> torch.Tensor:
        return view.structural_mask() | view.pinned()

    def scores(self, view: CacheView) -> torch.Tensor:
        within = 0.6 * rank01(view.attention("attn_dec")) + 0.4 * temporal(view)
        return state_priority(view) + within

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return select_topk(view, self.scores(view), budget, self.must_keep(view))

    def on_commit(self, view: CacheView, subtask: int) -> CompressionPlan | None:
        return summary_plan(view, subtask, self.cfg.summary_entries, rank01(view.attention("attn_cum")) + 0.01)
