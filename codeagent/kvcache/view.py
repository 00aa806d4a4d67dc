"""The read-only view of the cache that policies decide from."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.slots import SlotTable
from codeagent.kvcache.tags import State


@dataclass
class CacheView:
    """Slot table, KV config, logical length and access to keys, for one policy decision."""

    table: SlotTable
    cfg: KVConfig
    logical: int
    step: int
    cache: object

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

    def structural_mask(self) -> torch.Tensor:
        """Bool mask of the sink tokens (first positions) and the most recent slots."""
        n = len(self)
        mask = torch.zeros(n, dtype=torch.bool)
        mask[: min(self.cfg.sink_tokens, n)] = self.table["pos"][: min(self.cfg.sink_tokens, n)] < self.cfg.sink_tokens
        if self.cfg.recent_tokens:
            mask[max(n - self.cfg.recent_tokens, 0):] = True
        return mask
