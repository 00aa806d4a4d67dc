"""full: no compression (the exact reference)."""

from __future__ import annotations

from codeagent.kvcache.policies.base import POLICIES, BasePolicy
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


@POLICIES.register("full")
class FullPolicy(BasePolicy):
    """Keeps every slot whatever the budget."""

    needs_attention = False

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return CompressionPlan(keep=list(range(len(view))), note="full keeps everything")
