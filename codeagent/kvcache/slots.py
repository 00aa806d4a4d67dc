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
    "eol": torch.bool,  # the token ends a line (its text holds a newline)
    "count": torch.float32,  # tokens this slot stands for
    "state": torch.int8,  # State
    "protect": torch.bool,  # caller asked to keep it pinned
    "named": torch.bool,  # part of a definition the issue names (pinned; the named cap may release it)
    "name": torch.long,  # id of the name the token's definition header binds (CacheState.names), -1 for none
    "spells": torch.bool,  # the token spells the name its definition header binds (uses.spelled)
    "line": torch.long,  # key of the text of the line the token starts on (uses.line_keys), -1 for none
    "twin": torch.bool,  # pinned as a line after the twin of the newest lines (twins.twin_rows) until the next enforce
    "rare": torch.int32,  # rank of its line among the rare uses (rare_uses.rare_use_ranks) until the next enforce
    "cold": torch.int16,  # consecutive cold lifecycle checks
    "last_access": torch.long,  # forward step of the last above-uniform attention
    "hits": torch.float32,  # decayed count of above-uniform attention (access heat)
}
STATS = ("attn_cum", "attn_dec", "attn_obs")  # cumulative, decayed, last forward's window
DEFERRED = frozenset((*STATS, "hits", "last_access"))
"""What ``accumulate`` updates: reading any of them first folds the pending forwards in."""


def line_numbers(eol: torch.Tensor) -> torch.Tensor:
    """Per slot, the line it is on: the line ends before it (a slot ending a line is on that line)."""
    ends = eol.long()
    return torch.cumsum(ends, 0) - ends


class Pending:
    """Attention statistics of the forwards since the last fold, kept on the device the attention
    ran on, so a decoded token costs no device-to-host copy. Decays are carried as running scales:
    after k forwards, ``dec = dec_old * scale + pending``."""

    def __init__(self) -> None:
        self.cum: torch.Tensor | None = None  # [L, H, T] sum of masses
        self.dec: torch.Tensor | None = None  # [L, H, T] decayed sum of masses
        self.obs: torch.Tensor | None = None  # [L, H, T] last forward's window mass / window queries
        self.hits: torch.Tensor | None = None  # [T] decayed count of above-uniform attention
        self.last: torch.Tensor | None = None  # [T] latest step with above-uniform attention, -1 none
        self.scale = 1.0

    @staticmethod
    def _grow(t: torch.Tensor | None, like: torch.Tensor, fill: float = 0.0) -> torch.Tensor:
        if t is None:
            return torch.full_like(like, fill)
        extra = like.shape[-1] - t.shape[-1]
        if extra <= 0:
            return t
        return torch.cat([t, torch.full((*t.shape[:-1], extra), fill, dtype=t.dtype, device=t.device)], dim=-1)

    def add(self, mass: torch.Tensor, obs: torch.Tensor, queries: int, obs_queries: int, decay: float,
            step: int) -> None:
        """Fold one forward's ``[L, H, T]`` masses in (device-side only)."""
        self.cum = self._grow(self.cum, mass).add_(mass)
        self.dec = self._grow(self.dec, mass).mul_(decay).add_(mass)
        self.obs = obs / max(obs_queries, 1)
        per_slot = mass.mean(dim=(0, 1)) / max(queries, 1)
        hot = per_slot > (1.0 / max(per_slot.shape[-1], 1))
        self.hits = self._grow(self.hits, per_slot).mul_(decay).add_(hot.float())
        self.last = torch.where(hot, step, self._grow(self.last, per_slot.long(), -1))
        self.scale *= decay


