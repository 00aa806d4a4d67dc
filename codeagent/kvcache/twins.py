"""Twin lines: where the newest lines of the session repeat an earlier stretch (an override of a method shown
above, the second branch of a pattern), the lines that followed that stretch are what the model copies next,
as an induction head does. Found by line texts alone, so any rendering of the code aligns alike."""

from __future__ import annotations

import torch

from codeagent.kvcache.slots import line_numbers

WINDOW = 8
"""How many of the newest keyed lines are aligned against every earlier stretch."""
MIN_MATCH = 3
"""Matched lines (each with two identifiers or more) an earlier stretch needs to count as a twin."""


def twin_rows(line: torch.Tensor, eol: torch.Tensor, words: dict[int, frozenset[str]], follow: int) -> torch.Tensor:
    """The slots of the ``follow`` lines after the twin of the newest lines, ascending (none when no stretch
    matches ``MIN_MATCH`` of the ``WINDOW`` newest lines). ``line`` is each slot's line key (-1: a line without
    an identifier, skipped, so blank lines and brackets do not shift the alignment), ``words`` each key's
    identifiers: only a line with two or more counts as a match (``else:`` and ``try:`` say nothing). The twin
    is the earlier stretch matching the most lines, the newest among equals; what follows it is counted from its
    newest matched line (any, ``else:`` too), so a last line that differs (the code being written) still finds its
    place."""
    empty = torch.zeros(0, dtype=torch.long)
    if follow <= 0 or line.numel() == 0:
        return empty
    number = line_numbers(eol)
    starts = torch.cat([torch.zeros(1, dtype=torch.long), eol[:-1].nonzero()[:, 0] + 1])  # each line's first slot
    keyed = starts[line[starts] >= 0]
    keys = line[keyed]
    n = len(keys)
    if n < 2 * WINDOW:  # an earlier stretch needs its ``WINDOW`` lines before the newest ``WINDOW``
        return empty
    tail = keys[-WINDOW:].flip(0)  # the newest line first
    informative = torch.tensor([len(words.get(int(k), ())) >= 2 for k in tail.tolist()])
    ends = torch.arange(WINDOW - 1, n - WINDOW)  # where an earlier stretch's newest line sits
    back = ends[:, None] - torch.arange(WINDOW)[None, :]
    same = keys[back] == tail[None, :]  # [stretch, j]: the line j back matches
    score = (same & informative[None, :]).sum(1)
    best = int(score.max())
    if best < MIN_MATCH:
        return empty
    at = int((score == best).nonzero()[-1, 0])  # the newest of the best
    newest = int(same[at].nonzero()[0, 0])  # how far back from the stretch's end its newest matched line is
    after = torch.arange(int(ends[at]) - newest + 1, int(ends[at]) - newest + 1 + follow)
    after = after[after < n - WINDOW]
    if after.numel() == 0:
        return empty
    return torch.isin(number, number[keyed[after]]).nonzero()[:, 0]
