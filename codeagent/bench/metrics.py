"""Per-task metrics (pure functions) and the result row of one task x method x budget.

Retention is a method's metric divided by the full-cache metric on the same tasks. Log-probs are
negative, so their retention is the ratio of per-token geometric-mean probabilities:
``exp(mean_logprob_method) / exp(mean_logprob_full) = exp(mean_logprob_method - mean_logprob_full)``,
which is 1.0 when the method matches the full cache and falls towards 0 as it loses.
"""

from __future__ import annotations

import math
from typing import Sequence

from pydantic import BaseModel, ConfigDict

RATIO_METRICS = ("top1", "exact", "edit_sim")
"""Metrics in [0, 1] whose retention is a plain ratio."""
LOGPROB_METRICS = ("mean_logprob",)
"""Metrics that are log-probabilities, whose retention is a ratio of geometric-mean probabilities."""


def normalise_ws(s: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return " ".join(s.split())


def exact_match(generated: str, target: str) -> float:
    """1.0 when the whitespace-normalised generation starts with the normalised target, else 0.0."""
    return 1.0 if normalise_ws(generated).startswith(normalise_ws(target)) else 0.0


def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions), two-row dynamic programme."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def edit_similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))`` over characters; 1.0 for two empty strings."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def mean_logprob(token_logprobs: Sequence[float]) -> float:
    """Mean log-probability of the target tokens; raises ValueError for an empty target."""
    if len(token_logprobs) == 0:
        raise ValueError("mean_logprob of an empty target")
    return float(sum(token_logprobs)) / len(token_logprobs)


def top1_accuracy(pred_ids: Sequence[int], target_ids: Sequence[int]) -> float:
    """Share of target positions where the argmax prediction equals the target token."""
    if len(target_ids) == 0:
        raise ValueError("top1_accuracy of an empty target")
    if len(pred_ids) != len(target_ids):
        raise ValueError(f"{len(pred_ids)} predictions for {len(target_ids)} target tokens")
    return sum(1 for p, t in zip(pred_ids, target_ids) if int(p) == int(t)) / len(target_ids)


def retention(method_value: float | None, full_value: float | None, logprob: bool = False) -> float | None:
    """A method's metric relative to the full cache's; None when undefined.

    Ratio metrics: ``method / full``, None when ``full`` is 0 (nothing to retain) or either is None.
    Log-probs (``logprob=True``): ``exp(method - full)``, the ratio of per-token geometric-mean
    probabilities, finite for any finite inputs.
    """
    if method_value is None or full_value is None:
        return None
    if any(math.isnan(v) for v in (method_value, full_value)):
        return None
    if logprob:
        return math.exp(method_value - full_value)
    if full_value == 0:
        return None
    return method_value / full_value


class Row(BaseModel):
    """The result of one task under one method at one budget."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    task_id: str
    """Task id from the task file."""
    family: str
    """Task family."""
    style: str | None = None
    """Rendering style of the task (``meta.style``, one of ``styles.STYLES``), if named."""
    method: str
    """Policy or peer press name (``full``, ``window``, ``kvpress:snapkv``...)."""
    budget: float
    """Fraction of the context's tokens kept (1.0 for the full cache)."""
    n_context_tokens: int
    """Context length in tokens as the runner counted it."""
    kv_slots: int | None = None
    """KV entries kept after compression."""
    kv_bytes: int | None = None
    """Bytes of the kept keys and values over all layers."""
    mean_logprob: float | None = None
    """Mean log-prob of the target tokens, teacher-forced."""
    top1: float | None = None
    """Top-1 token accuracy over the target, teacher-forced."""
    exact: float | None = None
    """Greedy exact match of the target (whitespace-normalised prefix), 0 or 1."""
    edit_sim: float | None = None
    """Edit similarity of the greedy output against the target."""
    generated: str | None = None
    """The greedy output."""
    prefill_s: float | None = None
    """Seconds spent in prefill."""
    decode_s: float | None = None
    """Seconds spent decoding the greedy output."""
    compress_s: float | None = None
    """Seconds spent compressing the cache."""
    error: str | None = None
    """One-line error when the run failed; metrics are then None."""

    @property
    def key(self) -> tuple[str, str, float]:
        """(task_id, method, budget): what identifies a row for resuming."""
        return (self.task_id, self.method, float(self.budget))


def full_rows(rows: Sequence[Row]) -> dict[str, Row]:
    """The full-cache row per task (method ``full``, no error): the one at budget 1.0, else the largest budget."""
    best: dict[str, Row] = {}
    for r in rows:
        if r.method != "full" or r.error:
            continue
        cur = best.get(r.task_id)
        if cur is None or (r.budget == 1.0) > (cur.budget == 1.0) or (cur.budget != 1.0 and r.budget > cur.budget):
            best[r.task_id] = r
    return best
