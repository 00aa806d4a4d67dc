"""Inspect one bench task: what the default policy keeps at a budget, and what the probe loses.

Prefills the task as the bench does (default policy, committing as the agent would), scores the probe's target on
the full cache, brings the cache to the budget with the given ``kv`` settings and scores it again. Prints the
context with the kept slots in ``[[...]]`` and the pinned ones in ``{{...}}`` (the rest was dropped or merged),
then per target token the full cache's and the compressed cache's top-1 prediction, then one summary line.

    PYTHONPATH=. python scripts/kept_map.py --tasks bench/tasks_check_seed1.jsonl --task nextraw-1-0001 \\
        --budget 0.125 --kv release_few_uses=1
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

OPEN = {"kept": "[[", "pinned": "{{"}
CLOSE = {"kept": "]]", "pinned": "}}"}


def mark(pieces: list[str], marks: list[str | None]) -> str:
    """``pieces`` (decoded tokens) joined, each run of one mark (``kept``, ``pinned``; None: dropped) bracketed."""
    out: list[str] = []
    now: str | None = None
    for piece, m in zip(pieces, marks):
        if m != now:
            out.append((CLOSE[now] if now else "") + (OPEN[m] if m else ""))
            now = m
        out.append(piece)
    out.append(CLOSE[now] if now else "")
    return "".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--task", required=True, help="the task's id")
    ap.add_argument("--budget", type=float, default=0.25, help="share of the context kept")
    ap.add_argument("--kv", action="append", default=[], help="key=value: a kv setting for the enforce")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    from bench_variants import kv_config, parse_variant

    from codeagent.bench.metrics import top1_accuracy
    from codeagent.bench.runner import bench_kv_config, prefill_context, score_probe
    from codeagent.bench.tasks import load_tasks
    from codeagent.errors import InputError
    from codeagent.kvcache.manager import KVManager
    from codeagent.kvcache.tags import State
    from codeagent.runtime import build_engine, settings_from

    try:
        task = next((t for t in load_tasks(args.tasks) if t.id == args.task), None)
    except InputError as exc:
        raise SystemExit(f"kept_map: {exc}") from None
    if task is None:
        raise SystemExit(f"kept_map: no task {args.task!r} in {args.tasks}")
    base = bench_kv_config("default")
    cfg = kv_config(base, parse_variant("kv:" + ",".join(args.kv))[1], "kept_map")
    engine = build_engine(settings_from(None, [f"model.threads={args.threads}"], "smollm2"))
    engine.manager = KVManager(base)
    prefill_context(engine, task, lifecycle=True)
    snap = engine.snapshot()
    pos, tokens = engine.state.table["pos"].tolist(), engine.state.table["token"].tolist()
    target, _, full = score_probe(engine, task)
    engine.restore(snap, KVManager(cfg))
    engine.manager.enforce(engine.state, budget=math.ceil(args.budget * snap.logical), why="kept_map")
    after = engine.state.table
    kept = set(after["pos"].tolist())
    pinned = set(after["pos"][after["state"] == int(State.PINNED)].tolist())
    _, _, squeezed = score_probe(engine, task)

    def word(i: int) -> str:
        return repr(engine.tok.decode([i]))

    marks = ["pinned" if p in pinned else "kept" if p in kept else None for p in pos]
    print(mark([engine.tok.decode([t]) for t in tokens], marks))
    print(f"target {task.probe.target!r}")
    print("token | full | compressed")
    for t, a, b in zip(target, full, squeezed):
        print(f"{word(t)} | {word(a)} | {word(b)}" + ("" if a == b else "   <-"))
    hit = [top1_accuracy(pred, target) for pred in (full, squeezed)]
    print(f"top-1 full {hit[0]:.3f} compressed {hit[1]:.3f}; "
          f"kept {len(kept)} of {len(pos)} slots, {len(pinned)} pinned")


if __name__ == "__main__":
    main()
