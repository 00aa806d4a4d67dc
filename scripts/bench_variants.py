"""Benchmark: variants of the default policy's enforce-time knobs on one prefill per task.

The knobs compared here (``kv.pinned_overflow``, ``kv.obs_weight``...) act only when the cache is
brought to its budget, so each task is prefilled once with the default policy (committing as the
agent would), snapshotted, and every (variant, budget) cell restores the snapshot with a manager
built from the variant's settings, enforces the budget and runs the bench's probe. A variant that
sets any other knob (``kv.pin_signatures``, ``kv.attn_decay``...: read while the context is read)
gets a prefill of its own with its settings, so what it changes is measured, not skipped.
The full cache is the snapshot probed without compression. Writes JSON rows and prints a table of
top-1 and log-prob retention per variant, budget and family.

    PYTHONPATH=. python scripts/bench_variants.py --tasks bench/tasks_check_seed1.jsonl [--model qwen-coder-0.5b] \\
        --variant base: --variant release:pinned_overflow=release_lowest --out bench-out/variants.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from codeagent.kvcache.config import KVConfig


def parse_variant(text: str) -> tuple[str, dict[str, object]]:
    """``name:key=value,key=value`` -> (name, KV overrides) with numbers parsed; ``block_weights.docstring=0.3``
    (a dotted key) overrides one entry of a dict setting, the rest keeping their defaults."""
    from codeagent.kvcache.config import KVConfig

    name, _, rest = text.partition(":")
    updates: dict[str, object] = {}
    for item in filter(None, rest.split(",")):
        key, _, raw = item.partition("=")
        value: object
        try:
            value = float(raw) if "." in raw else int(raw)
        except ValueError:
            value = raw
        field, _, entry = key.partition(".")
        if field not in KVConfig.model_fields:
            raise SystemExit(f"bench_variants: {field!r} is not a kv setting (`codeagent config show --doc`)")
        if entry:
            table = updates.setdefault(field, dict(getattr(KVConfig(), field)))
            table[entry] = value
        else:
            updates[key] = value
    return name, updates


def kv_config(base: KVConfig, updates: dict[str, object], prog: str) -> KVConfig:
    """``base`` with ``updates`` applied, validated, so "false" is False; a bad value stops the
    script with one line naming ``prog``, the setting and what is wrong."""
    from pydantic import ValidationError

    try:
        return type(base).model_validate({**base.model_dump(), **updates})
    except ValidationError as exc:
        raise SystemExit(f"{prog}: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}") from None


ENFORCE_KNOBS = frozenset({
    "structural_weight", "semantic_weight", "temporal_weight", "depth_decay", "boundary_bonus", "recency_halflife",
    "merge_threshold", "keep_fraction", "obs_weight", "proxy_weight", "pinned_cap", "named_cap", "pinned_overflow",
    "release_by", "release_waiting", "release_repeats", "release_continuations", "release_few_uses",
    "release_keeps_names", "lift_rare_uses", "pin_repeated_uses", "pin_twin_lines", "pin_module_calls", "sink_tokens",
    "recent_tokens", "max_merge", "pool_kernel", "unit", "mode", "block_weights", "kind_weights"})
"""KV settings read only when the cache is brought to its budget: variants of these share one prefill per task."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--variant", action="append", required=True, help="name:key=value,...")
    ap.add_argument("--budgets", default="0.25,0.125")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--model", default="smollm2", help="embedded model name, HF model dir or .gguf file")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    from codeagent.bench.runner import bench_kv_config, variant_rows
    from codeagent.bench.tasks import load_tasks
    from codeagent.errors import InputError
    from codeagent.kvcache.manager import KVManager
    from codeagent.runtime import build_engine, settings_from

    variants = dict(parse_variant(v) for v in args.variant)
    budgets = [float(b) for b in args.budgets.split(",")]
    engine = build_engine(settings_from(None, [f"model.threads={args.threads}"], args.model))
    base = bench_kv_config("default")
    configs = {n: kv_config(base, upd, "bench_variants") for n, upd in variants.items()}

    def apply(name: str, budget: float, snap) -> None:
        if name != "full":
            engine.manager = KVManager(configs[name])
            engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical), why="bench")

    try:
        tasks = load_tasks(args.tasks)
    except InputError as exc:
        raise SystemExit(f"bench_variants: {exc}") from None
    shared = [n for n, upd in variants.items() if set(upd) <= ENFORCE_KNOBS]
    rows: list[dict] = []
    for task in tasks:
        t0 = time.perf_counter()
        try:
            got = variant_rows(engine, task, [("full", 1.0)] + [(n, b) for n in shared for b in budgets], apply)
            for name in (n for n in variants if n not in shared):  # a knob read during the prefill: its own prefill
                got += variant_rows(engine, task, [(name, b) for b in budgets], apply, prefill=configs[name])
        except InputError as exc:  # a context past the model's positions: the task is left out, the run goes on
            print(f"{task.id}: left out: {exc}", flush=True)
            continue
        rows += got
        print(f"{task.id}: {time.perf_counter() - t0:.0f}s", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(rows, indent=1) + "\n")
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """Top-1 / log-prob retention against ``full`` per family, variant, budget."""
    from codeagent.bench.report import variant_table

    print("\n".join(variant_table(rows, ("family", "variant", "budget"), total="family")))


if __name__ == "__main__":
    main()
