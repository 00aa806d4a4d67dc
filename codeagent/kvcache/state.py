"""The session state of a managed cache: one object the manager reads and writes, and snapshots copy."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import torch

from codeagent.kvcache.slots import SlotTable


@dataclass
class KVCounters:
    """What compression has done so far in this session (reported in ``KVStats``)."""

    dropped_tokens: int = 0
    merged_tokens: int = 0
    commits: int = 0
    compressions: int = 0
    pinned_overflow: int = 0
    compress_s: float = 0.0
    events: list[dict] = field(default_factory=list)


@dataclass
class LifecycleBook:
    """Lifecycle bookkeeping: committed subtasks, those still waiting to be folded, the open debug round."""

    committed: set[int] = field(default_factory=set)
    unfolded: list[tuple[int, str]] = field(default_factory=list)
    """Committed subtasks (index, name) not yet folded into summaries, oldest first."""
    debug: str | None = None
    since_check: int = 0
    """Tokens appended since the last lifecycle (cold) check."""


@dataclass
class CacheState:
    """Everything appends, generations and compressions change: the KV tensors, the slot table beside
    them, the logical length and counters. ``copy.deepcopy`` of it is a complete snapshot."""

    cache: object
    table: SlotTable
    logical: int = 0
    steps: int = 0
    segments: int = 0
    subtasks: dict[str, int] = field(default_factory=dict)
    last_logits: torch.Tensor | None = None
    peak_slots: int = 0
    book: LifecycleBook = field(default_factory=LifecycleBook)
    counters: KVCounters = field(default_factory=KVCounters)
    named: set[str] = field(default_factory=set)
    """Identifiers the issue spans name: headers defining one of them are pinned (``kv.pin_named``)."""
    names: dict[str, int] = field(default_factory=dict)
    """Names definition headers bind, by id (the slot table's ``name`` column)."""
    uses: Counter[str] = field(default_factory=Counter)
    """How often the session has written each identifier (appended and generated text)."""
    defs: Counter[str] = field(default_factory=Counter)
    """How many definition headers of each name the session holds."""
    lines: Counter[int] = field(default_factory=Counter)
    """How often the session has appended each line text (the slot table's ``line`` keys)."""
    line_words: dict[int, frozenset[str]] = field(default_factory=dict)
    """The identifiers of each line key the session has written."""
    module_calls: set[int] = field(default_factory=set)
    """The line keys that open a module-level statement with a call (``uses.module_calls``)."""

    def name_ids(self, names: list[str | None]) -> list[int]:
        """Stable ids of ``names`` (-1 for None), new names registered."""
        return [-1 if n is None else self.names.setdefault(n, len(self.names)) for n in names]

    def name_refs(self) -> torch.Tensor:
        """References to each registered name by id: its uses besides its definitions."""
        out = [0] * len(self.names)
        for name, i in self.names.items():
            out[i] = max(self.uses[name] - self.defs[name], 0)
        return torch.tensor(out, dtype=torch.long)

    def refs(self) -> torch.Tensor:
        """Per slot: how often the session uses the name its definition header binds, besides its definitions
        (0 outside definition headers). Computed on demand: only the pinned cap reads it."""
        name = self.table["name"]
        if not self.names:
            return torch.zeros(len(self.table), dtype=torch.long)
        return torch.where(name >= 0, self.name_refs()[name.clamp(min=0)], 0)

    def subtask_index(self, name: str | None) -> int:
        """Stable small integer for a subtask name (-1 for none)."""
        if name is None:
            return -1
        return self.subtasks.setdefault(name, len(self.subtasks))
