#!/usr/bin/env python
"""Weight formats against fp32 (not a test): teacher-forced top-1 agreement on the bench's tasks.

Each bench task becomes one sequence: the tail of its session text, then the probe's prompt and
target. Every format predicts the next token at every position in one forward; agreement is the
share of positions whose argmax equals fp32's, over all positions and over the target tokens.
Usage::

    .venv/bin/python scripts/weights_agreement.py --model qwen-coder-1.5b --formats bf16,fp16,int8 \
        --tasks bench/tasks.jsonl --tokens 512 --out docs/weights_agreement.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def sequences(tok, tasks: Path, tokens: int, limit: int) -> list[tuple[list[int], int]]:
    """(ids, index of the first target token) per task."""
    out = []
    for line in tasks.read_text().splitlines()[:limit]:
        task = json.loads(line)
        context = "\n".join(seg["text"] for seg in task["segments"])
        head = tok(task["probe"]["prompt"], add_special_tokens=False)["input_ids"]
        target = tok(task["probe"]["target"], add_special_tokens=False)["input_ids"]
        body = tok(context, add_special_tokens=False)["input_ids"][-(tokens - len(head) - len(target)):]
        out.append((body + head + target, len(body) + len(head)))
    return out


def predictions(model, seqs) -> list:
    import torch

    preds = []
    with torch.inference_mode():
        for ids, _ in seqs:
            preds.append(model(torch.tensor([ids])).logits[0].float().argmax(-1))
    return preds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen-coder-1.5b")
    ap.add_argument("--formats", default="bf16,fp16,int8")
    ap.add_argument("--tasks", type=Path, default=Path("bench/tasks.jsonl"))
    ap.add_argument("--tokens", type=int, default=512, help="Tokens per sequence.")
    ap.add_argument("--limit", type=int, default=12, help="Most tasks.")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    import torch

    from codeagent.kvcache import models

    ref = models.load(args.model, weights="fp32", device="cpu")
    seqs = sequences(ref.tokenizer, args.tasks, args.tokens, args.limit)
    cache = Path(f"/tmp/agreement-{args.model}-{args.tokens}-{args.limit}.pt")  # fp32 predictions, reused
    t0 = time.perf_counter()
    if cache.is_file():
        base = torch.load(cache)
    else:
        base = predictions(ref.model, seqs)
        torch.save(base, cache)
    rows = [{"model": args.model, "weights": "fp32", "all": 1.0, "targets": 1.0,
             "forward_s": round(time.perf_counter() - t0, 1)}]
    del ref
    n_all = sum(len(ids) for ids, _ in seqs)
    n_tgt = sum(len(ids) - start for ids, start in seqs)
    for fmt in [f for f in args.formats.split(",") if f and f != "fp32"]:
        loaded = models.load(args.model, weights=fmt, device="cpu")
        t0 = time.perf_counter()
        preds = predictions(loaded.model, seqs)
        took = time.perf_counter() - t0
        same_all = sum(int((p == b).sum()) for p, b in zip(preds, base))
        # the prediction of target token i sits at position i - 1
        same_tgt = sum(int((p[s - 1:-1] == b[s - 1:-1]).sum()) for p, b, (_, s) in zip(preds, base, seqs))
        row = {"model": args.model, "weights": fmt, "all": round(same_all / n_all, 4),
               "targets": round(same_tgt / n_tgt, 4), "forward_s": round(took, 1)}
        print(json.dumps(row), flush=True)
        rows.append(row)
        del loaded
    meta = {"command": " ".join(["python", "scripts/weights_agreement.py", *(argv or sys.argv[1:])]),
            "positions": n_all, "target_tokens": n_tgt, "torch": torch.__version__, "rows": rows}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(args.out.read_text()) if args.out.is_file() else {}
        if old.get("positions") == n_all:  # same sequences: keep the other formats' rows
            done = {r["weights"] for r in rows}
            meta["rows"] = [r for r in old.get("rows", []) if r["weights"] not in done] + rows
        args.out.write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
