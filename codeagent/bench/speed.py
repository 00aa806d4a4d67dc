"""Speed against context length: prefill and decode tokens/s, KV bytes, peak RSS, compression share.

Each (policy, length) runs in a fresh subprocess (``python -m codeagent.bench.speed JSON``) so
its peak RSS is its own. The context is an agent session over real code: ``view`` tool calls
answered by line-numbered slices of standard-library modules, grouped into subtasks that are
committed in turn, each message about ``piece_tokens`` tokens. Every policy but ``full`` runs
under a hard slot budget (``budget_tokens``), so its KV bytes stay flat as the context grows.
Decoding runs a fixed number of greedy tokens (end-of-sequence ignored); the compression share is
the manager's compression time during decoding over the decoding time.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

SOURCES = ("argparse", "json.decoder", "json.encoder", "collections", "typing", "dataclasses", "pathlib",
           "subprocess", "inspect", "functools", "textwrap", "logging", "shutil", "tempfile", "enum")
"""Standard-library modules the context is cut from, in order."""
SUBTASK_TOKENS = 1024
"""Tokens of session per subtask; each is committed when the next begins."""
PROMPT = "I'll add the helper now:\n```python\ndef "


@dataclass
class SpeedRow:
    """One measurement (the keys ``report.plot_speed`` reads, plus details)."""

    policy: str
    length: int
    context_tokens: int = 0
    budget: int | None = None
    kv_slots: int | None = None
    kv_bytes: int | None = None
    prefill_s: float | None = None
    prefill_tps: float | None = None
    prefill_compress_s: float | None = None
    decode_tokens: int = 0
    decode_s: float | None = None
    decode_tps: float | None = None
    decode_compress_s: float | None = None
    compress_share: float | None = None
    peak_rss: int | None = None
    threads: int | None = None
    error: str | None = None


def session_messages(engine, length: int, piece_tokens: int = 200) -> list[tuple[str, str, str]]:
    """(role, text, subtask) messages of real code totalling at most ``length`` tokens as the
    engine renders them: a ``view`` call and a numbered slice of a stdlib module, repeated."""
    import importlib
    import inspect

    tok = engine.tok

    def ntok(role: str, text: str, first: bool) -> int:
        return len(engine.encode_message(role, text, first).ids)

    msgs: list[tuple[str, str, str]] = []
    used, sub, sub_used = 0, 1, 0
    system = "You are codeagent, a coding agent. Read the code you need, then edit it."
    msgs.append(("system", system, ""))
    used += ntok("system", system, True)
    for mod_name in SOURCES * 4:
        mod = importlib.import_module(mod_name)
        path = Path(inspect.getsourcefile(mod) or "")
        lines = path.read_text(encoding="utf-8").splitlines()
        rel = f"Lib/{mod_name.replace('.', '/')}{'/__init__' if path.name == '__init__.py' else ''}.py"
        start = 0
        while start < len(lines):
            end, body = start, []
            while end < len(lines) and len(body) < 400:
                body.append(f"{end + 1:>6}\t{lines[end]}")
                end += 1
                if end % 8 == 0 and len(tok("\n".join(body), add_special_tokens=False)["input_ids"]) >= piece_tokens:
                    break
            call = f"view {rel} {start + 1}-{end}"
            view = "\n".join(body)
            cost = ntok("assistant", call, False) + ntok("tool", view, False)
            while used + cost > length and len(body) > 1:  # the last view fills what is left
                body.pop()
                end -= 1
                call, view = f"view {rel} {start + 1}-{end}", "\n".join(body)
                cost = ntok("assistant", call, False) + ntok("tool", view, False)
            if used + cost > length:
                return msgs
            if sub_used >= SUBTASK_TOKENS:
                sub, sub_used = sub + 1, 0
            msgs += [("assistant", call, f"s{sub}"), ("tool", view, f"s{sub}")]
            used, sub_used, start = used + cost, sub_used + cost, end
            if used >= length - 16:
                return msgs
    return msgs


def measure(policy: str, length: int, budget: int | None, decode_tokens: int, model: str = "smollm2",
            threads: int | None = None, piece_tokens: int = 200) -> SpeedRow:
    """Measure one configuration in this process (``run_isolated`` calls it in a fresh one)."""
    import resource

    import torch

    from codeagent.kvcache import models
    from codeagent.kvcache.config import KVConfig, ModelConfig
    from codeagent.kvcache.engine import Engine
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    loaded = models.load(model)
    kv = KVConfig(policy=policy, budget_tokens=None if policy == "full" else budget)
    engine = Engine(loaded, ModelConfig(model=model, threads=threads), kv)
    cap = min(length, engine.max_context - decode_tokens - 32)
    msgs = session_messages(engine, cap, piece_tokens)
    kinds = {"system": SegmentKind.SYSTEM, "assistant": SegmentKind.TOOL_CALL, "tool": SegmentKind.FILE_VIEW}
    t0 = time.perf_counter()
    current = None
    for role, text, sub in msgs:
        if current is not None and sub != current:
            engine.commit(current)
        current = sub or current
        engine.append_message(role, text, SpanInfo(kind=kinds[role], subtask=sub or None, language="python"))
    prefill_s = time.perf_counter() - t0
    context = engine.logical
    prefill_compress = engine.state.counters.compress_s
    kv_slots, kv_bytes = len(engine.table), engine.kv_bytes()
    engine.start_assistant()
    engine.append(PROMPT, SpanInfo(kind=SegmentKind.CODE, language="python"))
    engine.stop_ids = set()  # a fixed number of decoded tokens
    before = engine.state.counters.compress_s
    gen = engine.generate(decode_tokens)
    decode_compress = engine.state.counters.compress_s - before
    n = len(gen.token_ids)
    return SpeedRow(
        policy=policy, length=length, context_tokens=context, budget=None if policy == "full" else budget,
        kv_slots=kv_slots, kv_bytes=kv_bytes, prefill_s=prefill_s, prefill_tps=context / prefill_s,
        prefill_compress_s=prefill_compress, decode_tokens=n, decode_s=gen.decode_s,
        decode_tps=n / gen.decode_s if gen.decode_s else None, decode_compress_s=decode_compress,
        compress_share=decode_compress / gen.decode_s if gen.decode_s else None,
        peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, threads=torch.get_num_threads(),
    )


def run_isolated(policy: str, length: int, budget: int | None, decode_tokens: int, model: str = "smollm2",
                 threads: int | None = None, timeout: float = 3600) -> SpeedRow:
    """``measure`` in a fresh Python process; a failure becomes the row's error."""
    args = json.dumps({"policy": policy, "length": length, "budget": budget, "decode_tokens": decode_tokens,
                       "model": model, "threads": threads})
    try:
        proc = subprocess.run([sys.executable, "-m", "codeagent.bench.speed", args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return SpeedRow(policy=policy, length=length, budget=budget, error=f"timed out after {timeout:.0f} s")
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        return SpeedRow(policy=policy, length=length, budget=budget, error=tail[:300])
    return SpeedRow(**json.loads(lines[-1]))


def write_speed(rows: Sequence[SpeedRow], out: str | Path, commands: Sequence[str] = ()) -> dict[str, Path]:
    """speed.json (rows + commands), speed.csv and speed.png in ``out``."""
    from codeagent.bench.report import plot_speed

    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    data = [asdict(r) for r in rows]
    (d / "speed.json").write_text(json.dumps({"commands": list(commands), "rows": data}, indent=1) + "\n")
    with (d / "speed.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(SpeedRow.__dataclass_fields__))
        w.writeheader()
        for r in data:
            w.writerow({k: "" if v is None else v for k, v in r.items()})
    ok = [r for r in data if not r["error"]]
    files = {"speed_json": d / "speed.json", "speed_csv": d / "speed.csv"}
    if ok:
        files["speed_png"] = plot_speed(ok, d / "speed.png")
    return files


def speed_table(rows: Sequence[SpeedRow]):
    """The rows as a rich table."""
    from rich.table import Table

    t = Table(title="codeagent bench speed")
    for col in ("policy", "context", "KV slots", "KV MB", "prefill tok/s", "decode tok/s", "compress share",
                "peak RSS MB", "error"):
        t.add_column(col, justify="left" if col in ("policy", "error") else "right")

    def f(v: Any, fmt: str) -> str:
        return "–" if v is None else format(v, fmt)

    for r in rows:
        t.add_row(r.policy, str(r.context_tokens), f(r.kv_slots, "d"), f(r.kv_bytes and r.kv_bytes / 1e6, ".1f"),
                  f(r.prefill_tps, ".0f"), f(r.decode_tps, ".1f"), f(r.compress_share, ".1%"),
                  f(r.peak_rss and r.peak_rss / 1e6, ".0f"), r.error or "")
    return t


def speed_command(out: str | Path, lengths: Sequence[int], policies: Sequence[str], budget: int, decode_tokens: int,
                  model: str = "smollm2", threads: int | None = None, command: str | None = None,
                  on_row: Callable[[SpeedRow], None] | None = None) -> list[SpeedRow]:
    """What ``codeagent bench speed`` does: every (policy, length) in a fresh process, then files."""
    from rich.console import Console

    from codeagent.errors import InputError
    from codeagent.kvcache.registry import POLICIES, load_policies

    if not lengths or any(n < 64 for n in lengths):
        raise InputError("--lengths must be context lengths of at least 64 tokens")
    load_policies()
    for p in policies:
        POLICIES.get(p)
    err = Console(stderr=True)
    rows: list[SpeedRow] = []
    for policy in policies:
        for n in lengths:
            err.print(f"[dim]speed: {policy} at {n} tokens[/]")
            row = run_isolated(policy, n, budget, decode_tokens, model, threads)
            rows.append(row)
            if on_row:
                on_row(row)
    files = write_speed(rows, out, [command] if command else [])
    Console(width=None if sys.stdout.isatty() else 160).print(speed_table(rows))
    err.print(f"[dim]speed files in {out}: {', '.join(p.name for p in files.values())}[/]")
    return rows


def _main(argv: Sequence[str]) -> int:
    """Child entry: measure the configuration given as JSON and print the row as one JSON line."""
    cfg = json.loads(argv[0])
    row = measure(cfg["policy"], int(cfg["length"]), cfg.get("budget"), int(cfg["decode_tokens"]),
                  cfg.get("model", "smollm2"), cfg.get("threads"))
    print(json.dumps(asdict(row)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
