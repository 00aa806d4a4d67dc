"""full: no compression (the exact reference)."""

from __future__ import annotations

from dataclasses import dataclass

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES, Policy
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


@dataclass
class Full(Policy):
    """Keeps every slot whatever the budget."""

    needs_attention = False
    compresses = False

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return CompressionPlan(keep=list(range(len(view))), note="full keeps everything")


@POLICIES.register("full")
def full(cfg: KVConfig) -> Full:
    """No compression."""
    return Full.from_settings(cfg)
