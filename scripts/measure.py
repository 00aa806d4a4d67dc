"""Shared parts of the measurement scripts that patch the default policy's score (``bench_lexical``,
``bench_exemplar``): their command line, the engine with a per-token text cache, identifiers per slot, and the
loop that runs every (variant, budget) cell of every task on one prefill and writes the rows."""

from __future__ import annotations

import argparse
import bisect
import json
import re
import time
from pathlib import Path
from typing import Callable

IDENT = re.compile(r"[A-Za-z_]\w*")


def variant_parser(doc: str, variant_help: str) -> argparse.ArgumentParser:
    """``--tasks``, ``--variant`` (repeatable), ``--budgets``, ``--threads``, ``--out``."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", type=Path, required=True)
    ap.add_argument("--variant", action="append", required=True, help=variant_help)
    ap.add_argument("--budgets", default="0.25,0.125")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    return ap


def engine_and_decode(threads: int):
    """The SmolLM2 engine and a memoised ``decode(token_id) -> text``."""
    from codeagent.runtime import build_engine, settings_from

    engine = build_engine(settings_from(None, [f"model.threads={threads}"], "smollm2"))
    texts: dict[int, str] = {}

    def decode(i: int) -> str:
        if i not in texts:
            texts[i] = engine.tok.decode([i])
        return texts[i]

    return engine, decode


def slot_words(table, decode: Callable[[int], str]) -> tuple[str, list[int], list[str | None]]:
    """The cached text, each slot's start offset in it, and the identifier each slot is part of (None outside one)."""
    strings = [decode(i) for i in table["token"].tolist()]
    starts = [0]
    for s in strings[:-1]:
        starts.append(starts[-1] + len(s))
    text = "".join(strings)
    word: list[str | None] = [None] * len(strings)
    for m in IDENT.finditer(text):
        for j in range(bisect.bisect_right(starts, m.start()) - 1, bisect.bisect_left(starts, m.end())):
            word[j] = word[j] or m.group(0)
    return text, starts, word


def run_cells(engine, tasks: Path, cells: list[tuple[str, float]], apply, out: Path,
              before_task: Callable[[object], None] = lambda task: None) -> None:
    """Every cell of every task on one prefill (``variant_rows``); rows rewritten to ``out`` after each task;
    the retention table printed at the end. ``before_task(task)`` resets any patch so the prefill scores as the bench's."""
    from codeagent.bench.report import variant_table
    from codeagent.bench.runner import variant_rows
    from codeagent.bench.tasks import load_tasks

    rows: list[dict] = []
    for task in load_tasks(tasks):
        t0 = time.perf_counter()
        before_task(task)
        rows += variant_rows(engine, task, cells, apply)
        print(f"{task.id}: {time.perf_counter() - t0:.0f}s", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    print("\n".join(variant_table(rows, ("family", "variant", "budget"), total="family")))
