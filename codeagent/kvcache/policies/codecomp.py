"""codecomp: structure-aware importance scores with hybrid keep/merge/drop (CodeComp)."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy, hybrid_select
from codeagent.kvcache.scoring import importance
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


@POLICIES.register("codecomp")
class CodeCompPolicy(BasePolicy):
    """score = a*structural + b*semantic + c*temporal; keeps the top, merges similar mid scorers
    within a block, drops the rest. Ignores lifecycle states."""

    def scores(self, view: CacheView) -> torch.Tensor:
        return importance(view)

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return hybrid_select(view, self.scores(view), budget, self.must_keep(view), self.cfg.mode)
