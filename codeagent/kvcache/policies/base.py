"""What every policy shares: the ``Policy`` dataclass (its knobs, scores, must-keep set and
selection) and the keep/merge/drop helpers all policies select with, so comparisons are fair."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Callable, ClassVar, TypeVar

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.named import HEADERS
from codeagent.kvcache.registry import POLICIES
from codeagent.kvcache.state import CacheState
from codeagent.kvcache.tags import SegmentKind
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan

__all__ = ["Apply", "Policy", "POLICIES", "from_settings", "select_topk", "hybrid_select"]

Apply = Callable[[CompressionPlan, str], None]
"""How a policy has an intermediate plan applied (and counted) by the manager: ``apply(plan, why)``."""

P = TypeVar("P")

NAMED_HEADERS = torch.tensor([int(b) for b in HEADERS], dtype=torch.int8)
"""Block types of a definition's header: a function, a class, a module binding (``named_units``,
``release_waiting``)."""


def _must_fit(must: torch.Tensor, view: CacheView, budget: int, edges: torch.Tensor) -> torch.Tensor:
    """Cut the must-keep set to the budget: recent and sinks (``edges``) first, then the issue (the task itself,
    usually short), then what the caller protected, then the definitions the issue names (their headers first, the
    lines deepest into a body last: ``named_units`` reversed), then the newest others."""
    if int(must.sum()) <= budget:
        return must
    struct = edges & must
    issue = must & (view.table["kind"] == int(SegmentKind.ISSUE)) & ~struct
    protect = must & view.table["protect"] & ~struct & ~issue
    named = must & view.table["named"] & ~struct & ~issue & ~protect
    others = must & ~struct & ~protect & ~issue & ~named
    order = torch.argsort(view.table["pos"], descending=True)  # newest first within a group
    named_first = [i for unit in reversed(named_units(view, named.nonzero()[:, 0])) for i in unit]
    groups = [order[g[order]].tolist() for g in (struct, issue, protect)] + [named_first, order[others[order]].tolist()]
    out = torch.zeros_like(must)
    room = budget
    for ranked in groups:  # disjoint
        out[ranked[:room]] = True
        room -= min(room, len(ranked))
    return out


def select_topk(view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor,
                edges: torch.Tensor) -> CompressionPlan:
    """Keep ``must`` and the highest scorers up to ``budget``; drop the rest."""
    must = _must_fit(must, view, budget, edges)
    free = budget - int(must.sum())
    s = scores.clone().float()
    s[must] = float("-inf")
    extra = torch.topk(s, k=min(max(free, 0), int((~must).sum()))).indices if free > 0 else torch.empty(0, dtype=torch.long)
    keep = torch.cat([must.nonzero()[:, 0], extra])
    return CompressionPlan(keep=sorted(keep.tolist()))


def line_units(view: CacheView, pool: torch.Tensor) -> list[list[int]]:
    """``pool`` (ascending slots) cut into lines: a unit ends after a slot whose token ends a line, where
    the segment changes, or where a slot outside ``pool`` sits between two pool slots."""
    if pool.numel() == 0:
        return []
    t = view.table
    cut = t["eol"][pool[:-1]] | (t["seg"][pool[1:]] != t["seg"][pool[:-1]]) | ((pool[1:] - pool[:-1]) != 1)
    ends = torch.cat([cut.nonzero()[:, 0] + 1, torch.tensor([pool.numel()])]).tolist()
    out, start = [], 0
    for e in ends:
        out.append(pool[start:e].tolist())
        start = e
    return out


def named_units(view: CacheView, pool: torch.Tensor) -> list[list[int]]:
    """``pool`` (slots of named definitions, ascending) as whole lines in the order they give way: the lines farthest
    below their definition's header first, the header itself last, older first among equals."""
    heads = set(pool[torch.isin(view.table["block_type"][pool], NAMED_HEADERS)].tolist())
    depth: list[int] = []  # per line: lines since the last header line
    units = line_units(view, pool)
    for u in units:
        header = any(i in heads for i in u)
        depth.append(0 if header or not depth else depth[-1] + 1)
    return [units[k] for k in sorted(range(len(units)), key=lambda k: (-depth[k], k))]


