"""The KV manager: when to compress, with which policy, and the lifecycle bookkeeping of spans."""

from __future__ import annotations

import math
import time

from codeagent.kvcache import lifecycle
from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.ops import apply_plan
from codeagent.kvcache.registry import build_policy
from codeagent.kvcache.state import CacheState
from codeagent.kvcache.tags import State
from codeagent.kvcache.view import CacheView
from codeagent.protocols import CompressionPlan


class KVManager:
    """Keeps a cache within budget using a registered policy.

    Compression runs before an append or a decoded token would exceed a hard ``budget_tokens``,
    every ``compression_interval`` appended tokens and every ``score_update_freq`` decoded tokens,
    on every commit, and on an explicit ``enforce``. Nothing happens below ``min_tokens`` slots.
    The manager holds no session state: every call gets the ``CacheState`` it acts on, so one
    manager may serve any snapshot, and swapping managers swaps only the policy and settings.
    """

    def __init__(self, cfg: KVConfig, policy=None) -> None:
        self.cfg = cfg
        self.policy = policy if policy is not None else build_policy(cfg)
        """The policy (``codeagent.protocols.Policy``), built from ``cfg`` by name unless given."""

    # ----------------------------------------------------------------------- budget
    def budget(self, state: CacheState) -> int | None:
        """Slot budget now: ``budget_tokens``, else ``target_ratio`` of the logical length; never
        below ``min_tokens``. None when there is no budget (or the policy never compresses)."""
        if not self.policy.compresses:
            return None
        if self.cfg.budget_tokens is not None:
            b = self.cfg.budget_tokens
        elif self.cfg.target_ratio < 1.0:
            b = math.ceil(self.cfg.target_ratio * state.logical)
        else:
            return None
        return max(b, self.cfg.min_tokens)

    def view(self, state: CacheState) -> CacheView:
        """A read-only view of the cache for the policy."""
        return CacheView.of(state)

    def _apply(self, state: CacheState, plan: CompressionPlan, why: str) -> None:
        res = apply_plan(state.cache, state.table, plan)
        if res.after != res.before:
            c = state.counters
            c.compressions += 1
            c.dropped_tokens += res.dropped
            c.merged_tokens += res.merged
            c.events.append({"why": why, "before": res.before, "after": res.after, "dropped": res.dropped,
                             "merged": res.merged, "groups": res.groups, "note": plan.note})

    def _applier(self, state: CacheState):
        return lambda plan, why: self._apply(state, plan, why)

    def enforce(self, state: CacheState, budget: int | None = None, why: str = "budget") -> None:
        """Bring the cache to at most ``budget`` slots (default: the current budget)."""
        if not self.policy.compresses:
            return
        budget = self.budget(state) if budget is None else max(budget, 1)
        n = len(state.table)
        if budget is None or n <= budget or n < self.cfg.min_tokens:
            return
        t0 = time.perf_counter()
        self.policy.make_room(state, budget, self._applier(state))
        if len(state.table) > budget:
            self._apply(state, self.policy.plan(self.view(state), budget), why)
        if len(state.table) > budget:
            # a policy that overshoots never breaks the budget: keep its newest slots, and say so
            n = len(state.table)
            self._apply(state, CompressionPlan(keep=list(range(n - budget, n)), note="fallback: newest slots"),
                        f"fallback after {self.cfg.policy}")
        state.counters.compress_s += time.perf_counter() - t0

    # ----------------------------------------------------------------------- engine hooks
    def chunk_size(self, state: CacheState, default: int) -> int:
        """Prefill chunk length: under a hard budget small enough that a chunk always fits."""
        budget = self.budget(state)
        if self.cfg.budget_tokens is None or budget is None:
            return default
        return max(min(default, budget // 4), 1)

    def before_append(self, state: CacheState, n: int) -> None:
        """Make room for ``n`` new tokens under a hard budget, with some slack so that decoding
        does not compress at every token."""
        if self.cfg.budget_tokens is None:
            return
        budget = self.budget(state)
        if budget is not None and len(state.table) + n > budget:
            slack = max(n, min(self.cfg.score_update_freq, budget // 8))
            self.enforce(state, max(budget - slack, 1), why="append")

    def pin_rows(self, state: CacheState, n: int) -> None:
        """The last ``n`` rows are new: pin what their tags call for."""
        lifecycle.pin_new(state.table, len(state.table) - n, self.cfg, state.book.debug is not None)

    def after_append(self, state: CacheState, n: int, info, compress: bool = True) -> None:
        """Run lifecycle checks at intervals; enforce the budget."""
        book = state.book
        book.since_check += n
        if book.since_check >= self.cfg.compression_interval:
            book.since_check = 0
            if self.policy.needs_attention:  # coldness is read from attention statistics
                lifecycle.cold_check(state.table, self.cfg)
            if compress and self.cfg.budget_tokens is None:
                self.enforce(state, why="interval")
        if compress and self.cfg.budget_tokens is not None:
            self.enforce(state, why="append")

    def after_retag(self, state: CacheState, start: int) -> None:
        """Generated text from row ``start`` on was re-tagged: pin what its new tags call for there (rows before
        it keep their state, so lines the pinned cap released stay released)."""
        t = state.table
        before = t["state"][start:].clone()
        lifecycle.pin_new(t, start, self.cfg, state.book.debug is not None)
        # only active slots may become pinned here; keep every other state as it was
        kept = before != int(State.ACTIVE)
        t.cols["state"][start:][kept] = before[kept]

    def on_decode(self, state: CacheState, generated: int) -> None:
        """Every ``score_update_freq`` decoded tokens."""
        self.enforce(state, why="decode")

    def commit(self, state: CacheState, subtask: str) -> int:
        """The agent finished ``subtask``: commit its slots, let the policy fold them, enforce."""
        idx = state.subtask_index(subtask)
        moved = lifecycle.commit(state.table, idx)
        state.book.committed.add(idx)
        state.counters.commits += 1
        t0 = time.perf_counter()
        self.policy.on_commit(state, idx, subtask, self._applier(state))
        state.counters.compress_s += time.perf_counter() - t0
        state.counters.events.append({"why": "commit", "subtask": subtask, "slots": moved})
        self.enforce(state, why="commit")
        return moved

    def set_debug(self, state: CacheState, subtask: str | None) -> None:
        """Open (pin error lines) or close a debug round."""
        state.book.debug = subtask
        lifecycle.set_debug(state.table, subtask is not None, state.book.committed)
