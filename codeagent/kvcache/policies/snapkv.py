"""snapkv: attention from the last observation window of queries, max-pooled along the sequence."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.scoring import observed
from codeagent.kvcache.view import CacheView


@dataclass
class SnapKV(Policy):
    """Keeps the window and the slots the last W queries attended to (pooled so neighbours come along)."""

    pool_kernel: int = 7
    """Max-pool kernel over the observation-window attention."""

    def scores(self, view: CacheView) -> torch.Tensor:
        return observed(view, self.pool_kernel)


@POLICIES.register("snapkv")
def snapkv(cfg: KVConfig) -> SnapKV:
    """SnapKV."""
    return SnapKV.from_settings(cfg)
