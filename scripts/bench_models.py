#!/usr/bin/env python
"""Model benchmark (not a test): per embedded model and weight format, load time, RSS, prefill and
decode tokens/s at several context lengths, each in a fresh process, with the full cache.

Usage::

    .venv/bin/python scripts/bench_models.py --models qwen-coder-1.5b,qwen-coder-0.5b,smollm2 \
        --weights fp32,bf16,int8 --lengths 1024,4096,8192 --out docs/models_speed.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

PROBE = "\n\ndef checksum(data: bytes) -> int:\n    \"\"\"Adler-32 of ``data``.\"\"\"\n"


def _source_text() -> str:
    """Real Python source (standard library), long enough for 8K tokens."""
    import argparse as ap_mod
    import inspect
    import json.decoder
    import logging
    import pathlib
    import typing

    return "".join(inspect.getsource(m) for m in (json.decoder, ap_mod, logging, pathlib, typing))


def measure(model: str, weights: str, lengths: list[int], decode_tokens: int, threads: int | None,
            device: str = "cpu") -> list[dict]:
    """Load once, then for each length: a fresh cache, prefill that many tokens, decode a fixed count."""
    import resource

    import psutil
    import torch

    from codeagent.kvcache import models
    from codeagent.kvcache.config import KVConfig, ModelConfig
    from codeagent.kvcache.engine import Engine
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    if threads:
        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    loaded = models.load(model, weights=weights, device=device)
    load_s = time.perf_counter() - t0
    rss_loaded = psutil.Process().memory_info().rss
    engine = Engine(loaded, ModelConfig(model=model, threads=threads), KVConfig(policy="full"))
    ids = loaded.tokenizer(_source_text(), add_special_tokens=False)["input_ids"]
    probe = loaded.tokenizer(PROBE, add_special_tokens=False)["input_ids"]
    rows = []
    for asked in lengths:
        n = min(asked, engine.max_context - len(probe) - decode_tokens - 8)  # 8192 means "the window" for an 8K model
        engine.reset()
        t1, c1 = time.perf_counter(), time.process_time()
        engine.append_tokens(ids[:n], info=SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        prefill_s, prefill_cpu = time.perf_counter() - t1, time.process_time() - c1
        engine.append_tokens(probe)
        engine.stop_ids = set()
        c2 = time.process_time()
        gen = engine.generate(decode_tokens)
        decode_cpu = time.process_time() - c2
        width = torch.get_num_threads()
        rows.append({"model": model, "weights": loaded.weights, "context": n, "load_s": round(load_s, 1),
                     "rss_loaded_gb": round(rss_loaded / 2**30, 2),
                     "prefill_tps": round(n / prefill_s, 1), "decode_tps": round(len(gen.token_ids) / gen.decode_s, 2),
                     # CPU time spread over the threads: what the wall clock would show with the cores
                     # to itself (assumes the threads scale); robust to other work on the machine
                     "prefill_tps_cpu": round(n / (prefill_cpu / width), 1),
                     "decode_tps_cpu": round(len(gen.token_ids) / (decode_cpu / width), 2),
                     "kv_mb": round(engine.kv_bytes() / 2**20, 1),
                     "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 2**30, 2),
                     "threads": torch.get_num_threads(), "device": str(loaded.model.device),
                     "gpu_peak_gb": round(torch.cuda.max_memory_allocated() / 2**30, 2) if device.startswith("cuda") else None,
                     "text": gen.text[:80]})
        engine.stop_ids = engine._stop_ids()
    return rows


def markdown(rows: list[dict]) -> str:
    """One table row per (model, weights, context)."""
    head = ("| model | weights | context | prefill tok/s | decode tok/s | prefill tok/s (CPU time) | "
            "decode tok/s (CPU time) | peak RSS | KV | load avg |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['model']} | {r['weights']} | error: {r['error']} |")
            continue
        lines.append(f"| {r['model']} | {r['weights']} | {r['context']} | {r['prefill_tps']} | {r['decode_tps']} | "
                     f"{r.get('prefill_tps_cpu', '-')} | {r.get('decode_tps_cpu', '-')} | "
                     f"{r['peak_rss_gb']} GB | {r['kv_mb']} MB | {r.get('loadavg_before', '-')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="qwen-coder-1.5b,qwen-coder-0.5b,smollm2")
    ap.add_argument("--weights", default="fp32,bf16,int8")
    ap.add_argument("--lengths", default="1024,4096,8192")
    ap.add_argument("--decode-tokens", type=int, default=32)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or auto.")
    ap.add_argument("--out", type=Path, default=None, help="JSON file; rows are appended as they finish.")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--markdown", action="store_true", help="Print --out's rows as a markdown table and exit.")
    args = ap.parse_args(argv)
    if args.markdown:
        print(markdown(json.loads(args.out.read_text())["rows"]))
        return 0
    lengths = [int(x) for x in args.lengths.split(",") if x]
    if args.worker:
        model, weights = args.worker.split(":")
        print(json.dumps(measure(model, weights, lengths, args.decode_tokens, args.threads, args.device)))
        return 0
    out = {"command": " ".join(["python", "scripts/bench_models.py", *(argv if argv is not None else sys.argv[1:])]),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs", "rows": []}
    if args.out and args.out.is_file():
        out["rows"] = json.loads(args.out.read_text()).get("rows", [])
    for model in args.models.split(","):
        for weights in args.weights.split(","):
            load_before = os.getloadavg()[0]
            proc = subprocess.run([sys.executable, __file__, "--worker", f"{model}:{weights}", "--lengths", args.lengths,
                                   "--decode-tokens", str(args.decode_tokens), "--device", args.device,
                                   *(["--threads", str(args.threads)] if args.threads else [])],
                                  capture_output=True, text=True)
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
            if proc.returncode != 0 or not lines:
                err = (proc.stderr.strip().splitlines() or ["?"])[-1]
                rows = [{"model": model, "weights": weights, "error": err}]
            else:
                rows = json.loads(lines[-1])
            for r in rows:
                r["loadavg_before"] = round(load_before, 2)
                print(json.dumps(r), flush=True)
            out["rows"] = [r for r in out["rows"] if (r["model"], r["weights"]) != (model, weights)] + rows
            if args.out:
                args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
