"""codecomp: structure-aware importance scores with hybrid keep/merge/drop (CodeComp)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import torch

from codeagent.kvcache.config import KVConfig, default_block_weights, default_kind_weights
from codeagent.kvcache.policies.base import POLICIES, Policy, hybrid_select
from codeagent.kvcache.scoring import importance
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


@dataclass
class CodeComp(Policy):
    """score = a*structural + b*semantic + c*temporal; keeps the top, merges similar mid scorers
    within a block, drops the rest. Ignores lifecycle states."""

    structural_weight: float = 0.4
    semantic_weight: float = 0.4
    temporal_weight: float = 0.2
    depth_decay: float = 0.85
    boundary_bonus: float = 0.2
    recency_halflife: int = 512
    obs_weight: float = 0.0
    proxy_weight: float = 0.5
    pool_kernel: int = 7
    block_weights: dict[str, float] = field(default_factory=default_block_weights)
    kind_weights: dict[str, float] = field(default_factory=default_kind_weights)
    mode: Literal["selective", "merge", "hybrid"] = "hybrid"
    keep_fraction: float = 0.7
    merge_threshold: float = 0.9
    max_merge: int = 8
    unit: Literal["token", "line"] = "token"
    """The knobs are documented on ``KVConfig`` under the same names."""

    def scores(self, view: CacheView) -> torch.Tensor:
        return importance(view, self)

    def select(self, view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor) -> CompressionPlan:
        return hybrid_select(view, scores, budget, must, self.edges(view), mode=self.mode,
                             keep_fraction=self.keep_fraction, merge_threshold=self.merge_threshold,
                             max_merge=self.max_merge, unit=self.unit)


@POLICIES.register("codecomp")
def codecomp(cfg: KVConfig) -> CodeComp:
    """CodeComp alone, no lifecycle."""
    return CodeComp.from_settings(cfg)
