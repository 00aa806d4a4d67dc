"""tova: Token Omission Via Attention, the last query's attention averaged over heads."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.view import CacheView


@dataclass
class TOVA(Policy):
    """Keeps the slots the most recent query attended to most (no fixed recent window)."""

    def must_keep(self, view: CacheView) -> torch.Tensor:
        mask = torch.zeros(len(view), dtype=torch.bool)
        mask[-1:] = True
        return mask

    def scores(self, view: CacheView) -> torch.Tensor:
        return view.attention("attn_obs")


@POLICIES.register("tova")
def tova(cfg: KVConfig) -> TOVA:
    """TOVA."""
    return TOVA.from_settings(cfg)
