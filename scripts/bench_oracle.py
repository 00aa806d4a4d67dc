"""Benchmark: how far could a better semantic score go? Selection by the attention the target itself draws.

A ceiling, not a policy: the label is the attention the probe's target draws from each slot under the full cache
(``train_proxy.target_attention``), known only after the fact. Variants, ``name:mode:weight[:key=value,...]``:
``pure`` keeps the budget's top slots by that label and nothing else (no pins, sinks or recent window); ``sem``
runs ``default`` (with the given ``kv`` overrides) with its semantic term replaced by the label's rank at
``weight``; ``base`` is ``default`` with the overrides. Each task is prefilled once, as the bench does.

    PYTHONPATH=. python scripts/bench_oracle.py --tasks T.jsonl --variant default:base:0 --variant pure:pure:0 \\
        --variant sem1:sem:1.0 --variant sem1cap0:sem:1.0:pinned_cap=0.01 --out bench-out/oracle.json
"""

from __future__ import annotations

import math

import torch
from bench_variants import parse_variant
from measure import engine_and_decode, run_cells, variant_parser
from train_proxy import target_attention


def main() -> None:
    args = variant_parser(__doc__, "name:mode:weight[:key=value,...]").parse_args()

    from codeagent.bench.runner import bench_kv_config
    from codeagent.kvcache.manager import KVManager
    from codeagent.kvcache.ops import apply_plan
    from codeagent.kvcache.policies.codecomp import CodeComp
    from codeagent.kvcache.scoring import importance, rank01, semantic
    from codeagent.protocols import CompressionPlan

    engine, _ = engine_and_decode(args.threads)
    variants = {}
    for v in args.variant:
        name, mode, weight, *rest = v.split(":")
        variants[name] = (mode, float(weight), parse_variant(":" + (rest[0] if rest else ""))[1])
    cells = [("full", 1.0)] + [(n, float(b)) for n in variants for b in args.budgets.split(",")]
    now: dict = {"task": None, "label": None, "snap": None, "weight": None}

    def scores(self, view):
        s = importance(view, self)
        if now["weight"] is not None and len(view):
            oracle = rank01(now["label"][view.table["pos"].long()])
            s = s - self.semantic_weight * semantic(view, self.obs_weight, self.pool_kernel, self.proxy_weight)
            s = s + now["weight"] * oracle
        return s

    CodeComp.scores = scores

    def label(snap) -> torch.Tensor:
        """The target's attention per logical position of the snapshot (merged slots: their last member's)."""
        if now["snap"] is not snap:
            pos = engine.table["pos"].long().clone()
            per_slot = target_attention(engine, now["task"], snap)
            now["label"], now["snap"] = torch.zeros(snap.logical + 1).index_put_((pos,), per_slot), snap
        return now["label"]

    def apply(name: str, budget: float, snap) -> None:
        now["weight"] = None
        if name == "full":
            return
        mode, weight, updates = variants[name]
        keep = math.ceil(budget * snap.logical)
        if mode != "base":
            label(snap)
        if mode == "pure":
            lab = now["label"][engine.table["pos"].long()]
            top = torch.topk(lab, min(keep, len(lab))).indices.sort().values
            apply_plan(engine.cache, engine.table, CompressionPlan(keep=top.tolist(), note="oracle"))
            return
        engine.manager = KVManager(bench_kv_config("default").model_copy(update=updates))
        now["weight"] = weight if mode == "sem" else None
        engine.manager.enforce(engine.state, budget=keep, why="bench")

    run_cells(engine, args.tasks, cells, apply, args.out, before_task=lambda task: now.update(task=task, weight=None))


if __name__ == "__main__":
    main()
