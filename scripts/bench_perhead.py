"""Benchmark: would choosing part of the budget per layer and per KV head (as kvpress's presses do) help?

A measurement, not a policy. For each task the context is prefilled once with the default policy and
snapshotted. A cell ``ph{X}`` at budget B restores the snapshot, lets ``default`` bring the cache to B - X
slots (the set every head shares), then gives each (layer, KV head) its own X tokens: the top X of the
evicted tokens by that head's observed attention (attention summed over every query that saw the token,
divided by how many did, the mean over the head's query group: ObservedAttentionPress's score). The evicted
keys and values are appended back and masked per head in attention, so every head attends to exactly B
slots, as under a per-head cache of B slots. ``ph0`` is ``default`` itself.

    PYTHONPATH=. python scripts/bench_perhead.py --tasks T.jsonl --x 0,32,96,192 --out bench-out/perhead.json
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from codeagent.kvcache import attention

MASKS: dict[int, tuple[int, torch.Tensor]] = {}
"""Layer -> (first appended slot, [query heads, appended slots] visibility) while a cell is probed."""


def masked_attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """The engine's attention, with the appended per-head slots hidden from the heads that did not pick them."""
    m = MASKS.get(module.layer_idx)
    if m is None:
        return attention.codeagent_attention(module, query, key, value, attention_mask, dropout, scaling, **kwargs)
    ctx = kwargs.get("codeagent")
    _, hq, q, d = query.shape
    t = key.shape[2]
    bias = ctx.log_count if ctx is not None else None
    mask = attention._float_mask(attention_mask, q, t, bias, query.dtype, query.device)
    mask = (torch.zeros(1, 1, q, t, dtype=query.dtype) if mask is None else mask).expand(1, hq, q, t).clone()
    start, visible = m
    mask[:, :, :, start:start + visible.shape[1]].masked_fill_(~visible[None, :, None, :], torch.finfo(query.dtype).min)
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                         scale=scaling if scaling is not None else 1.0 / math.sqrt(d),
                                         enable_gqa=hq != key.shape[1])
    return out.transpose(1, 2).contiguous(), None


def add_per_head(engine, snap, scores: torch.Tensor, x: int, groups: int) -> None:
    """Append, for every (layer, KV head), its top ``x`` evicted tokens of ``snap`` by ``scores`` [L, Hkv, T]."""
    table = engine.table
    kept = set(table["pos"][table["count"] <= 1].tolist())
    full_pos = snap.state.table["pos"]
    evicted = torch.tensor([p not in kept for p in full_pos.tolist()])
    top = scores.masked_fill(~evicted[None, None, :], -1.0).topk(x, dim=-1).indices  # [L, Hkv, x]
    union = torch.unique(top.flatten())
    start = len(table)
    for li, (layer, source) in enumerate(zip(engine.state.cache.layers, snap.state.cache.layers)):
        layer.keys = torch.cat([layer.keys, source.keys[:, :, union]], dim=2)
        layer.values = torch.cat([layer.values, source.values[:, :, union]], dim=2)
        pick = torch.zeros(top.shape[1], len(full_pos), dtype=torch.bool).scatter_(1, top[li], True)
        MASKS[li] = (start, pick[:, union].repeat_interleave(groups, 0))
    table.extend(len(union), pos=full_pos[union])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--x", default="0,32,96,192", help="per-head slots of each cell")
    ap.add_argument("--budgets", default="0.25,0.125")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()

    from transformers import AttentionInterface

    from codeagent.bench.runner import variant_rows
    from codeagent.bench.tasks import load_tasks
    from codeagent.runtime import build_engine, settings_from

    engine = build_engine(settings_from(None, [f"model.threads={args.threads}"], "smollm2"))
    AttentionInterface.register(attention.NAME, masked_attention)
    cfg = engine.model.config
    groups = cfg.num_attention_heads // cfg.num_key_value_heads
    per_head = {f"ph{x}": x for x in map(int, args.x.split(","))}
    cells = [("full", 1.0)] + [(name, b) for b in map(float, args.budgets.split(",")) for name in per_head]

    def apply(name: str, budget: float, snap) -> None:
        MASKS.clear()
        if name == "full":
            return
        x = per_head[name]
        engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical) - x, why="bench")
        if x:
            seen_by = (snap.logical - snap.state.table["pos"]).clamp(min=1).float()
            cum = snap.state.table["attn_cum"]
            scores = (cum / seen_by).view(cum.shape[0], -1, groups, cum.shape[-1]).mean(2)
            add_per_head(engine, snap, scores, x, groups)

    rows: list[dict] = []
    for task in load_tasks(args.tasks):
        t0 = time.perf_counter()
        MASKS.clear()  # the prefill runs unmasked
        rows += variant_rows(engine, task, cells, apply)
        print(f"{task.id}: {time.perf_counter() - t0:.0f}s", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """Top-1 / log-prob retention against ``full`` per variant, budget, style."""
    from codeagent.bench.report import variant_table

    print("\n".join(variant_table(rows, ("variant", "budget", "style"), total="style")))


if __name__ == "__main__":
    main()
