"""The read-only view of the cache that policies decide from."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.slots import SlotTable
from codeagent.kvcache.state import CacheState
from codeagent.kvcache.tags import State


@dataclass
class CacheView:
    """Slot table, logical length and access to keys, for one policy decision."""

    table: SlotTable
    logical: int
    step: int
    cache: object

    @classmethod
    def of(cls, state: CacheState) -> "CacheView":
        """The view of ``state`` now."""
        return cls(state.table, state.logical, state.steps, state.cache)

    def __len__(self) -> int:
        return len(self.table)

    def attention(self, stat: str = "attn_dec") -> torch.Tensor:
        """Per-slot attention statistic, mean over layers and heads: ``[slots]``."""
        return self.table[stat].mean(dim=(0, 1))

    def keys(self, idx: torch.Tensor) -> torch.Tensor:
        """Keys of slots ``idx`` across all layers, ``[len(idx), layers, kv_heads*head_dim]``."""
        parts = [layer.keys[0].index_select(1, idx).permute(1, 0, 2).reshape(idx.numel(), -1)
                 for layer in self.cache.layers]
        return torch.stack(parts, dim=1).float()

    def pinned(self) -> torch.Tensor:
        """Bool mask of pinned slots."""
        return self.table["state"] == int(State.PINNED)

    def edges(self, sink_tokens: int, recent_tokens: int) -> torch.Tensor:
        """Bool mask of the attention sinks (the first ``sink_tokens`` positions, while still cached)
        and the ``recent_tokens`` newest slots."""
        n = len(self)
        mask = torch.zeros(n, dtype=torch.bool)
        k = min(sink_tokens, n)
        mask[:k] = self.table["pos"][:k] < sink_tokens
        if recent_tokens:
            mask[max(n - recent_tokens, 0):] = True
        return mask
