"""commitkv: lifecycle compression; committed subtasks become few summary entries, pins survive."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.policies.lifecycle import Lifecycle
from codeagent.kvcache.scoring import rank01, temporal
from codeagent.kvcache.view import CacheView


@dataclass
class AttentionRecency(Policy):
    """Decayed attention and recency, rank-normalised to [0, 1]; summaries weighted by cumulative attention."""

    recency_halflife: int = 512

    def scores(self, view: CacheView) -> torch.Tensor:
        return 0.6 * rank01(view.attention("attn_dec")) + 0.4 * temporal(view, self.recency_halflife)

    def merge_weights(self, view: CacheView) -> torch.Tensor:
        return rank01(view.attention("attn_cum")) + 0.01


@POLICIES.register("commitkv")
def commitkv(cfg: KVConfig) -> Lifecycle:
    """Evicts by lifecycle state first (evictable, committed, staged, active), attention within a
    state; pinned slots are never dropped; commits fold a subtask into summary entries."""
    return Lifecycle.from_settings(cfg, base=AttentionRecency.from_settings(cfg), ranking="priority")
