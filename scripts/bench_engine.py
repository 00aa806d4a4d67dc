#!/usr/bin/env python
"""Engine benchmark (not a test): prefill and decode tokens/s and peak RSS with the full cache.

Each context length runs in a fresh process on an agent session over real standard-library code
(see ``codeagent.bench.speed``). Usage::

    .venv/bin/python scripts/bench_engine.py --out docs/engine_speed.json [--lengths 1024,2048,4096,8192]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="JSON file for the results.")
    ap.add_argument("--lengths", default="1024,2048,4096,8192", help="Context lengths in tokens.")
    ap.add_argument("--decode-tokens", type=int, default=64, help="Greedy tokens decoded per length.")
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice).")
    args = ap.parse_args(argv)

    import torch
    from rich.console import Console

    from codeagent.bench.speed import run_isolated, speed_table

    con = Console(stderr=True)
    rows = []
    for n in (int(x) for x in args.lengths.split(",") if x.strip()):
        con.print(f"[dim]full cache at {n} tokens[/]")
        rows.append(run_isolated("full", n, None, args.decode_tokens, args.model, args.threads))
    Console().print(speed_table(rows))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        cmd = " ".join(["python", "scripts/bench_engine.py", *(argv if argv is not None else sys.argv[1:])])
        threads = args.threads or torch.get_num_threads()
        meta = {"command": cmd, "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {threads} torch threads",
                "torch": torch.__version__}
        args.out.write_text(json.dumps({**meta, "rows": [asdict(r) for r in rows]}, indent=1) + "\n")
        con.print(f"[dim]wrote {args.out}[/]")
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
