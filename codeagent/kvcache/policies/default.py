"""default: CommitKV's lifecycle (pins, commits, summaries) with CodeComp's structural scores."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy, hybrid_select
from codeagent.kvcache.policies.commitkv import summary_plan
from codeagent.kvcache.scoring import importance
from codeagent.kvcache.tags import State
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan

# Multiplier on the importance score by lifecycle state.
STATE_FACTOR = {State.ACTIVE: 1.0, State.STAGED: 0.8, State.COMMITTED: 0.5, State.EVICTABLE: 0.1, State.PINNED: 1.0}


@POLICIES.register("default")
class DefaultPolicy(BasePolicy):
    """Pinned slots (signatures, imports, the issue, open errors) always stay; the rest is ranked
    by structure x attention x recency, discounted by lifecycle state, then kept, merged within a
    block, or dropped. Commits fold a finished subtask into summary entries."""

    uses_lifecycle = True

    def must_keep(self, view: CacheView) -> torch.Tensor:
        return view.structural_mask() | view.pinned()

    def scores(self, view: CacheView) -> torch.Tensor:
        lut = torch.ones(max(int(s) for s in State) + 1)
        for s, v in STATE_FACTOR.items():
            lut[int(s)] = v
        return importance(view) * lut[view.table["state"].long()]

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return hybrid_select(view, self.scores(view), budget, self.must_keep(view), self.cfg.mode)

    def on_commit(self, view: CacheView, subtask: int) -> CompressionPlan | None:
        return summary_plan(view, subtask, self.cfg.summary_entries, importance(view))