def select_lines(view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor, edges: torch.Tensor, *,
                 merge: bool) -> CompressionPlan:
    """Whole lines in or out (ChunkKV's unit, a line of code or log): ``must`` is kept, then the lines with the
    best mean score while they fit; slots still free hold one merged summary slot per best dropped line (when
    ``merge``). A line cut token by token reads as noise to the model; a dropped line is simply absent."""
    t = view.table
    gaps = (~edges).nonzero()[:, 0]
    start = int(gaps[-1]) + 1 if gaps.numel() else 0
    whole = edges & must
    whole[start:] = True  # the recent window (the newest run of edges), widened to start at a line start
    if start > 0 and not bool(t["eol"][start - 1]):
        cut = (t["eol"][:start - 1] | (t["seg"][1:start] != t["seg"][:start - 1])).nonzero()[:, 0]
        whole[int(cut[-1]) + 1 if cut.numel() else 0:start] = True
    must = _must_fit(must | whole, view, budget, whole)
    free = budget - int(must.sum())
    keep = set(must.nonzero()[:, 0].tolist())
    if free <= 0:
        return CompressionPlan(keep=sorted(keep))
    units = line_units(view, (~must).nonzero()[:, 0])
    s = scores.float()
    value = [float(s[u].mean()) for u in units]
    order = sorted(range(len(units)), key=lambda i: (-value[i], -units[i][-1]))  # ties: newer first
    dropped = []
    for i in order:
        if len(units[i]) <= free:
            keep.update(units[i])
            free -= len(units[i])
        else:
            dropped.append(i)
    groups = []
    blocks = view.table["block_id"]
    for i in dropped:  # best first; a summary slot per run of one block (merges never cross blocks)
        if not merge:
            break
        runs: list[list[int]] = []
        for j in units[i]:
            if runs and int(blocks[j]) == int(blocks[runs[-1][-1]]):
                runs[-1].append(j)
            else:
                runs.append([j])
        if len(runs) > free:
            break
        for r in runs:
            if len(r) > 1:
                groups.append((r, [max(float(s[j]), 1e-4) for j in r]))
            else:
                keep.add(r[0])
        free -= len(runs)
    return CompressionPlan(keep=sorted(keep), merge=groups)


def hybrid_select(view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor, edges: torch.Tensor, *,
                  mode: str, keep_fraction: float, merge_threshold: float, max_merge: int,
                  unit: str = "token") -> CompressionPlan:
    """CodeComp's hybrid: keep the top scorers, merge similar mid scorers of one block, drop the rest.

    ``mode`` selective = keep/drop only; merge = every non-kept slot may merge; hybrid = the top
    ``keep_fraction`` of the free budget is kept as is and the remainder is filled with merge groups
    (runs of at most ``max_merge`` neighbours of one block whose keys have cosine >= ``merge_threshold``).
    ``unit="line"`` decides whole lines instead (``select_lines``; merge and hybrid merge dropped lines).
    """
    if unit == "line":
        return select_lines(view, scores, budget, must, edges, merge=mode != "selective")
    if mode == "selective":
        return select_topk(view, scores, budget, must, edges)
    must = _must_fit(must, view, budget, edges)
    free = budget - int(must.sum())
    if free <= 0:
        return CompressionPlan(keep=sorted(must.nonzero()[:, 0].tolist()))
    s = scores.clone().float()
    s[must] = float("-inf")
    n_keep = int(free * keep_fraction) if mode == "hybrid" else 0
    order = torch.argsort(s, descending=True)
    kept = order[:n_keep]
    pool_mask = ~must
    pool_mask[kept] = False
    pool = pool_mask.nonzero()[:, 0]  # ascending = position order
    groups = _similar_runs(view, pool, merge_threshold, max_merge)
    slots_left = free - n_keep
    gscore = [float(scores[g].sum()) for g in groups]
    chosen = sorted(range(len(groups)), key=lambda i: -gscore[i])[:slots_left]
    keep = set(must.nonzero()[:, 0].tolist()) | set(kept.tolist())
    merge = []
    for i in chosen:
        g = groups[i]
        if len(g) == 1:
            keep.add(g[0])
        else:
            merge.append((g, [max(float(scores[j]), 1e-4) for j in g]))
    return CompressionPlan(keep=sorted(keep), merge=merge)


