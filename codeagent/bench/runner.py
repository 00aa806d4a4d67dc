"""The benchmark grid: every task under every policy (and kvpress press) at every budget.

For one task the context is prefilled once per *group* and snapshotted; each (method, budget)
cell restores the snapshot, compresses to its budget and runs the probe:

- non-lifecycle policies (full, window, h2o, snapkv, tova, codecomp) share one prefill;
- each lifecycle policy (commitkv, default) prefills on its own, committing each subtask listed in
  ``commits`` right after its last segment, as the agent loop would (commits do not depend on
  the budget, so one prefill serves every budget);
- kvpress presses share one single-pass prefill whose hooks prune a cache per (press, budget)
  (see :mod:`codeagent.bench.peers`).

The probe (``<|im_start|>assistant\\n`` + prompt) is never compressed: the bench's KV config has
no budget of its own (``target_ratio`` 1.0, no ``budget_tokens``), the budget is applied once with
``manager.enforce``, and a cell fails if the cache was compressed during the probe.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence

from codeagent.bench.metrics import Row, edit_similarity, exact_match, mean_logprob, top1_accuracy
from codeagent.bench.peers import PREFIX, PRESSES, method_name
from codeagent.bench.tasks import Task, task_spans
from codeagent.errors import InputError
from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.engine import Snapshot
from codeagent.kvcache.registry import POLICIES, build_policy, load_policies

FULL = "full"
EXTRA_TOKENS = 8
"""Greedy generation runs for the target's token count plus this many."""


# --- the grid ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridSpec:
    """Which methods at which budgets: ``full`` once per task at 1.0, the rest at every budget."""

    policies: tuple[str, ...]
    budgets: tuple[float, ...]
    peers: tuple[str, ...] = ()

    def methods(self) -> list[tuple[str, float]]:
        """(method, budget) cells of one task, in run order."""
        cells: list[tuple[str, float]] = []
        if FULL in self.policies:
            cells.append((FULL, 1.0))
        cells += [(p, b) for p in self.policies if p != FULL for b in self.budgets]
        cells += [(method_name(p), b) for p in self.peers for b in self.budgets]
        return cells

    def validate(self) -> None:
        """Raise InputError for an unknown policy or peer, or a budget outside (0, 1]."""
        load_policies()
        for p in self.policies:
            POLICIES.get(p)  # one-line InputError naming the known policies
        for p in self.peers:
            if p not in PRESSES:
                raise InputError(f"unknown peer {p!r} (known: {', '.join(PRESSES)})")
        if not self.policies and not self.peers:
            raise InputError("nothing to run: give at least one policy or peer")
        for b in self.budgets:
            if not 0.0 < b <= 1.0:
                raise InputError(f"budget must be a fraction in (0, 1], got {b}")
        if not self.budgets and (self.peers or any(p != FULL for p in self.policies)):
            raise InputError("no budgets given")


def uses_lifecycle(policy: str) -> bool:
    """Whether a policy reads commits (the policy says so)."""
    return bool(build_policy(KVConfig(), policy).uses_lifecycle)


def bench_kv_config(policy: str, base: KVConfig | None = None) -> KVConfig:
    """The KV config of one cell: ``base`` with this policy, no standing budget, and no size floor
    (the bench applies each budget itself, even to short contexts)."""
    base = base or KVConfig()
    return base.model_copy(update={"policy": policy, "budget_tokens": None, "target_ratio": 1.0, "min_tokens": 0})


# --- context and probe ------------------------------------------------------------------------


def commit_points(task: Task) -> dict[int, list[str]]:
    """Segment index -> subtasks to commit right after it (listed subtasks with no segment are
    committed after the last segment)."""
    last: dict[str, int] = {}
    for i, seg in enumerate(task.segments):
        if seg.subtask is not None:
            last[seg.subtask] = i
    points: dict[int, list[str]] = {}
    end = len(task.segments) - 1
    for s in task.commits:
        points.setdefault(last.get(s, end), []).append(s)
    return points


def prefill_context(engine, task: Task, lifecycle: bool) -> float:
    """Reset the engine and read the task's segments, one chat message each; lifecycle policies
    commit as they go. Returns the seconds spent."""
    engine.reset()
    points = commit_points(task) if lifecycle else {}
    t0 = time.perf_counter()
    for i, (seg, info) in enumerate(zip(task.segments, task_spans(task))):
        engine.append_message(seg.role, seg.text, info)
        for s in points.get(i, ()):
            engine.commit(s)
    return time.perf_counter() - t0


def context_ids(engine, task: Task) -> list[int]:
    """The context's token ids exactly as ``prefill_context`` feeds them."""
    ids: list[int] = []
    for i, seg in enumerate(task.segments):
        ids += engine.encode_message(seg.role, seg.text, first=i == 0).ids
    return ids


