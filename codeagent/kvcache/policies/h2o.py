"""h2o: Heavy-Hitter Oracle, accumulated attention plus a recent window."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.view import CacheView


@dataclass
class H2O(Policy):
    """Keeps the recent window and the slots with the most accumulated attention."""

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.attention("attn_cum")


@POLICIES.register("h2o")
def h2o(cfg: KVConfig) -> H2O:
    """Heavy hitters."""
    return H2O.from_settings(cfg)
