"""Which target tokens does ``default`` get wrong that ``full`` got right, and how sure was ``full`` of them?

A measurement, not a policy. Top-1 retention counts tokens; on a ten-token target one token is 0.1, so a task's
retention moves in steps that look like noise. This script tells the two kinds of loss apart: a token ``full``
predicted with a probability near one and ``default`` loses (the compressed cache dropped what the model read)
against one ``full`` got right by a narrow margin. Each task is prefilled once with the default policy and
snapshotted; every budget restores the snapshot, enforces it and scores the probe's target teacher-forced.

    PYTHONPATH=. python scripts/token_flips.py --tasks T.jsonl --out flips.jsonl [--ids ID,ID] [--sure 0.5]

Rows (one per task): the target's tokens, and per budget the top-1 predictions, whether each is the target's token,
and the log-probabilities of the target's tokens. The summary: per family and budget, tokens right under ``full``,
lost, gained, and how many of the lost ones ``full`` gave at least ``--sure`` probability.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path

BUDGETS = (1.0, 0.25, 0.125)


def task_row(engine, task) -> dict:
    """One prefill; per budget the probe's top-1 predictions and the target's log-probabilities."""
    from codeagent.bench.runner import bench_kv_config, prefill_context, score_probe
    from codeagent.kvcache.manager import KVManager

    cfg = bench_kv_config("default")
    engine.manager = KVManager(cfg)
    prefill_context(engine, task, lifecycle=True)
    snap = engine.snapshot()
    row: dict = {"task_id": task.id, "family": task.family}
    for budget in BUDGETS:
        engine.restore(snap, KVManager(cfg))
        if budget < 1:
            engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical), why="bench")
        ids, logprobs, preds = score_probe(engine, task)
        if "target" not in row:
            row["target"] = [engine.tok.decode([i]) for i in ids]
        row[str(budget)] = {"pred": [engine.tok.decode([p]) for p in preds],
                            "hit": [p == i for p, i in zip(preds, ids)],
                            "logprob": [round(float(x), 3) for x in logprobs]}
    return row


def summary(rows: list[dict], sure: float) -> list[str]:
    """Per family and budget: right under full, lost, gained, lost that full was sure of."""
    acc: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in rows:
        full = r["1.0"]
        right = full["hit"]
        for budget in BUDGETS[1:]:
            cell = r[str(budget)]
            a = acc[(r["family"], str(budget))]
            for i, hit in enumerate(cell["hit"]):
                a[0] += right[i]
                a[1] += right[i] and not hit
                a[2] += hit and not right[i]
                a[3] += right[i] and not hit and math.exp(full["logprob"][i]) >= sure
    out = ["family | budget | right under full | lost | gained | lost, full sure"]
    for (fam, budget), (r_, lost, gained, sure_lost) in sorted(acc.items()):
        out.append(f"{fam} | {budget} | {r_} | {lost} | {gained} | {sure_lost}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--ids", default="", help="comma-separated task ids (default: every task)")
    ap.add_argument("--sure", type=float, default=0.5, help="full's probability that counts as sure")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    from codeagent.bench.tasks import load_tasks
    from measure import engine_and_decode

    wanted = [i for i in args.ids.split(",") if i]
    tasks = [t for t in load_tasks(args.tasks) if not wanted or t.id in wanted]
    engine, _ = engine_and_decode(args.threads)
    rows = []
    for task in tasks:
        rows.append(task_row(engine, task))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
        print(task.id, flush=True)
    print("\n".join(summary(rows, args.sure)))


if __name__ == "__main__":
    main()