def trim_like(generated: str, target: str) -> str:
    """The generation cut to as many lines as the target has (what edit similarity compares)."""
    n = target.count("\n") + 1
    return "\n".join(generated.split("\n")[:n])


@dataclass
class ProbeResult:
    """Metrics of one probe."""

    mean_logprob: float
    top1: float
    exact: float
    edit_sim: float
    generated: str
    decode_s: float


def score_probe(engine, task: Task) -> tuple[list[int], list[float], list[int]]:
    """Append the probe (never compressed) and score its target teacher-forced, then roll the target back: the
    target's token ids, their log-probabilities and the top-1 prediction at each."""
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    target_ids = list(engine.tok(task.probe.target, add_special_tokens=False)["input_ids"])
    if not target_ids:
        raise InputError(f"task {task.id}: the target has no tokens")
    info = SpanInfo(kind=SegmentKind.CODE)
    engine.start_assistant(compress=False)
    if task.probe.prompt:
        engine.append(task.probe.prompt, info, compress=False)
    mark = engine.mark()
    logprobs, preds = engine.score(target_ids, info)
    engine.rollback(mark)
    return target_ids, logprobs, preds


def run_probe(engine, task: Task) -> ProbeResult:
    """Score the probe's target (``score_probe``), then generate greedily after the probe and compare with the
    target."""
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    target = task.probe.target
    compressions = engine.state.counters.compressions
    target_ids, logprobs, preds = score_probe(engine, task)
    info = SpanInfo(kind=SegmentKind.CODE)
    stop = None if "\n" in target.strip("\n") else ["\n"]
    gen = engine.generate(len(target_ids) + EXTRA_TOKENS, stop=stop, info=info)
    if engine.state.counters.compressions != compressions:
        raise RuntimeError("the cache was compressed during the probe")
    return ProbeResult(
        mean_logprob=mean_logprob(logprobs),
        top1=top1_accuracy(preds, target_ids),
        exact=exact_match(gen.text, target),
        edit_sim=edit_similarity(trim_like(gen.text, target), target),
        generated=gen.text,
        decode_s=gen.decode_s,
    )


def variant_rows(engine, task: Task, cells: Sequence[tuple[str, float]],
                 apply: Callable[[str, float, Snapshot], None], prefill: KVConfig | None = None) -> list[dict]:
    """The measurement scripts' cells on one task: one prefill with the default policy (committing as the agent
    would; ``prefill``: with these settings instead), snapshotted; each (variant, budget) cell restores the
    snapshot with a manager of the prefill's settings, lets ``apply(variant, budget, snapshot)`` bring the cache
    to the cell's state (a ``full`` cell usually leaves it whole), and runs the probe. Rows: task, family, style,
    variant, budget, top-1, mean log-prob and exact match."""
    from codeagent.kvcache.manager import KVManager

    base = prefill or bench_kv_config("default")
    engine.manager = KVManager(base)
    prefill_context(engine, task, lifecycle=True)
    snap = engine.snapshot()
    rows = []
    for variant, budget in cells:
        engine.restore(snap, KVManager(base))
        apply(variant, budget, snap)
        res = run_probe(engine, task)
        rows.append({"task_id": task.id, "family": task.family, "style": task.style or "own", "variant": variant,
                     "budget": budget, "top1": res.top1, "mean_logprob": res.mean_logprob, "exact": res.exact})
    return rows


def _error(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}"[:300]


# --- one task ---------------------------------------------------------------------------------


def prefill_policy(cells: Sequence[tuple[str, float]], lifecycle_policy: str | None) -> str:
    """The policy whose manager reads a group's shared prefill: the lifecycle policy, else one that
    collects the attention statistics any cell's policy reads (``full`` when none reads them)."""
    if lifecycle_policy is not None:
        return lifecycle_policy
    return next((m for m, _ in cells if build_policy(KVConfig(), m).needs_attention), FULL)


