"""Benchmark: does a lexical term help ``default`` choose what the next line needs?

A measurement, not a policy. The term scores each line of the cache by the identifiers it shares with the
last ``window`` slots (the recent context an agent continues from), each shared identifier weighted by its
inverse line frequency in the cache, normalised to [0, 1] and added to CodeComp's score at ``weight``. Each
task is prefilled once with the default policy and snapshotted; every (variant, budget) cell restores the
snapshot, enforces the budget with the patched score and runs the bench's probe.

    PYTHONPATH=. python scripts/bench_lexical.py --tasks T.jsonl --variant base:0 --variant lex3:0.3 \\
        --out bench-out/lexical.json
"""

from __future__ import annotations

import math
from collections import defaultdict

import torch
from measure import engine_and_decode, run_cells, slot_words, variant_parser


def lexical(table, decode, window: int) -> torch.Tensor:
    """Per slot: the idf-weighted count of identifiers its line shares with the last ``window`` slots."""
    _, _, word = slot_words(table, decode)
    n = len(word)
    eol = table["eol"].long()
    line = (torch.cumsum(eol, 0) - eol).tolist()
    tail = max(0, n - window)
    recent_lines = set(line[tail:])
    recent = {w for w in word[tail:] if w is not None}
    lines_of: dict[str, set[int]] = defaultdict(set)
    for w, ln in zip(word, line):
        if w is not None:
            lines_of[w].add(ln)
    n_lines = (line[-1] + 1) if n else 1
    score: dict[int, float] = defaultdict(float)
    for w, ln in {(w, ln) for w, ln in zip(word, line) if w in recent and ln not in recent_lines}:
        score[ln] += math.log((1 + n_lines) / (1 + len(lines_of[w])))
    out = torch.tensor([score.get(ln, 0.0) for ln in line])
    return out / out.max().clamp(min=1e-6)


def main() -> None:
    args = variant_parser(__doc__, "name:weight[:window]").parse_args()

    from codeagent.kvcache.policies.codecomp import CodeComp
    from codeagent.kvcache.scoring import importance

    engine, decode = engine_and_decode(args.threads)
    knobs = {"weight": 0.0, "window": 256}

    def scores(self, view):
        s = importance(view, self)
        if knobs["weight"] > 0 and len(view):
            s = s + knobs["weight"] * lexical(view.table, decode, knobs["window"])
        return s

    CodeComp.scores = scores
    variants = {}
    for v in args.variant:
        name, weight, *window = v.split(":")
        variants[name] = (float(weight), int(window[0]) if window else 256)
    cells = [("full", 1.0)] + [(name, float(b)) for name in variants for b in args.budgets.split(",")]

    def apply(name: str, budget: float, snap) -> None:
        knobs["weight"], knobs["window"] = variants.get(name, (0.0, 256))
        if name != "full":
            engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical), why="bench")

    run_cells(engine, args.tasks, cells, apply, args.out, before_task=lambda task: knobs.update(weight=0.0))


if __name__ == "__main__":
    main()
