"""snapkv: attention from the last observation window of queries, max-pooled along the sequence."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from codeagent.kvcache.policies.base import POLICIES, BasePolicy
from codeagent.kvcache.view import CacheView


@POLICIES.register("snapkv")
class SnapKVPolicy(BasePolicy):
    """Keeps the window and the slots the last W queries attended to (pooled so neighbours come along)."""

    def scores(self, view: CacheView) -> torch.Tensor:
        obs = view.table["attn_obs"].mean(dim=0)  # [heads, slots]
        k = self.cfg.pool_kernel
        pooled = F.max_pool1d(obs[None], kernel_size=k, stride=1, padding=k // 2)[0]
        return pooled.mean(dim=0)[: len(view)]