class SlotTable:
    """Per-slot metadata and attention accumulators for a cache of ``layers`` x ``heads``.

    Storage grows geometrically so that appending one decoded token is O(1) amortised; ``cols``
    and ``stats`` are views of the live rows (write into them in place, never rebind them).
    """

    def __init__(self, layers: int, heads: int) -> None:
        self.layers = layers
        self.heads = heads
        self._n = 0
        self._cols: dict[str, torch.Tensor] = {k: torch.empty(0, dtype=v) for k, v in COLUMNS.items()}
        self._stats: dict[str, torch.Tensor] = {k: torch.zeros(layers, heads, 0) for k in STATS}
        self._pending: Pending | None = None

    @property
    def cols(self) -> dict[str, torch.Tensor]:
        """Metadata columns, views of the live rows."""
        self.fold()
        return {k: v[: self._n] for k, v in self._cols.items()}

    @property
    def stats(self) -> dict[str, torch.Tensor]:
        """Attention accumulators ``[layers, heads, slots]``, views of the live rows."""
        self.fold()
        return {k: v[:, :, : self._n] for k, v in self._stats.items()}

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, name: str) -> torch.Tensor:
        if name in DEFERRED:
            self.fold()
        return self._cols[name][: self._n] if name in self._cols else self._stats[name][:, :, : self._n]

    def accumulate(self, mass: torch.Tensor, obs: torch.Tensor, queries: int, obs_queries: int, decay: float,
                   step: int) -> None:
        """Add one forward's attention masses ``[L, H, T]`` (T = the live rows) without leaving their
        device; they reach the columns at the next read of a statistic (``fold``)."""
        if mass.shape[-1] != self._n:
            raise ValueError(f"statistics for {mass.shape[-1]} slots, the table has {self._n}")
        if self._pending is None:
            self._pending = Pending()
        self._pending.add(mass, obs, queries, obs_queries, decay, step)

    def fold(self) -> None:
        """Move the pending statistics into the columns (one device-to-host copy per fold)."""
        p, self._pending = self._pending, None
        if p is None or p.cum is None:
            return
        t = p.cum.shape[-1]
        st = {k: v[:, :, : self._n] for k, v in self._stats.items()}
        st["attn_cum"][:, :, :t].add_(p.cum.float().cpu())
        st["attn_dec"].mul_(p.scale)[:, :, :t].add_(p.dec.float().cpu())
        st["attn_obs"].zero_()[:, :, :t].copy_(p.obs.float().cpu())
        hits = self._cols["hits"][: self._n]
        hits.mul_(p.scale)[:t].add_(p.hits.float().cpu())
        last = self._cols["last_access"][:t]
        torch.maximum(last, p.last.cpu(), out=last)

    def _reserve(self, n: int) -> None:
        cap = self._cols["pos"].shape[0]
        if n <= cap:
            return
        new_cap = max(n, int(cap * 1.5) + 64)
        for name, col in self._cols.items():
            buf = torch.empty(new_cap, dtype=col.dtype)
            buf[: self._n] = col[: self._n]
            self._cols[name] = buf
        for name, st in self._stats.items():
            buf = torch.zeros(self.layers, self.heads, new_cap)
            buf[:, :, : self._n] = st[:, :, : self._n]
            self._stats[name] = buf

    def extend(self, n: int, **values: torch.Tensor | int | float | bool) -> None:
        """Append ``n`` rows; columns not given get their neutral value."""
        self._reserve(self._n + n)
        a, b = self._n, self._n + n
        for name, dtype in COLUMNS.items():
            val = values.get(name, _DEFAULTS[name])
            if isinstance(val, torch.Tensor):
                if val.shape[0] != n:
                    raise ValueError(f"column {name}: {val.shape[0]} values for {n} rows")
                self._cols[name][a:b] = val.to(dtype)
            else:
                self._cols[name][a:b] = val
        for name in STATS:
            self._stats[name][:, :, a:b] = 0.0
        self._n = b

    def _set(self, cols: dict[str, torch.Tensor], stats: dict[str, torch.Tensor]) -> None:
        self._cols, self._stats = cols, stats
        self._n = int(cols["pos"].shape[0])

    def gather(self, idx: torch.Tensor) -> None:
        """Keep rows ``idx`` in that order."""
        self.fold()
        self._set({k: self[k].index_select(0, idx) for k in COLUMNS},
                  {k: self[k].index_select(2, idx) for k in STATS})

    def merged_rows(self, members: torch.Tensor, group: torch.Tensor, rep: torch.Tensor, last: torch.Tensor,
                    n_groups: int) -> dict[str, torch.Tensor]:
        """Column values of ``n_groups`` merged rows: counts and statistics summed over members,
        position of each group's last member, other columns from its representative member."""
        self.fold()
        out: dict[str, torch.Tensor] = {}
        for name in COLUMNS:
            out[name] = self[name].index_select(0, rep).clone()
        out["pos"] = self["pos"].index_select(0, last)
        out["count"] = torch.zeros(n_groups).index_add_(0, group, self["count"].index_select(0, members))
        out["hits"] = torch.zeros(n_groups).index_add_(0, group, self["hits"].index_select(0, members))
        out["last_access"] = torch.zeros(n_groups, dtype=torch.long).scatter_reduce_(
            0, group, self["last_access"].index_select(0, members), reduce="amax")
        out["boundary"] = torch.zeros(n_groups, dtype=torch.bool)
        out["eol"] = torch.zeros(n_groups, dtype=torch.long).index_add_(
            0, group, self["eol"].index_select(0, members).long()) > 0  # a group holding a line end ends a line
        for name in STATS:
            src = self[name].index_select(2, members)
            out[name] = torch.zeros(self.layers, self.heads, n_groups).index_add_(2, group, src)
        return out

    def replace(self, kept: torch.Tensor, merged: dict[str, torch.Tensor] | None, order: torch.Tensor) -> None:
        """Rows = kept rows followed by merged rows, then permuted by ``order``."""
        self.fold()
        cols, stats = {}, {}
        for name in COLUMNS:
            col = self[name].index_select(0, kept)
            if merged is not None:
                col = torch.cat([col, merged[name]])
            cols[name] = col.index_select(0, order)
        for name in STATS:
            st = self[name].index_select(2, kept)
            if merged is not None:
                st = torch.cat([st, merged[name]], dim=2)
            stats[name] = st.index_select(2, order)
        self._set(cols, stats)

    def log_count(self) -> torch.Tensor | None:
        """log(n) per slot, or None when no slot stands for more than one token."""
        c = self["count"]
        return torch.log(c) if bool((c > 1).any()) else None

    def check(self) -> None:
        """Raise if columns disagree in length or positions are not strictly increasing."""
        n = len(self)
        for name in (*COLUMNS, *STATS):
            if self[name].shape[-1] != n:
                raise AssertionError(f"slot column {name} has {self[name].shape[-1]} rows, expected {n}")
        pos = self["pos"]
        if n > 1 and not bool((pos[1:] > pos[:-1]).all()):
            raise AssertionError("logical positions are not strictly increasing")


_DEFAULTS: dict[str, int | float | bool] = {
    "pos": 0, "token": 0, "seg": -1, "kind": int(SegmentKind.TEXT), "subtask": -1, "block_type": 0,
    "block_id": -1, "depth": 0, "boundary": False, "eol": False, "count": 1.0, "state": int(State.ACTIVE),
    "protect": False, "named": False, "name": -1, "spells": False, "line": -1, "twin": False, "rare": 0, "cold": 0,
    "last_access": 0, "hits": 0.0,
}
