"""h2o: Heavy-Hitter Oracle, accumulated attention plus a recent window."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy
from codeagent.kvcache.view import CacheView


@POLICIES.register("h2o")
class H2OPolicy(BasePolicy):
    """Keeps the recent window and the slots with the most accumulated attention."""

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.attention("attn_cum")
