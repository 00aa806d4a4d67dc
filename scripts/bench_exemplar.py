"""Benchmark: does keeping one use-site line per definition help ``default`` on next-line probes?

A measurement, not a policy. A definition the cache holds (a header of the slot table's ``name`` column: a
function, a class, a module binding, an import) is pinned, but the body lines that *use* it are scored like any
other and are the first to go: the model keeps ``fault_key = StashKey[int]()`` and loses every
``config.stash[fault_key]``, the line it would copy. Each variant picks, for every defined name none of whose uses
is pinned already, one line that uses it (the first or the last in the cache, or ``near``: the one sharing the
most identifiers with the newest slots, or ``rep``: the newest whose text repeats among the name's use lines, whether
or not a use is pinned already; lines end at a newline or at an escaped ``\\n`` inside a JSON string; or ``freq``:
not per definition but per identifier the session wrote on ``FREQ`` lines or more, none of them pinned, its newest
line, for ``boost`` only: such a name has no id to pin under) and
either adds ``weight`` to that line's scores (``boost``) or pins it under the definition's name (``pin``: the
pinned cap then ranks it by the definition's uses, as it ranks the header). Each task is prefilled once with the
default policy and snapshotted; every (variant, budget) cell restores the snapshot, marks the lines, enforces the
budget and runs the bench's probe.

    PYTHONPATH=. python scripts/bench_exemplar.py --tasks T.jsonl --variant base:none:first \\
        --variant pinfirst:pin:first --variant boost:boost:last:1.0 --out bench-out/exemplar.jsonl
"""

from __future__ import annotations

import bisect
import keyword
import math
from collections import defaultdict

import torch
from measure import engine_and_decode, run_cells, slot_words, variant_parser

from codeagent.kvcache.uses import LINE_BREAK

MIN_REPEATS = 2
"""``rep`` picks, per defined name, the newest use line whose stripped text occurs this many times among its uses."""
FREQ = 4
"""``freq`` picks the newest line of every identifier on this many lines or more, none of them pinned."""
RECENT = 256
"""``near`` picks the use line sharing the most identifiers with this many newest slots."""


def _lines_per_word(word: list[str | None], line: list[int], pinned: list[bool], counts) -> tuple[dict, set[str]]:
    """Per identifier that ``counts(j, w)`` accepts at slot ``j``: the lines it is on, in order; and the identifiers
    with an accepted slot already pinned."""
    lines_of: dict[str, list[int]] = defaultdict(list)
    held: set[str] = set()
    for j, w in enumerate(word):
        if w is None or not counts(j, w):
            continue
        if not lines_of[w] or lines_of[w][-1] != line[j]:
            lines_of[w].append(line[j])
        if pinned[j]:
            held.add(w)
    return lines_of, held


def use_lines(view, decode, names: dict[int, str], pick: str) -> list[str | None]:
    """Per slot of ``view`` (a ``CacheView``): the defined name whose chosen use-site line the slot is on, None
    elsewhere."""
    table = view.table
    text, starts, word = slot_words(table, decode)
    breaks = [m.start() for m in LINE_BREAK.finditer(text)]
    line = [bisect.bisect_left(breaks, s) for s in starts]
    pinned = view.pinned().tolist()
    chosen: dict[int, str] = {}
    if pick == "freq":  # every identifier written FREQ times or more, none of them pinned: its newest line
        lines_of, held = _lines_per_word(word, line, pinned, lambda j, w: not keyword.iskeyword(w))
        for w, lines in lines_of.items():
            if w not in held and len(lines) >= FREQ:
                chosen.setdefault(lines[-1], w)
        return [chosen.get(ln) for ln in line]
    header = table["name"].tolist()
    defined = {names[i] for i in header if i >= 0}
    # a use, not the name's own header
    uses, already = _lines_per_word(word, line, pinned,
                                    lambda j, w: w in defined and (header[j] < 0 or names[header[j]] != w))
    shared = _shared_with_recent(line, word) if pick == "near" else {}
    if pick == "rep":
        texts = [t.strip() for t in LINE_BREAK.split(text)]
        for w, lines in uses.items():
            seen: dict[str, int] = defaultdict(int)
            for ln in lines:
                seen[texts[ln]] += 1
            rep = [ln for ln in lines if seen[texts[ln]] >= MIN_REPEATS]
            if rep:
                chosen.setdefault(rep[-1], w)
        return [chosen.get(ln) for ln in line]
    for w, lines in uses.items():
        if w not in already:
            at = {"first": lines[0], "last": lines[-1]}.get(pick)
            chosen.setdefault(max(lines, key=lambda ln: (shared[ln], ln)) if at is None else at, w)
    return [chosen.get(ln) for ln in line]


def _shared_with_recent(line: list[int], word: list[str | None]) -> dict[int, int]:
    """Per line: how many distinct identifiers it shares with the ``RECENT`` newest slots."""
    tail = {w for w in word[-RECENT:] if w is not None}
    shared: dict[int, int] = defaultdict(int)
    for ln, w in {(ln, w) for ln, w in zip(line, word) if w in tail}:
        shared[ln] += 1
    return shared


USAGE = "name:none|boost|pin:first|last|near|rep|freq[:weight]"


def main() -> None:
    args = variant_parser(__doc__, USAGE).parse_args()

    from codeagent.kvcache.policies.codecomp import CodeComp
    from codeagent.kvcache.scoring import importance
    from codeagent.kvcache.tags import State
    from codeagent.kvcache.view import CacheView

    variants: dict[str, tuple[str, str, float]] = {}
    for v in args.variant:
        name, how, pick, *weight = v.split(":")
        if how not in ("none", "boost", "pin") or pick not in ("first", "last", "near", "rep", "freq"):
            raise SystemExit(f"bad variant {v!r}: {USAGE}")
        if how == "pin" and pick == "freq":
            raise SystemExit(f"bad variant {v!r}: freq lines are boosted, not pinned")
        variants[name] = (how, pick, float(weight[0]) if weight else 1.0)
    engine, decode = engine_and_decode(args.threads)
    boost: dict[str, torch.Tensor | None] = {"extra": None}

    def scores(self, view):
        s = importance(view, self)
        extra = boost["extra"]
        return s if extra is None or len(extra) != len(s) else s + extra

    CodeComp.scores = scores

    def apply(name: str, budget: float, snap) -> None:
        boost["extra"] = None
        if name == "full":
            return
        how, pick, weight = variants[name]
        if how != "none":
            names = {i: n for n, i in engine.state.names.items()}
            marked = use_lines(CacheView.of(engine.state), decode, names, pick)
            if how == "boost":
                boost["extra"] = weight * torch.tensor([float(w is not None) for w in marked])
            else:
                cols = engine.table.cols
                for j, w in enumerate(marked):
                    if w is not None and int(cols["state"][j]) == int(State.ACTIVE):
                        cols["state"][j] = int(State.PINNED)
                        cols["name"][j] = engine.state.names[w]
        engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical), why="bench")

    cells = [("full", 1.0)] + [(n, float(b)) for n in variants for b in args.budgets.split(",")]
    run_cells(engine, args.tasks, cells, apply, args.out, before_task=lambda task: boost.update(extra=None))


if __name__ == "__main__":
    main()
