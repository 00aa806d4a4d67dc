"""Lifecycle transitions (CommitKV): active -> staged -> committed -> evictable, plus pinned."""

from __future__ import annotations

from typing import NamedTuple

import torch

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.slots import SlotTable
from codeagent.kvcache.tags import BlockType, SegmentKind, State

PINNABLE_BLOCKS = (BlockType.FUNCTION_SIGNATURE, BlockType.CLASS_DECLARATION, BlockType.DECORATOR, BlockType.IMPORT,
                   BlockType.GLOBAL)


def is_error(table: SlotTable) -> torch.Tensor:
    """Slots that are error lines (tagged by the tagger, or in an error segment)."""
    return (table["block_type"] == int(BlockType.ERROR)) | (table["kind"] == int(SegmentKind.ERROR))


def pin_new(table: SlotTable, start: int, cfg: KVConfig, debug_open: bool) -> int:
    """Pin the new slots from ``start``: interface signatures, imports, the system prompt, the issue,
    protected slots, named definitions, and error lines while a debug round is open. Returns how many were pinned."""
    rows = slice(start, len(table))
    bt = table["block_type"][rows]
    kind = table["kind"][rows]
    pin = table["protect"][rows] | table["named"][rows]
    pin |= (kind == int(SegmentKind.ISSUE)) | (kind == int(SegmentKind.SYSTEM))
    if cfg.pin_signatures:
        for b in PINNABLE_BLOCKS:
            pin |= bt == int(b)
        if cfg.pin_short_bodies:
            pin |= short_bodies(table, start, cfg.pin_short_bodies)
    if debug_open:
        pin |= is_error(table)[rows]
    table.cols["state"][rows][pin] = int(State.PINNED)
    return int(pin.sum())


BODY_BLOCKS = frozenset(int(b) for b in (BlockType.FUNCTION_BODY, BlockType.STATEMENT, BlockType.CONTROL_FLOW))
HEADER_BLOCKS = frozenset(int(b) for b in (BlockType.FUNCTION_SIGNATURE, BlockType.DECORATOR))


class Line(NamedTuple):
    """One line of slots, tagged as its first tagged token is (a line-number prefix is untagged)."""

    code: int
    """First tagged row (past a view's prefix: line numbers, a blame column), else the first row."""
    hi: int
    """One past the last row."""
    seg: int
    """Segment id."""
    block_type: int
    """Block type; NONE for a blank line."""
    block_id: int
    """Block id."""
    depth: int
    """Nesting depth."""
    scaffold: bool
    """Chat-template scaffolding (a message's end): no code continues past it."""


def _lines(table: SlotTable, start: int) -> list[Line]:
    """The lines of the rows from ``start``."""
    cols = {c: table[c][start:].tolist() for c in ("eol", "seg", "kind", "block_type", "block_id", "depth")}
    out, first, last = [], 0, len(cols["eol"]) - 1
    for i, end in enumerate(cols["eol"]):
        if not end and i < last:
            continue
        j = next((j for j in range(first, i + 1) if cols["block_type"][j] != int(BlockType.NONE)), first)
        out.append(Line(start + j, start + i + 1, cols["seg"][j], cols["block_type"][j],
                        cols["block_id"][j], cols["depth"][j], cols["kind"][j] == int(SegmentKind.TEMPLATE)))
        first = i + 1
    return out


def short_bodies(table: SlotTable, start: int, max_lines: int) -> torch.Tensor:
    """Rows from ``start`` on the code of the lines of function bodies of at most ``max_lines`` lines (docstrings,
    comments and blank lines not counted). A body runs from the header while lines stay in the header's block
    or deeper; one still open at the last row (a view cut mid-function, a chunk boundary) is left alone."""
    mask = torch.zeros(len(table) - start, dtype=torch.bool)
    if not bool((table["block_type"][start:] == int(BlockType.FUNCTION_SIGNATURE)).any()):
        return mask  # no header among the new rows: nothing to read line by line
    lines = _lines(table, start)
    i = 0
    while i < len(lines):
        head = lines[i]
        if head.block_type != int(BlockType.FUNCTION_SIGNATURE):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j].block_type in HEADER_BLOCKS and lines[j].block_id == head.block_id:
            j += 1  # a header over several lines
        body, k = [], j
        while k < len(lines) and lines[k].seg == head.seg and not lines[k].scaffold and (
                lines[k].block_id == head.block_id or lines[k].depth > head.depth
                or lines[k].block_type == int(BlockType.NONE)):
            if lines[k].block_type in BODY_BLOCKS:
                body.append(lines[k])
            k += 1
        if k < len(lines) and 0 < len(body) <= max_lines:
            for line in body:  # the code, not the view's prefix before it
                mask[line.code - start:line.hi - start] = True
        i = j
    return mask


def commit(table: SlotTable, subtask: int) -> int:
    """Move every unpinned slot of ``subtask`` to committed; returns how many moved."""
    sel = (table["subtask"] == subtask) & (table["state"] != int(State.PINNED))
    sel &= table["state"] != int(State.EVICTABLE)
    table.cols["state"][sel] = int(State.COMMITTED)
    return int(sel.sum())


def set_debug(table: SlotTable, open_: bool, committed: set[int]) -> None:
    """Pin error lines when a debug round opens; release them (to active, or committed if their
    subtask was committed) when it closes."""
    err = is_error(table) & ~table["protect"]
    if open_:
        table.cols["state"][err] = int(State.PINNED)
        return
    pinned_err = err & (table["state"] == int(State.PINNED))
    for i in pinned_err.nonzero()[:, 0].tolist():
        table.cols["state"][i] = int(State.COMMITTED if int(table["subtask"][i]) in committed else State.ACTIVE)


def cold_check(table: SlotTable, cfg: KVConfig) -> int:
    """One lifecycle check: spans (segments) whose decayed attention stays under the threshold for
    ``cold_checks`` checks move active -> staged -> committed. Returns slots that changed state."""
    n = len(table)
    if n == 0:
        return 0
    mass = table["attn_dec"].mean(dim=(0, 1))
    share = mass / mass.sum().clamp(min=1e-12) * n  # 1.0 = a uniform share
    seg = table["seg"]
    state = table["state"]
    movable = (state == int(State.ACTIVE)) | (state == int(State.STAGED))
    changed = 0
    for s in torch.unique(seg[movable]).tolist():
        sel = (seg == s) & movable
        cold = float(share[sel].mean()) < cfg.commit_threshold
        table.cols["cold"][sel] = torch.where(torch.tensor(cold), table["cold"][sel] + 1, torch.zeros_like(table["cold"][sel]))
        ready = sel & (table["cold"] >= cfg.cold_checks)
        if bool(ready.any()):
            nxt = torch.where(state[ready] == int(State.ACTIVE), int(State.STAGED), int(State.COMMITTED)).to(torch.int8)
            table.cols["state"][ready] = nxt
            table.cols["cold"][ready] = 0
            changed += int(ready.sum())
    return changed


def mark_evictable(table: SlotTable, scores: torch.Tensor, need: int) -> int:
    """Under budget pressure, the ``need`` lowest-scoring committed slots become evictable."""
    committed = (table["state"] == int(State.COMMITTED)).nonzero()[:, 0]
    if need <= 0 or committed.numel() == 0:
        return 0
    worst = committed[torch.argsort(scores[committed])[:need]]
    table.cols["state"][worst] = int(State.EVICTABLE)
    return int(worst.numel())
