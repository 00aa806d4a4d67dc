"""Train the learned semantic proxy (``codeagent/kvcache/proxy.py``) on bench tasks.

``dump``: each task is prefilled with the default policy (committing as the agent would), as the bench does; the
features of every slot are read from the cache, and the label is the attention the probe's target draws from
that slot under the full cache (teacher-forced, mean over layers and heads of the target's queries), turned into a
percentile rank within the task. ``train``: a two-layer MLP fitted to the ranks (mean squared error, Adam, full
batch, each task weighted equally), written as JSON.

    PYTHONPATH=. python scripts/train_proxy.py dump --tasks bench/tasks_styles.jsonl --out bench-out/proxy-data.pt
    PYTHONPATH=. python scripts/train_proxy.py train --data bench-out/proxy-data.pt \\
        --out codeagent/kvcache/proxy_weights.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def target_attention(engine, task, snap) -> torch.Tensor:
    """Per slot of ``snap``: the attention the probe's target draws from it under the full cache."""
    from codeagent.bench.runner import bench_kv_config
    from codeagent.kvcache.manager import KVManager
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    engine.restore(snap, KVManager(bench_kv_config("default")))
    n = len(engine.table)
    ids = list(engine.tok(task.probe.target, add_special_tokens=False)["input_ids"])
    info = SpanInfo(kind=SegmentKind.CODE)
    engine.start_assistant(compress=False)
    if task.probe.prompt:
        engine.append(task.probe.prompt, info, compress=False)
    window = engine.model_cfg.obs_window
    engine.model_cfg.obs_window = max(window, len(ids))  # every target query
    try:
        engine.score(ids, info)
    finally:
        engine.model_cfg.obs_window = window
    label = engine.table["attn_obs"][:, :, :n].mean(dim=(0, 1)).clone()
    engine.restore(snap, KVManager(bench_kv_config("default")))
    return label


def dump(tasks: list[Path], out: Path, threads: int) -> None:
    from codeagent.bench.runner import bench_kv_config, prefill_context
    from codeagent.bench.tasks import load_tasks
    from codeagent.kvcache.manager import KVManager
    from codeagent.kvcache.proxy import FEATURES, features
    from codeagent.kvcache.scoring import rank01
    from codeagent.kvcache.view import CacheView
    from codeagent.runtime import build_engine, settings_from

    engine = build_engine(settings_from(None, [f"model.threads={threads}"], "smollm2"))
    data = []
    for path in tasks:
        for task in load_tasks(path):
            t0 = time.perf_counter()
            engine.manager = KVManager(bench_kv_config("default"))
            prefill_context(engine, task, lifecycle=True)
            snap = engine.snapshot()
            x = features(CacheView.of(engine.state))
            y = rank01(target_attention(engine, task, snap), stable=True)
            data.append({"id": task.id, "family": task.family, "x": x, "y": y})
            print(f"{task.id}: {len(y)} slots, {time.perf_counter() - t0:.0f}s", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"features": FEATURES, "tasks": data}, out)


def train(data_paths: list[Path], out: Path, hidden: int, epochs: int, seed: int) -> None:
    from codeagent.kvcache.proxy import FEATURES, Proxy

    tasks = []
    for p in data_paths:
        d = torch.load(p)
        if tuple(d["features"]) != FEATURES:
            raise SystemExit(f"{p}: dumped with other features; dump again")
        tasks += d["tasks"]
    x = torch.cat([t["x"] for t in tasks])
    y = torch.cat([t["y"] for t in tasks])
    w = torch.cat([torch.full((len(t["y"]),), 1.0 / len(t["y"])) for t in tasks])
    w = w / w.sum()
    torch.manual_seed(seed)
    f = x.shape[1]
    w1 = (torch.randn(f, hidden) / f ** 0.5).requires_grad_()
    b1 = torch.zeros(hidden, requires_grad=True)
    w2 = (torch.randn(hidden) / hidden ** 0.5).requires_grad_()
    b2 = torch.zeros((), requires_grad=True)
    opt = torch.optim.Adam([w1, b1, w2, b2], lr=0.01)
    for epoch in range(epochs):
        opt.zero_grad()
        pred = torch.relu(x @ w1 + b1) @ w2 + b2
        loss = (w * (pred - y) ** 2).sum()
        loss.backward()
        opt.step()
        if epoch % max(epochs // 10, 1) == 0 or epoch == epochs - 1:
            print(f"epoch {epoch}: loss {loss.item():.4f}", flush=True)
    proxy = Proxy(w1.detach(), b1.detach(), w2.detach(), b2.detach(), FEATURES)
    with torch.no_grad():
        rho = [torch.corrcoef(torch.stack([proxy(t["x"]), t["y"]]))[0, 1].item() for t in tasks]
    print(f"{len(tasks)} tasks, {len(y)} slots; per-task correlation of prediction and label: "
          f"mean {sum(rho) / len(rho):.3f}, min {min(rho):.3f}")
    out.write_text(json.dumps(proxy.to_json()) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--tasks", type=Path, action="append", required=True)
    d.add_argument("--threads", type=int, default=2)
    d.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("train")
    t.add_argument("--data", type=Path, action="append", required=True)
    t.add_argument("--hidden", type=int, default=16)
    t.add_argument("--epochs", type=int, default=2000)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    if args.cmd == "dump":
        dump(args.tasks, args.out, args.threads)
    else:
        train(args.data, args.out, args.hidden, args.epochs, args.seed)


if __name__ == "__main__":
    main()