@dataclass
class TaskRunner:
    """Runs the cells of one task that are not done yet, group by group."""

    engine: object
    spec: GridSpec
    kv_base: KVConfig = field(default_factory=KVConfig)

    def _row(self, task: Task, method: str, budget: float, n_ctx: int, **values) -> Row:
        return Row(task_id=task.id, family=task.family, style=task.style, method=method, budget=budget,
                   n_context_tokens=n_ctx, **values)

    def _manager(self, policy: str):
        from codeagent.kvcache.manager import KVManager

        return KVManager(bench_kv_config(policy, self.kv_base))

    def _policy_cell(self, task: Task, snap: Snapshot, policy: str, budget: float, prefill_s: float,
                     fresh_manager: bool) -> Row:
        engine = self.engine
        n_ctx = snap.logical
        try:
            engine.restore(snap, self._manager(policy) if fresh_manager else None)
            before = engine.state.counters.compress_s
            if policy != FULL:
                engine.manager.enforce(engine.state, budget=math.ceil(budget * n_ctx), why="bench")
            # a lifecycle policy's cell counts the compression its prefill did (commit folds) too
            compress_s = engine.state.counters.compress_s - (0.0 if not fresh_manager else before)
            slots, nbytes = len(engine.table), engine.kv_bytes()
            res = run_probe(engine, task)
        except Exception as exc:
            return self._row(task, policy, budget, n_ctx, error=_error(exc), prefill_s=prefill_s)
        return self._row(task, policy, budget, n_ctx, kv_slots=slots, kv_bytes=nbytes, mean_logprob=res.mean_logprob,
                         top1=res.top1, exact=res.exact, edit_sim=res.edit_sim, generated=res.generated,
                         prefill_s=prefill_s, decode_s=res.decode_s, compress_s=compress_s)

    def _group(self, task: Task, cells: list[tuple[str, float]], lifecycle_policy: str | None) -> Iterator[Row]:
        """One prefill (with ``lifecycle_policy``'s commits, or none), then every cell from it."""
        engine = self.engine
        engine.manager = self._manager(prefill_policy(cells, lifecycle_policy))
        try:
            prefill_s = prefill_context(engine, task, lifecycle=lifecycle_policy is not None)
            snap = engine.snapshot()
        except Exception as exc:
            err = _error(exc)
            for method, budget in cells:
                yield self._row(task, method, budget, engine.logical, error=err)
            return
        for method, budget in cells:
            yield self._policy_cell(task, snap, method, budget, prefill_s, fresh_manager=lifecycle_policy is None)

    def _peers(self, task: Task, cells: list[tuple[str, float]]) -> Iterator[Row]:
        from codeagent.bench.peers import load_into_engine, prefill_with_presses

        engine = self.engine
        specs = [(m[len(PREFIX):], b) for m, b in cells]
        try:
            ids = context_ids(engine, task)
            pf = prefill_with_presses(engine.model, ids, specs)
        except Exception as exc:
            err = _error(exc)
            for method, budget in cells:
                yield self._row(task, method, budget, 0, error=err)
            return
        for (method, budget), spec in zip(cells, specs):
            pressed = pf.caches.pop(spec)
            common = dict(prefill_s=pf.prefill_s, compress_s=pressed.compress_s)
            try:
                engine.manager = self._manager(FULL)
                load_into_engine(engine, pressed, pf.context_tokens, len(task.segments))
                slots, nbytes = len(engine.table), engine.kv_bytes()
                res = run_probe(engine, task)
            except Exception as exc:
                yield self._row(task, method, budget, pf.context_tokens, error=_error(exc), **common)
                continue
            finally:
                del pressed
            yield self._row(task, method, budget, pf.context_tokens, kv_slots=slots, kv_bytes=nbytes,
                            mean_logprob=res.mean_logprob, top1=res.top1, exact=res.exact, edit_sim=res.edit_sim,
                            generated=res.generated, decode_s=res.decode_s, **common)

    def run(self, task: Task, todo: Sequence[tuple[str, float]]) -> Iterator[Row]:
        """Rows for the (method, budget) cells in ``todo``, grouped so each prefill happens once."""
        plain = [(m, b) for m, b in todo if not m.startswith(PREFIX) and not uses_lifecycle(m)]
        if plain:
            yield from self._group(task, plain, None)
        for policy in dict.fromkeys(m for m, _ in todo if not m.startswith(PREFIX) and uses_lifecycle(m)):
            yield from self._group(task, [(m, b) for m, b in todo if m == policy], policy)
        peers = [(m, b) for m, b in todo if m.startswith(PREFIX)]
        if peers:
            yield from self._peers(task, peers)


# --- the whole grid ---------------------------------------------------------------------------


def select_tasks(tasks: Sequence[Task], families: Sequence[str] | None = None, limit: int | None = None) -> list[Task]:
    """Tasks of the given families (all when None), at most ``limit`` per family, in file order."""
    if families:
        known = set(t.family for t in tasks)
        missing = [f for f in families if f not in known]
        if missing:
            raise InputError(f"no task of family {missing[0]!r} in the task file (it has: {', '.join(sorted(known))})")
    out: list[Task] = []
    per: dict[str, int] = {}
    for t in tasks:
        if families and t.family not in families:
            continue
        if limit is not None and per.get(t.family, 0) >= limit:
            continue
        per[t.family] = per.get(t.family, 0) + 1
        out.append(t)
    return out


Cells = list[tuple[str, float]]


def pending(tasks: Iterable[Task], spec: GridSpec, done: Callable[[str, str, float], bool]) -> list[tuple[Task, Cells]]:
    """Per task, the cells not done yet (tasks with none left are left out)."""
    out = []
    for t in tasks:
        todo = [(m, b) for m, b in spec.methods() if not done(t.id, m, b)]
        if todo:
            out.append((t, todo))
    return out


