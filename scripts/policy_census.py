"""What each policy keeps on one real session: slot counts by kind and by state after compressing
the context to a budget, plus whether the probe's target is still recalled. Writes markdown.

    .venv/bin/python scripts/policy_census.py --tasks bench/tasks.jsonl --task session-0-0000 \
        --budget 0.25 --out docs/policy_census.md
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--task", help="task id (default: the first session task)")
    ap.add_argument("--budget", type=float, default=0.25)
    ap.add_argument("--policies", default="all", help="comma-separated, or all (every registered policy)")
    ap.add_argument("--out", type=Path, default=Path("docs/policy_census.md"))
    args = ap.parse_args()

    from codeagent.bench.runner import bench_kv_config, prefill_context, run_probe, uses_lifecycle
    from codeagent.bench.tasks import load_tasks
    from codeagent.kvcache import models
    from codeagent.kvcache.config import ModelConfig
    from codeagent.kvcache.engine import Engine
    from codeagent.kvcache.registry import policy_names

    tasks = load_tasks(args.tasks)
    task = next(t for t in tasks if (t.id == args.task if args.task else t.family == "session"))
    loaded = models.load("smollm2")
    rows = []
    for policy in policy_names() if args.policies == "all" else args.policies.split(","):
        eng = Engine(loaded, ModelConfig(), bench_kv_config(policy))
        prefill_context(eng, task, uses_lifecycle(policy))
        n = eng.logical
        budget = n if policy == "full" else math.ceil(args.budget * n)
        eng.manager.enforce(eng.state, budget=budget)
        st = eng.stats()
        probe = run_probe(eng, task)
        rows.append((policy, n, st, probe))
        print(policy, st.physical_slots, st.by_state, st.by_kind, flush=True)

    kinds = sorted({k for _, _, st, _ in rows for k in st.by_kind}, key=lambda k: -rows[0][2].by_kind.get(k, 0))
    states = ["pinned", "active", "staged", "committed", "evictable"]
    lines = ["# What each policy keeps\n",
             f"Task `{task.id}` ({task.family}, {rows[0][1]} context tokens, commits {task.commits}), budget "
             f"{args.budget:.0%} of the context. Command:\n",
             "```\n.venv/bin/python scripts/policy_census.py --tasks " + str(args.tasks) + f" --task {task.id} "
             f"--budget {args.budget}\n```\n",
             "## Slots by segment kind\n",
             "| policy | slots | merged slots | " + " | ".join(kinds) + " |",
             "|---|---|---|" + "---|" * len(kinds)]
    for policy, _, st, _ in rows:
        lines.append(f"| {policy} | {st.physical_slots} | {st.merged_slots} | "
                     + " | ".join(str(st.by_kind.get(k, 0)) for k in kinds) + " |")
    lines += ["", "## Slots by lifecycle state\n", "| policy | " + " | ".join(states) + " | probe top-1 | exact |",
              "|---|" + "---|" * (len(states) + 2)]
    for policy, _, st, probe in rows:
        lines.append(f"| {policy} | " + " | ".join(str(st.by_state.get(s, 0)) for s in states)
                     + f" | {probe.top1:.2f} | {probe.exact:.0f} |")
    lines.append(f"\nProbe target: `{task.probe.target}`\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
