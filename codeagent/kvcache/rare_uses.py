"""Rare uses: the one line that shows how the code uses a definition it uses only once.

A helper called once (``_call_if_exists(result, '_setupStdout')``), a constant read once: the definition's header
stays pinned, but the header alone does not say which arguments this code passes or how it reads the value, and the
next such use copies the one the session holds. That line is a body line, ranked by the score with every other
slot, and a tight budget loses it to whatever attention picked. Ranked first among the unpinned slots, it stays while
the budget leaves room past the pins and the recent window. Found by line texts alone (``uses.line_keys``), so any
rendering of the code finds it alike.
"""

from __future__ import annotations

import torch


def newest_rows(line: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The distinct line keys of the ``mask`` slots (ascending) and, per key, its newest such slot."""
    rows = mask.nonzero()[:, 0]
    keys, which = torch.unique(line[rows], return_inverse=True)
    newest = torch.full((len(keys),), -1, dtype=torch.long).scatter_reduce_(0, which, rows, reduce="amax")
    return keys, newest


def rare_use_ranks(line: torch.Tensor, candidate: torch.Tensor, words: dict[int, frozenset[str]],
                   rare: set[str]) -> torch.Tensor:
    """Per slot, the rank of the line it is on among the newest use lines of the ``rare`` names (0: none; higher
    ranks first): for each name, the newest ``candidate`` line whose identifiers (``words`` of its ``line`` key)
    hold it. The newest line ranks first; a line using several such names ranks once; every candidate slot on a
    line of a ranked text ranks alike."""
    out = torch.zeros(len(line), dtype=torch.int32)
    if not rare or not bool(candidate.any()):
        return out
    keys, newest = newest_rows(line, candidate & (line >= 0))
    ranked: list[int] = []  # line keys in rank order
    left = set(rare)
    for key in keys[newest.argsort(descending=True)].tolist():  # newest first
        found = left & words.get(key, frozenset())
        if found:
            ranked.append(key)
            left -= found
        if not left:
            break
    if ranked:
        ordered, first_at = torch.tensor(ranked, dtype=line.dtype).sort()  # first_at: each sorted key's rank order
        hit = candidate & torch.isin(line, ordered)
        out[hit] = (len(ranked) - first_at[torch.searchsorted(ordered, line[hit])]).to(out.dtype)
    return out