def run_grid(engine, tasks: Sequence[Task], spec: GridSpec, store, kv_base: KVConfig | None = None,
             on_row: Callable[[Row], None] | None = None) -> int:
    """Run every cell not in ``store`` yet, appending each row as it finishes; returns rows run."""
    runner = TaskRunner(engine, spec, kv_base or KVConfig())
    n = 0
    for task, todo in pending(tasks, spec, store.done):
        for row in runner.run(task, todo):
            store.append(row)
            n += 1
            if on_row:
                on_row(row)
    return n


# --- commands ---------------------------------------------------------------------------------

COMMANDS_FILE = "commands.txt"


def record_command(out, command: str | None) -> list[str]:
    """Add ``command`` to the run directory's command history (once); returns the history."""
    from pathlib import Path

    p = Path(out) / COMMANDS_FILE
    p.parent.mkdir(parents=True, exist_ok=True)
    history = [ln for ln in p.read_text().splitlines() if ln.strip()] if p.exists() else []
    if command and command not in history:
        history.append(command)
        p.write_text("\n".join(history) + "\n")
    return history


def _load_speed(out) -> list[dict] | None:
    import json
    from pathlib import Path

    p = Path(out) / "speed.json"
    if not p.exists():
        return None
    data = json.loads(p.read_text())
    return data.get("rows") if isinstance(data, dict) else data


def write_all(out, rows: Sequence[Row], commands: Sequence[str]) -> dict:
    """write_reports plus the rich table on the terminal."""
    from rich.console import Console

    from codeagent.bench.report import rich_table, summarise, write_reports

    import sys

    files = write_reports(rows, out, commands, speed_rows=_load_speed(out))
    Console(width=None if sys.stdout.isatty() else 200).print(rich_table(summarise(rows)))
    return files


def run_command(tasks_path, spec: GridSpec, out, *, families: Sequence[str] | None = None, limit: int | None = None,
                model: str = "smollm2", config=None, sets: Sequence[str] = (), retry_errors: bool = False,
                command: str | None = None) -> list[Row]:
    """What ``codeagent bench run`` does: load and select tasks, run the grid with a progress bar
    (skipping finished rows), then write every report and print the summary table."""
    from pathlib import Path

    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from codeagent.bench.peers import import_kvpress
    from codeagent.bench.report import RowStore
    from codeagent.bench.tasks import load_tasks
    from codeagent.runtime import build_engine, settings_from

    out = Path(out)
    tasks = select_tasks(load_tasks(tasks_path), families, limit)
    spec.validate()
    if spec.peers:
        import_kvpress()  # one-line error when kvpress is missing, before loading anything else
    store = RowStore(out / "rows.jsonl", retry_errors=retry_errors)
    commands = record_command(out, command)
    err = Console(stderr=True)
    total = len(tasks) * len(spec.methods())
    todo = pending(tasks, spec, store.done)
    left = sum(len(t) for _, t in todo)
    err.print(f"[dim]{len(tasks)} tasks x {len(spec.methods())} cells = {total}; {total - left} already done[/]")
    if left:
        settings = settings_from(config, list(sets), model)
        engine = build_engine(settings, progress=lambda m: err.print(f"[dim]{m}[/]"))
        failed = 0
        columns = (TextColumn("[bold]bench"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TimeRemainingColumn(), TextColumn("{task.description}"))
        with Progress(*columns, console=err, transient=False) as progress:
            bar = progress.add_task("", total=total, completed=total - left)

            def on_row(row: Row) -> None:
                nonlocal failed
                failed += bool(row.error)
                note = f" [red]{row.error}[/]" if row.error else ""
                progress.update(bar, advance=1, description=f"{row.task_id} {row.method}@{row.budget:g}{note}")

            run_grid(engine, tasks, spec, store, settings.kv, on_row)
        if failed:
            err.print(f"[yellow]{failed} cells failed; their rows hold the error (rerun with --retry-errors)[/]")
    files = write_all(out, store.rows, commands)
    err.print(f"[dim]reports in {out}: {', '.join(p.name for p in files.values())}[/]")
    return store.rows


def report_command(out) -> dict:
    """What ``codeagent bench report`` does: rewrite the reports from the stored rows."""
    from pathlib import Path

    from codeagent.bench.report import RowStore

    out = Path(out)
    if not (out / "rows.jsonl").exists():
        raise InputError(f"no rows.jsonl in {out}: run `codeagent bench run --out {out}` first")
    store = RowStore(out / "rows.jsonl")
    if not store.rows:
        raise InputError(f"{out / 'rows.jsonl'} holds no rows")
    return write_all(out, store.rows, record_command(out, None))
