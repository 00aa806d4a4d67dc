"""tova: Token Omission Via Attention, the last query's attention averaged over heads."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy
from codeagent.kvcache.view import CacheView


@POLICIES.register("tova")
class TOVAPolicy(BasePolicy):
    """Keeps the slots the most recent query attended to most (no fixed recent window)."""

    def must_keep(self, view: CacheView) -> torch.Tensor:
        mask = torch.zeros(len(view), dtype=torch.bool)
        mask[-1:] = True
        return mask

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.attention("attn_obs")
