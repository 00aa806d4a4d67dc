"""The lifecycle wrapper (CommitKV): pins stay, committed subtasks fold into summary entries, the
score is discounted by lifecycle state. Wraps any policy: ``default = Lifecycle(CodeComp())``, as
kvpress writes ``DecodingPress(base_press=...)``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from codeagent.kvcache import lifecycle
from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import NAMED_HEADERS, Apply, Policy, from_settings, line_units, named_units
from codeagent.kvcache.rare_uses import newest_rows, rare_use_ranks
from codeagent.kvcache.slots import SlotTable, line_numbers
from codeagent.kvcache.state import CacheState
from codeagent.kvcache.tags import BlockType, SegmentKind, State
from codeagent.kvcache.twins import twin_rows
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan

STATE_FACTOR = {State.ACTIVE: 1.0, State.STAGED: 0.8, State.COMMITTED: 0.5, State.EVICTABLE: 0.1, State.PINNED: 1.0}
"""``ranking="factor"``: multiplier on the base score by lifecycle state."""
STATE_PRIORITY = {State.ACTIVE: 3.0, State.STAGED: 2.0, State.COMMITTED: 1.0, State.EVICTABLE: 0.0, State.PINNED: 4.0}
"""``ranking="priority"``: added to a base score in [0, 1], so slots are evicted state by state."""
USED = 3
"""``release_by="uses"``: uses past which a definition counts as simply used (the score decides among them)."""
REPEAT_JACCARD = 0.5
"""``release_repeats``: token-set overlap past which a pinned line repeats another."""
WAITING = {"globals": torch.tensor([int(BlockType.GLOBAL)], dtype=torch.int8), "definitions": NAMED_HEADERS}
"""``release_waiting``: the block types whose unused definitions count as used."""
KEEPS_NAMES = {"bindings": WAITING["globals"], "definitions": NAMED_HEADERS}
"""``release_keeps_names``: the block types whose released lines keep their names."""
BODY_LINES = torch.tensor(sorted(lifecycle.BODY_BLOCKS), dtype=torch.int8)
"""``lift_rare_uses``: the block types of the lines that can show a use (code in a body or at module level)."""


def _heading_uses(table: SlotTable, units: list[list[int]], refs: torch.Tensor) -> list[int]:
    """Per pinned line: its uses, and for a pinned body line (a short body) those of the header above it."""
    bt, seg = table["block_type"].tolist(), table["seg"].tolist()
    out: list[int] = []
    head: tuple[int, int] | None = None  # (segment, uses) of the last header line
    for u in units:
        kind = next((bt[i] for i in u if bt[i] != int(BlockType.NONE)), int(BlockType.NONE))
        n = int(refs[u].max())
        if kind in lifecycle.HEADER_BLOCKS:
            head = (seg[u[0]], n)
        elif kind in lifecycle.BODY_BLOCKS and head is not None and head[0] == seg[u[0]]:
            n = max(n, head[1])
        elif kind != int(BlockType.NONE):
            head = None
        out.append(n)
    return out


def continuations(table: SlotTable, units: list[list[int]]) -> list[bool]:
    """Per pinned line: whether it continues a definition header begun on an earlier line (a parameter of a
    ``def f(`` written one per line, the closing ``) -> T:``), not the line that holds the name. A header's first
    slot may end the line above (``\\ndef`` in a JSON string is one token): the header then begins on the next."""
    rows = torch.isin(table["block_type"], NAMED_HEADERS).nonzero()[:, 0]
    if rows.numel() == 0:
        return [False] * len(units)
    eol, line = table["eol"].long(), line_numbers(table["eol"])
    blocks, which = torch.unique(table["block_id"][rows], return_inverse=True)
    first = torch.full((len(blocks),), len(table), dtype=torch.long).scatter_reduce(0, which, rows, "amin")
    begins = torch.full((len(table),), -1, dtype=torch.long)
    begins[rows] = (line[first] + eol[first])[which]  # per header slot: the line its header begins on
    on, lines = begins.tolist(), line.tolist()
    return [any(0 <= on[i] < lines[u[0]] for i in u) for u in units]


def named_tail(view: CacheView, pool: torch.Tensor, count: int) -> list[int]:
    """At least ``count`` slots of ``pool`` (pinned slots of named definitions, ascending), whole lines, in
    ``named_units``' order: the lines farthest below their definition's header first, the header itself last."""
    out: list[int] = []
    for unit in named_units(view, pool):
        if len(out) >= count:
            break
        out += unit
    return out


def _by_state(view: CacheView, values: dict[State, float], fill: float) -> torch.Tensor:
    lut = torch.full((max(int(s) for s in State) + 1,), fill)
    for s, v in values.items():
        lut[int(s)] = v
    return lut[view.table["state"].long()]


def summary_plan(view: CacheView, subtask: int, entries: int, weights: torch.Tensor,
                 edges: torch.Tensor) -> CompressionPlan | None:
    """Merge the committed, unpinned slots of ``subtask`` (not in ``edges``) into ``entries`` summary
    slots per block."""
    t = view.table
    target = (t["subtask"] == subtask) & (t["state"] == int(State.COMMITTED)) & (t["count"] >= 1)
    target &= ~edges
    idx = target.nonzero()[:, 0]
    if idx.numel() < 2:
        return None
    merge: list[tuple[list[int], list[float]]] = []
    blocks = t["block_id"][idx]
    for b in torch.unique(blocks).tolist():
        members = idx[blocks == b]
        if members.numel() < 2:
            continue
        for chunk in torch.tensor_split(members, min(entries, members.numel())):
            if chunk.numel() >= 2:
                merge.append((chunk.tolist(), [max(float(weights[j]), 1e-4) for j in chunk]))
    if not merge:
        return None
    merged = {m for g, _ in merge for m in g}
    keep = [i for i in range(len(view)) if i not in merged]
    return CompressionPlan(keep=keep, merge=merge, note=f"commit: {len(merged)} slots into {len(merge)} summaries")


@dataclass
class Lifecycle:
    """``base`` under the lifecycle: pinned slots (signatures, imports, the issue, open errors) are
    always kept; the base score is weighed by lifecycle state; committed subtasks fold into summary
    entries (weighted by the base's ``merge_weights``); past the pinned cap, pins merge or are released."""

    base: Policy
    ranking: Literal["factor", "priority"] = "factor"
    """How the state enters the score: ``factor`` multiplies the base score (STATE_FACTOR);
    ``priority`` ranks by state first, the base score within a state (STATE_PRIORITY)."""
    summary_entries: int = 4
    fold_commits: Literal["eager", "pressure"] = "pressure"
    pinned_cap: float = 0.75
    named_cap: float = 0.5
    pinned_overflow: Literal["merge_oldest", "release_lowest", "evict_lowest"] = "evict_lowest"
    release_by: Literal["uses", "uses_bodies", "score"] = "uses"
    release_waiting: Literal["globals", "definitions"] = "definitions"
    release_repeats: Literal["none", "globals", "all"] = "globals"
    release_continuations: bool = True
    release_few_uses: int = 2
    release_keeps_names: Literal["none", "bindings", "definitions"] = "bindings"
    pin_repeated_uses: bool = True
    pin_module_calls: bool = True
    pin_twin_lines: int = 3
    lift_rare_uses: int = 1
    min_tokens: int = 256
    """No commit folding below this many slots. The knobs are documented on ``KVConfig``."""

    uses_lifecycle: ClassVar[bool] = True

    @classmethod
    def from_settings(cls, cfg: KVConfig, **given: object) -> "Lifecycle":
        """The wrapper's knobs from the ``kv`` settings (``base`` and ``ranking`` given)."""
        return from_settings(cls, cfg, **given)

    @property
    def needs_attention(self) -> bool:
        return self.base.needs_attention

    @property
    def compresses(self) -> bool:
        return self.base.compresses

    # ----------------------------------------------------------------------- scoring and plan
    def edges(self, view: CacheView) -> torch.Tensor:
        return self.base.edges(view)

    def must_keep(self, view: CacheView) -> torch.Tensor:
        return self.base.must_keep(view) | view.pinned()

    def scores(self, view: CacheView) -> torch.Tensor:
        s = self.base.scores(view)
        if self.ranking == "priority":
            s = _by_state(view, STATE_PRIORITY, 0.0) + s
        else:
            s = s * _by_state(view, STATE_FACTOR, 1.0)
        rare = view.table["rare"]
        if bool(rare.any()):  # the rare uses' lines above every other slot, in their order (``lift_rare_uses``)
            s = torch.where(rare > 0, float(s.max()) + 1.0 + rare.to(s.dtype), s)
        return s

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        return self.base.select(view, self.scores(view), budget, self.must_keep(view))

    # ----------------------------------------------------------------------- lifecycle steps
    def make_room(self, state: CacheState, budget: int, apply: Apply) -> None:
        """Fold waiting commits, oldest first, until the cache fits; if it still does not, apply the
        pinned cap and mark the lowest-scoring committed slots evictable for the plan."""
        while state.book.unfolded and len(state.table) > budget:
            self._fold(state, *state.book.unfolded.pop(0), apply)
        if len(state.table) <= budget:
            return
        if self.pin_repeated_uses:
            self._pin_repeated_uses(state)
        self._pin_twins(state)
        state.table.cols["rare"].zero_()
        self._cap_pinned(state, budget, apply)
        self._lift_rare_uses(state)
        view = CacheView.of(state)
        lifecycle.mark_evictable(state.table, self.scores(view), len(state.table) - budget)

    def on_commit(self, state: CacheState, subtask: int, name: str, apply: Apply) -> None:
        """Fold the subtask now (eager) or queue it until the budget needs the room (pressure)."""
        if self.fold_commits == "pressure":
            state.book.unfolded = [(i, s) for i, s in state.book.unfolded if i != subtask] + [(subtask, name)]
        else:
            self._fold(state, subtask, name, apply)

    def _fold(self, state: CacheState, subtask: int, name: str, apply: Apply) -> None:
        """Fold committed ``subtask`` into its summary entries."""
        if len(state.table) >= max(self.min_tokens, 2):
            view = CacheView.of(state)
            plan = summary_plan(view, subtask, self.summary_entries, self.base.merge_weights(view), self.edges(view))
            if plan is not None:
                apply(plan, f"commit {name}")

    def _release(self, state: CacheState, rows: list[int]) -> int:
        """Unpin ``rows``: evictable under ``evict_lowest``, else active. Returns how many."""
        released = torch.tensor(rows, dtype=torch.long)
        evict = self.pinned_overflow == "evict_lowest"
        state.table.cols["state"][released] = int(State.EVICTABLE if evict else State.ACTIVE)
        state.counters.pinned_overflow += len(rows)
        state.counters.events.append({"why": "pinned-cap", "released": len(rows)})
        return len(rows)

    def _pin_repeated_uses(self, state: CacheState) -> None:
        """Per defined name, pin the newest cached line that uses it and whose text the session has written twice
        or more (``pin_repeated_uses``): the pattern the code around it repeats (``return Settings(timeout,
        method, ...)``), which the next such line copies; with ``pin_module_calls`` a line opening a module-level
        call counts too (a registration). Pinned under the line's most used name, so the pinned cap ranks it by
        that name's uses, as it ranks the definition. A text with a pinned line already gets no second one."""
        t = state.table
        line = t["line"]
        active = (line >= 0) & (t["state"] == int(State.ACTIVE)) & (t["name"] < 0)
        if not state.names or not bool(active.any()):
            return
        held = set(line[t["state"] == int(State.PINNED)].tolist())
        keys, newest = newest_rows(line, active)
        best: dict[str, tuple[int, int]] = {}  # name -> (newest row, key) of its newest repeated use line
        for key, row in zip(keys.tolist(), newest.tolist()):
            repeated = state.lines[key] >= 2 or (self.pin_module_calls and key in state.module_calls)
            if key in held or not repeated:
                continue
            for name in sorted(state.line_words.get(key, ())):  # sorted: ties below go the same way every run
                if name in state.names and row > best.get(name, (-1, 0))[0]:
                    best[name] = (row, key)
        under: dict[int, tuple[str, int]] = {}  # row -> (name, key): of the names a line is newest for, the most used
        refs = state.name_refs().tolist()
        for name, (row, key) in best.items():
            if row not in under or refs[state.names[name]] > refs[state.names[under[row][0]]]:
                under[row] = (name, key)
        eol, cols = t["eol"], t.cols
        for row, (name, key) in under.items():
            start = row
            while start > 0 and int(line[start - 1]) == key and not bool(eol[start - 1]) and bool(active[start - 1]):
                start -= 1
            cols["state"][start:row + 1] = int(State.PINNED)
            cols["name"][start:row + 1] = state.names[name]

    def _pin_twins(self, state: CacheState) -> None:
        """Pin the active slots of the ``pin_twin_lines`` lines after the twin of the newest lines
        (``twins.twin_rows``), marked ``twin`` for the pinned cap to release last; the lines an earlier call pinned
        so go back to active first (the newest lines have moved on)."""
        t, cols = state.table, state.table.cols
        old = t["twin"]
        if bool(old.any()):
            cols["state"][old & (t["state"] == int(State.PINNED))] = int(State.ACTIVE)
            cols["twin"][old] = False
        rows = twin_rows(t["line"], t["eol"], state.line_words, self.pin_twin_lines)
        rows = rows[t["state"][rows] == int(State.ACTIVE)]
        cols["state"][rows] = int(State.PINNED)
        cols["twin"][rows] = True

    def _lift_rare_uses(self, state: CacheState) -> None:
        """Rank the newest use line of each cached definition the session uses at least once and at most
        ``lift_rare_uses`` times (besides its definitions) above every other unpinned slot (``rare_uses``): code in a
        body or at module level, not a header, in the active state."""
        t = state.table
        if not self.lift_rare_uses or not state.names:
            return
        refs = state.name_refs().tolist()
        held = set(t["name"][t["name"] >= 0].unique().tolist())
        rare = {n for n, i in state.names.items() if i in held and 1 <= refs[i] <= self.lift_rare_uses}
        candidate = (t["state"] == int(State.ACTIVE)) & (t["name"] < 0) & torch.isin(t["block_type"], BODY_LINES)
        t.cols["rare"][:] = rare_use_ranks(t["line"], candidate, state.line_words, rare)

    def _name_of(self, table: SlotTable, unit: list[int]) -> list[int]:
        """The slots of a pinned definition line up to its name and one more (``_ForkingPickler =``, ``def f(``) that
        the pinned cap releases after the rest of every line it reaches, as ``release_keeps_names`` says (all of a line
        an earlier cap already cut to its name); none for a line without the name (an import's line is little more
        than its names)."""
        if self.release_keeps_names == "none":
            return []
        rows = torch.tensor(unit, dtype=torch.long)
        kinds = KEEPS_NAMES[self.release_keeps_names]
        at = (table["spells"][rows] & torch.isin(table["block_type"][rows], kinds)).nonzero()[:, 0]
        return unit[:int(at[-1]) + 2] if at.numel() else []

    def _uses(self, state: CacheState) -> torch.Tensor:
        """Per slot, how used the definition it heads counts for the pinned cap: its references, at most
        ``USED``. A definition nothing uses yet counts as used when ``release_waiting`` names its kind (a module
        binding; with ``definitions`` also a function or class): it is waiting for code not shown yet. One of that
        kind used a little counts at least ``release_few_uses`` times."""
        refs = state.refs().clamp(max=USED)
        kind = torch.isin(state.table["block_type"], WAITING[self.release_waiting])
        return torch.where(kind, torch.where(refs == 0, USED, refs.clamp(min=self.release_few_uses)), refs)

    def _repeats(self, table: SlotTable, units: list[list[int]], uses: list[int], mean: list[float]) -> list[bool]:
        """Per pinned line: whether it repeats (token-set Jaccard >= REPEAT_JACCARD) a line of the same use count
        that scores higher (``release_repeats``; ``globals``: module binding lines only). All pairs at once: the
        overlaps are one sparse product of the lines' token incidence."""
        n = len(units)
        if self.release_repeats == "none" or n < 2:
            return [False] * n
        flat = torch.tensor([i for u in units for i in u], dtype=torch.long)
        rows = torch.repeat_interleave(torch.arange(n), torch.tensor([len(u) for u in units]))
        tokens = table["token"][flat]
        vocab = int(tokens.max()) + 1
        pairs = torch.unique(rows * vocab + tokens)  # (line, token) keys, each token of a line once, sorted
        line, cols = pairs // vocab, torch.unique(pairs % vocab, return_inverse=True)[1]
        inc = torch.sparse_coo_tensor(torch.stack([line, cols]), torch.ones(len(pairs)),
                                      (n, int(cols.max()) + 1), check_invariants=False, is_coalesced=True)
        with warnings.catch_warnings():  # torch's one-time note that sparse CSR (used inside the product) is beta
            warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
            inter = torch.sparse.mm(inc, inc.t()).to_dense()  # shared distinct tokens per pair of lines
        size = inter.diagonal()
        similar = inter >= REPEAT_JACCARD * (size[:, None] + size[None, :] - inter)
        if self.release_repeats == "globals":
            eligible = torch.zeros(n, dtype=torch.bool)
            eligible[rows[table["block_type"][flat] == int(BlockType.GLOBAL)]] = True
        else:
            eligible = torch.ones(n, dtype=torch.bool)
        rank = torch.empty(n, dtype=torch.long)  # 0 = the best score; ties in line order
        rank[torch.argsort(torch.tensor(mean, dtype=torch.float64), descending=True, stable=True)] = torch.arange(n)
        uses_t = torch.tensor(uses)
        better = (rank[None, :] < rank[:, None]) & (uses_t[None, :] == uses_t[:, None]) & eligible[None, :]
        return (eligible & (similar & better).any(dim=1)).tolist()

    def _cap_pinned(self, state: CacheState, budget: int, apply: Apply) -> None:
        """Past ``pinned_cap`` x budget pinned slots, or past the room the sinks and the recent window leave (what
        must stay would then be cut by position alone): first release the lines of named definitions past
        ``named_cap`` x budget (``named_tail``), then merge the oldest other pinned ones pairwise, or release whole
        lines to the active state or as evictable (``pinned_overflow``): the lines continuing a header of several
        first (``release_continuations``), then the least used definitions first (``release_by``), the lines after the
        newest lines' twin (``pin_twin_lines``) last; a released definition line keeps its name until every line the
        order reaches has gone (``release_keeps_names``)."""
        t, view = state.table, CacheView.of(state)  # the view reads the table, so it sees the releases below
        is_pinned = t["state"] == int(State.PINNED)
        edges = self.edges(view)
        at_edge = edges.tolist()

        def freed(rows: list[int]) -> int:  # a released pin inside the edges stays all the same
            return sum(not at_edge[i] for i in rows)

        excess = int(is_pinned.sum()) - int(self.pinned_cap * budget)
        tight = int((is_pinned | edges).sum()) - budget  # what must stay (pins and edges) past the budget
        if excess <= 0 and tight <= 0:
            return
        # the caller's protected slots and the issue (the task itself) are never released or merged
        kept = t["protect"] | (t["kind"] == int(SegmentKind.ISSUE))
        named = is_pinned & t["named"] & ~kept
        over = min(int(named.sum()) - int(self.named_cap * budget), excess)
        if over > 0:
            out = named_tail(view, named.nonzero()[:, 0], over)
            excess -= self._release(state, out)
            tight -= freed(out)
            if excess <= 0 and tight <= 0:
                return
        pinned = (is_pinned & ~kept & ~t["named"]).nonzero()[:, 0]
        if self.pinned_overflow != "merge_oldest":  # whole lines, the least used, then the lowest scoring first
            scores = self.scores(view)
            refs = self._uses(state) if self.release_by != "score" else torch.zeros(len(view), dtype=torch.long)
            units = line_units(view, pinned)
            if self.release_by == "uses_bodies":
                uses = _heading_uses(t, units, refs)
            else:
                uses = [int(refs[u].max()) for u in units]
            mean = [float(scores[u].mean()) for u in units]
            repeats = self._repeats(t, units, uses, mean)
            later = continuations(t, units) if self.release_continuations else [False] * len(units)
            twin = t["twin"][[u[0] for u in units]].tolist()
            order = sorted(range(len(units)), key=lambda k: (twin[k], not later[k], uses[k], not repeats[k], mean[k]))

            def steps() -> Iterator[list[int]]:
                """What goes, in order: each line but the name it keeps, then those names, then the twin's lines."""
                names: list[list[int]] = []
                for k in order:
                    if twin[k]:
                        yield from names
                        names = []
                        yield units[k]
                        continue
                    names.append(self._name_of(t, units[k]))
                    yield units[k][len(names[-1]):]
                yield from names

            out = []
            for rows in steps():
                if len(out) >= excess and tight <= 0:
                    break
                out += rows
                tight -= freed(rows)
            if out:
                self._release(state, out)
            return
        merge, used = [], set()
        blocks = t["block_id"]
        for a, b in zip(pinned[:-1].tolist(), pinned[1:].tolist()):
            if len(merge) >= max(excess, tight):  # a merged pair is one slot fewer
                break
            if a in used or b in used or b != a + 1 or int(blocks[a]) != int(blocks[b]):
                continue
            merge.append(([a, b], [1.0, 1.0]))
            used.update((a, b))
        if merge:
            keep = [i for i in range(len(t)) if i not in used]
            state.counters.pinned_overflow += len(merge)
            apply(CompressionPlan(keep=keep, merge=merge, note=f"pinned cap: merged {len(merge)} pairs"), "pinned-cap")
