"""window: StreamingLLM, attention-sink tokens plus the most recent window."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.view import CacheView


@dataclass
class Window(Policy):
    """Keeps the sinks and the newest slots."""

    needs_attention = False

    def must_keep(self, view: CacheView) -> torch.Tensor:
        n = len(view)
        mask = torch.zeros(n, dtype=torch.bool)
        mask[: min(self.sink_tokens, n)] = True
        return mask

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.table["pos"].float()


@POLICIES.register("window")
def window(cfg: KVConfig) -> Window:
    """StreamingLLM."""
    return Window.from_settings(cfg)