def _similar_runs(view: CacheView, pool: torch.Tensor, threshold: float, max_merge: int) -> list[list[int]]:
    """Split ``pool`` (ascending slots) into runs of neighbours in one block with similar keys."""
    if pool.numel() == 0:
        return []
    if pool.numel() == 1:
        return [[int(pool[0])]]
    keys = view.keys(pool)  # [n, L, D]
    keys = torch.nn.functional.normalize(keys, dim=-1)
    sim = (keys[1:] * keys[:-1]).sum(-1).mean(-1)  # mean over layers of per-layer cosine
    block = view.table["block_id"][pool]
    same = (block[1:] == block[:-1]) & (block[1:] >= 0) & (sim >= threshold)
    adjacent = (pool[1:] - pool[:-1]) == 1
    link = (same & adjacent).tolist()
    runs, cur = [], [int(pool[0])]
    for j, linked in enumerate(link):
        nxt = int(pool[j + 1])
        if linked and len(cur) < max_merge:
            cur.append(nxt)
        else:
            runs.append(cur)
            cur = [nxt]
    runs.append(cur)
    return runs


def from_settings(cls: type[P], cfg: KVConfig, **given: object) -> P:
    """A policy dataclass built from the ``kv`` settings: every field that ``KVConfig`` also names
    takes the user's value, ``given`` fields are passed as they are, the rest keep their defaults."""
    names = KVConfig.model_fields
    knobs = {f.name: getattr(cfg, f.name) for f in fields(cls) if f.init and f.name in names and f.name not in given}
    return cls(**knobs, **given)


@dataclass
class Policy:
    """A policy in kvpress's shape: a dataclass owning its knobs, with a ``scores`` rule, a must-keep
    set and a selection; ``plan`` combines them. Wrappers (``Lifecycle``) reuse the parts."""

    sink_tokens: int = 4
    """Attention-sink tokens at the start that are kept."""
    recent_tokens: int = 64
    """Most recent tokens that are kept."""

    needs_attention: ClassVar[bool] = True
    """Whether the engine must collect attention statistics for this policy (they cost prefill time)."""
    compresses: ClassVar[bool] = True
    """False for a policy that keeps everything whatever the budget (the manager then has no budget)."""
    uses_lifecycle: ClassVar[bool] = False
    """Whether the policy reads commits (the bench then prefills it with the agent's commits)."""

    @classmethod
    def from_settings(cls: type[P], cfg: KVConfig, **given: object) -> P:
        """This policy with its knobs read from the user's ``kv`` settings (``given`` wins)."""
        return from_settings(cls, cfg, **given)

    def edges(self, view: CacheView) -> torch.Tensor:
        """Sinks and the recent window."""
        return view.edges(self.sink_tokens, self.recent_tokens)

    def must_keep(self, view: CacheView) -> torch.Tensor:
        """Slots never dropped by this policy: sinks and the recent window."""
        return self.edges(view)

    def scores(self, view: CacheView) -> torch.Tensor:
        """Importance of every slot (higher is kept)."""
        return view.table["pos"].float()

    def merge_weights(self, view: CacheView) -> torch.Tensor:
        """Weights of slots merged into one summary entry (by default their scores)."""
        return self.scores(view)

    def select(self, view: CacheView, scores: torch.Tensor, budget: int, must: torch.Tensor) -> CompressionPlan:
        """Keep/merge/drop down to ``budget`` given the scores and the must-keep set."""
        return select_topk(view, scores, budget, must, self.edges(view))

    def plan(self, view: CacheView, budget: int) -> CompressionPlan:
        """Keep/merge/drop down to ``budget`` slots."""
        return self.select(view, self.scores(view), budget, self.must_keep(view))

    # lifecycle hooks: a plain policy ignores commits
    def make_room(self, state: CacheState, budget: int, apply: Apply) -> None:
        """Steps before ``plan`` when the cache is over ``budget`` (none for a plain policy)."""

    def on_commit(self, state: CacheState, subtask: int, name: str, apply: Apply) -> None:
        """Subtask ``subtask`` (called ``name``) was committed (nothing for a plain policy)."""
