"""The KV manager: when to compress, with which policy, and the lifecycle bookkeeping."""

from __future__ import annotations

import math
import time

import torch

from codeagent.kvcache import lifecycle
from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.ops import apply_plan
from codeagent.kvcache.registry import POLICIES, load_policies
from codeagent.kvcache.tags import State
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


class KVManager:
    """Keeps the engine's cache within budget using a registered policy.

    Compression runs before an append or a decoded token would exceed a hard ``budget_tokens``,
    every ``compression_interval`` appended tokens and every ``score_update_freq`` decoded tokens,
    on every commit, and on an explicit ``enforce``. Nothing happens below ``min_tokens`` slots.
    """

    def __init__(self, cfg: KVConfig) -> None:
        load_policies()
        self.cfg = cfg
        self.policy = POLICIES.get(cfg.policy)(cfg)
        self.reset()

    def reset(self) -> None:
        """Forget counters and lifecycle state (the engine's cache was emptied)."""
        self.dropped_tokens = 0
        self.merged_tokens = 0
        self.commits = 0
        self.compressions = 0
        self.pinned_overflow = 0
        self.compress_s = 0.0
        self.since_check = 0
        self.debug: str | None = None
        self.committed: set[int] = set()
        self.unfolded: list[tuple[int, str]] = []  # committed subtasks waiting for budget pressure
        self.events: list[dict] = []

    # ----------------------------------------------------------------------- budget
    def budget(self, engine) -> int | None:
        """Slot budget now: ``budget_tokens``, else ``target_ratio`` of the logical length; never
        below ``min_tokens``. None when there is no budget."""
        if self.cfg.budget_tokens is not None:
            b = self.cfg.budget_tokens
        elif self.cfg.target_ratio < 1.0:
            b = math.ceil(self.cfg.target_ratio * engine.logical)
        else:
            return None
        return max(b, self.cfg.min_tokens)

    def view(self, engine) -> CacheView:
        """A read-only view of the cache for the policy."""
        return CacheView(engine.table, self.cfg, engine.logical, engine.steps, engine.cache)

    def _apply(self, engine, plan: CompressionPlan, why: str) -> None:
        res = apply_plan(engine.cache, engine.table, plan)
        if res.after != res.before:
            self.compressions += 1
            self.dropped_tokens += res.dropped
            self.merged_tokens += res.merged
            self.events.append({"why": why, "before": res.before, "after": res.after, "dropped": res.dropped,
                                "merged": res.merged, "groups": res.groups, "note": plan.note})

    def enforce(self, engine, budget: int | None = None, why: str = "budget") -> None:
        """Bring the cache to at most ``budget`` slots (default: the current budget)."""
        budget = self.budget(engine) if budget is None else max(budget, 1)
        n = len(engine.table)
        if budget is None or n <= budget or n < self.cfg.min_tokens:
            return
        t0 = time.perf_counter()
        if self.policy.uses_lifecycle:
            self._fold_unfolded(engine, budget)
        if len(engine.table) > budget:
            self._plan_to(engine, budget, why)
        self.compress_s += time.perf_counter() - t0

    def _plan_to(self, engine, budget: int, why: str) -> None:
        """Run the policy's plan down to ``budget``, with the newest-slots fallback."""
        if self.policy.uses_lifecycle:
            self._cap_pinned(engine, budget)
            view = self.view(engine)
            lifecycle.mark_evictable(engine.table, self.policy.scores(view), len(engine.table) - budget)
        plan = self.policy.plan(self.view(engine), budget)
        self._apply(engine, plan, why)
        if len(engine.table) > budget and self.policy.name != "full":
            # a policy that overshoots never breaks the budget: keep its newest slots, and say so
            n = len(engine.table)
            self._apply(engine, CompressionPlan(keep=list(range(n - budget, n)), note="fallback: newest slots"),
                        f"fallback after {self.policy.name}")

    def _fold(self, engine, idx: int, subtask: str) -> None:
        """Fold committed subtask ``idx`` into its summary entries (the policy's commit plan)."""
        if len(engine.table) >= max(self.cfg.min_tokens, 2):
            plan = self.policy.on_commit(self.view(engine), idx)
            if plan is not None:
                self._apply(engine, plan, f"commit {subtask}")

    def _fold_unfolded(self, engine, budget: int) -> None:
        """Under pressure, fold waiting committed subtasks, oldest first, until the cache fits."""
        while self.unfolded and len(engine.table) > budget:
            self._fold(engine, *self.unfolded.pop(0))

    def _cap_pinned(self, engine, budget: int) -> None:
        """Past ``pinned_cap`` x budget pinned slots: merge the oldest pinned ones pairwise, or
        release the lowest-scoring ones to the active state (``pinned_overflow``)."""
        t = engine.table
        cap = int(self.cfg.pinned_cap * budget)
        pinned = (t["state"] == int(State.PINNED)).nonzero()[:, 0]
        excess = pinned.numel() - cap
        if excess <= 0:
            return
        if self.cfg.pinned_overflow == "release_lowest":
            scores = self.policy.scores(self.view(engine))[pinned]
            released = pinned[torch.argsort(scores)[:excess]]
            t.cols["state"][released] = int(State.ACTIVE)
            self.pinned_overflow += int(released.numel())
            self.events.append({"why": "pinned-cap", "released": int(released.numel())})
            return
        merge, used = [], set()
        blocks = t["block_id"]
        for a, b in zip(pinned[:-1].tolist(), pinned[1:].tolist()):
            if len(merge) >= excess:
                break
            if a in used or b in used or b != a + 1 or int(blocks[a]) != int(blocks[b]):
                continue
            merge.append(([a, b], [1.0, 1.0]))
            used.update((a, b))
        if merge:
            keep = [i for i in range(len(t)) if i not in used]
            self.pinned_overflow += len(merge)
            self._apply(engine, CompressionPlan(keep=keep, merge=merge, note=f"pinned cap: merged {len(merge)} pairs"),
                        "pinned-cap")

    # ----------------------------------------------------------------------- engine hooks
    def chunk_size(self, engine, default: int) -> int:
        """Prefill chunk length: under a hard budget small enough that a chunk always fits."""
        if self.cfg.budget_tokens is None or self.policy.name == "full":
            return default
        return max(min(default, self.budget(engine) // 4), 1)

    def before_append(self, engine, n: int) -> None:
        """Make room for ``n`` new tokens under a hard budget, with some slack so that decoding
        does not compress at every token."""
        if self.cfg.budget_tokens is None:
            return
        budget = self.budget(engine)
        if budget is not None and len(engine.table) + n > budget:
            slack = max(n, min(self.cfg.score_update_freq, budget // 8))
            self.enforce(engine, max(budget - slack, 1), why="append")

    def pin_rows(self, engine, n: int) -> None:
        """The last ``n`` rows are new: pin what their tags call for."""
        lifecycle.pin_new(engine.table, len(engine.table) - n, self.cfg, self.debug is not None)

    def after_append(self, engine, n: int, info, compress: bool = True) -> None:
        """Run lifecycle checks at intervals; enforce the budget."""
        self.since_check += n
        if self.since_check >= self.cfg.compression_interval:
            self.since_check = 0
            if self.policy.needs_attention:  # coldness is read from attention statistics
                lifecycle.cold_check(engine.table, self.cfg)
            if compress and self.cfg.budget_tokens is None:
                self.enforce(engine, why="interval")
        if compress and self.cfg.budget_tokens is not None:
            self.enforce(engine, why="append")

    def after_retag(self, engine) -> None:
        """Generated text was re-tagged: pin what its new tags call for."""
        t = engine.table
        active = t["state"] == int(State.ACTIVE)
        before = t["state"].clone()
        lifecycle.pin_new(t, 0, self.cfg, self.debug is not None)
        # only active slots may become pinned here; keep every other state as it was
        t.cols["state"][~active] = before[~active]

    def on_decode(self, engine, generated: int) -> None:
        """Every ``score_update_freq`` decoded tokens."""
        self.enforce(engine, why="decode")

    def commit(self, engine, subtask: str) -> int:
        """The agent finished ``subtask``: commit its slots, fold them into summaries, enforce."""
        idx = engine.subtask_index(subtask)
        moved = lifecycle.commit(engine.table, idx)
        self.committed.add(idx)
        self.commits += 1
        t0 = time.perf_counter()
        if self.policy.uses_lifecycle and self.cfg.fold_commits == "pressure":
            self.unfolded = [(i, s) for i, s in self.unfolded if i != idx] + [(idx, subtask)]
        elif self.policy.uses_lifecycle:
            self._fold(engine, idx, subtask)
        self.compress_s += time.perf_counter() - t0
        self.events.append({"why": "commit", "subtask": subtask, "slots": moved})
        self.enforce(engine, why="commit")
        return moved

    def set_debug(self, engine, subtask: str | None) -> None:
        """Open (pin error lines) or close a debug round."""
        self.debug = subtask
        lifecycle.set_debug(engine.table, subtask is not None, self.committed)
