"""The slot table: one row per physical KV slot, kept beside the cache tensors.

Columns are 1-D tensors of equal length (the physical cache length); attention statistics are
``[layers, heads, slots]``. ``gather`` and ``merge_rows`` are the only ways rows disappear or
combine, and the engine applies them to the KV tensors in the same step.
"""

from __future__ import annotations

import torch

from codeagent.kvcache.tags import SegmentKind, State

COLUMNS: dict[str, torch.dtype] = {
    "pos": torch.long,  # logical position
    "token": torch.long,  # token id (of the representative for a merged slot)
    "seg": torch.long,  # segment id
    "kind": torch.int8,  # SegmentKind
    "subtask": torch.long,  # subtask index, -1 for none
    "block_type": torch.int8,  # BlockType
    "block_id": torch.long,
    "depth": torch.int16,
    "boundary": torch.bool,
    "count": torch.float32,  # tokens this slot stands for
    "state": torch.int8,  # State
    "protect": torch.bool,  # caller asked to keep it pinned
    "cold": torch.int16,  # consecutive cold lifecycle checks
    "last_access": torch.long,  # forward step of the last above-uniform attention
    "hits": torch.float32,  # decayed count of above-uniform attention (access heat)
}
STATS = ("attn_cum", "attn_dec", "attn_obs")  # cumulative, decayed, last forward's window


class SlotTable:
    """Per-slot metadata and attention accumulators for a cache of ``layers`` x ``heads``."""

    def __init__(self, layers: int, heads: int) -> None:
        self.layers = layers
        self.heads = heads
        self.cols: dict[str, torch.Tensor] = {k: torch.empty(0, dtype=v) for k, v in COLUMNS.items()}
        self.stats: dict[str, torch.Tensor] = {k: torch.zeros(layers, heads, 0) for k in STATS}

    def __len__(self) -> int:
        return int(self.cols["pos"].shape[0])

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.cols[name] if name in self.cols else self.stats[name]

    def extend(self, n: int, **values: torch.Tensor | int | float | bool) -> None:
        """Append ``n`` rows; columns not given get their neutral value."""
        for name, dtype in COLUMNS.items():
            val = values.get(name, _DEFAULTS[name])
            col = val.to(dtype) if isinstance(val, torch.Tensor) else torch.full((n,), val, dtype=dtype)
            if col.shape[0] != n:
                raise ValueError(f"column {name}: {col.shape[0]} values for {n} rows")
            self.cols[name] = torch.cat([self.cols[name], col])
        for name in STATS:
            self.stats[name] = torch.cat([self.stats[name], torch.zeros(self.layers, self.heads, n)], dim=2)

    def gather(self, idx: torch.Tensor) -> None:
        """Keep rows ``idx`` in that order."""
        for name in COLUMNS:
            self.cols[name] = self.cols[name].index_select(0, idx)
        for name in STATS:
            self.stats[name] = self.stats[name].index_select(2, idx)

    def merged_rows(self, members: torch.Tensor, group: torch.Tensor, rep: torch.Tensor, last: torch.Tensor,
                    n_groups: int) -> dict[str, torch.Tensor]:
        """Column values of ``n_groups`` merged rows: counts and statistics summed over members,
        position of each group's last member, other columns from its representative member."""
        out: dict[str, torch.Tensor] = {}
        for name in COLUMNS:
            out[name] = self.cols[name].index_select(0, rep).clone()
        out["pos"] = self.cols["pos"].index_select(0, last)
        out["count"] = torch.zeros(n_groups).index_add_(0, group, self.cols["count"].index_select(0, members))
        out["hits"] = torch.zeros(n_groups).index_add_(0, group, self.cols["hits"].index_select(0, members))
        out["last_access"] = torch.zeros(n_groups, dtype=torch.long).scatter_reduce_(
            0, group, self.cols["last_access"].index_select(0, members), reduce="amax")
        out["boundary"] = torch.zeros(n_groups, dtype=torch.bool)
        for name in STATS:
            src = self.stats[name].index_select(2, members)
            out[name] = torch.zeros(self.layers, self.heads, n_groups).index_add_(2, group, src)
        return out

    def replace(self, kept: torch.Tensor, merged: dict[str, torch.Tensor] | None, order: torch.Tensor) -> None:
        """Rows = kept rows followed by merged rows, then permuted by ``order``."""
        for name in COLUMNS:
            col = self.cols[name].index_select(0, kept)
            if merged is not None:
                col = torch.cat([col, merged[name]])
            self.cols[name] = col.index_select(0, order)
        for name in STATS:
            st = self.stats[name].index_select(2, kept)
            if merged is not None:
                st = torch.cat([st, merged[name]], dim=2)
            self.stats[name] = st.index_select(2, order)

    def log_count(self) -> torch.Tensor | None:
        """log(n) per slot, or None when no slot stands for more than one token."""
        c = self.cols["count"]
        return torch.log(c) if bool((c > 1).any()) else None

    def check(self) -> None:
        """Raise if columns disagree in length or positions are not strictly increasing."""
        n = len(self)
        for name, col in {**self.cols, **{k: v[0, 0] for k, v in self.stats.items()}}.items():
            if col.shape[-1] != n:
                raise AssertionError(f"slot column {name} has {col.shape[-1]} rows, expected {n}")
        pos = self.cols["pos"]
        if n > 1 and not bool((pos[1:] > pos[:-1]).all()):
            raise AssertionError("logical positions are not strictly increasing")


_DEFAULTS: dict[str, int | float | bool] = {
    "pos": 0, "token": 0, "seg": -1, "kind": int(SegmentKind.TEXT), "subtask": -1, "block_type": 0,
    "block_id": -1, "depth": 0, "boundary": False, "count": 1.0, "state": int(State.ACTIVE),
    "protect": False, "cold": 0, "last_access": 0, "hits": 0.0,
}
