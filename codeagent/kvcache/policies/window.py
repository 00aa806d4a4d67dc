"""window: StreamingLLM, attention-sink tokens plus the most recent window."""

from __future__ import annotations

import torch

from codeagent.kvcache.policies.base import POLICIES, BasePolicy
from codeagent.kvcache.view import CacheView


@POLICIES.register("window")
class WindowPolicy(BasePolicy):
    """Keeps the sinks and the newest slots."""

    needs_attention = False

    def must_keep(self, view: CacheView) -> torch.Tensor:
        n = len(view)
        mask = torch.zeros(n, dtype=torch.bool)
        mask[: min(self.cfg.sink_tokens, n)] = True
        return mask

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.table["pos"].float()
