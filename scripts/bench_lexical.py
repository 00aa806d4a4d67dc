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

import argparse
import bisect
import json
import math
import re
import time
from collections import defaultdict
from pathlib import Path

import torch

IDENT = re.compile(r"[A-Za-z_]\w*")


def lexical(table, decode, window: int) -> torch.Tensor:
    """Per slot: the idf-weighted count of identifiers its line shares with the last ``window`` slots."""
    strings = [decode(i) for i in table["token"].tolist()]
    starts = [0]
    for s in strings[:-1]:
        starts.append(starts[-1] + len(s))
    n = len(strings)
    word = [-1] * n
    vocab: dict[str, int] = {}
    for m in IDENT.finditer("".join(strings)):
        wid = vocab.setdefault(m.group(0), len(vocab))
        for j in range(bisect.bisect_right(starts, m.start()) - 1, bisect.bisect_left(starts, m.end())):
            if word[j] < 0:
                word[j] = wid
    eol = table["eol"].long()
    line = (torch.cumsum(eol, 0) - eol).tolist()
    tail = max(0, n - window)
    recent_lines = set(line[tail:])
    recent = {w for w in word[tail:] if w >= 0}
    lines_of: dict[int, set[int]] = defaultdict(set)
    for w, ln in zip(word, line):
        if w >= 0:
            lines_of[w].add(ln)
    n_lines = (line[-1] + 1) if n else 1
    score: dict[int, float] = defaultdict(float)
    for w, ln in {(w, ln) for w, ln in zip(word, line) if w in recent and ln not in recent_lines}:
        score[ln] += math.log((1 + n_lines) / (1 + len(lines_of[w])))
    out = torch.tensor([score.get(ln, 0.0) for ln in line])
    return out / out.max().clamp(min=1e-6)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--variant", action="append", required=True, help="name:weight[:window]")
    ap.add_argument("--budgets", default="0.25,0.125")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    from codeagent.bench.runner import variant_rows
    from codeagent.bench.tasks import load_tasks
    from codeagent.kvcache.policies.codecomp import CodeComp
    from codeagent.kvcache.scoring import importance
    from codeagent.runtime import build_engine, settings_from

    engine = build_engine(settings_from(None, [f"model.threads={args.threads}"], "smollm2"))
    texts: dict[int, str] = {}

    def decode(i: int) -> str:
        if i not in texts:
            texts[i] = engine.tok.decode([i])
        return texts[i]

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

    rows: list[dict] = []
    for task in load_tasks(args.tasks):
        t0 = time.perf_counter()
        knobs["weight"] = 0.0  # the prefill scores nothing, as under the bench
        rows += variant_rows(engine, task, cells, apply)
        print(f"{task.id}: {time.perf_counter() - t0:.0f}s", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """Top-1 / log-prob retention against ``full`` per family, budget, variant."""
    from codeagent.bench.report import variant_table

    print("\n".join(variant_table(rows, ("family", "budget", "variant"))))


if __name__ == "__main__":
    main()
