"""Many tasks, N worker processes (each loads its own model), resumable, with SWE-bench ``preds.json``.

Layout under ``--out``: ``runs/<task>-<token>/`` (workspace, trajectory, patch) per attempt,
``results/<task>.json`` once a task has ended (such tasks are skipped next time), ``preds.json``.
An attempt that stopped without a result (a crash, a kill) is resumed from its trajectory.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import queue as queue_mod
import re
import secrets
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeagent.agent.listener import Listener
from codeagent.agent.trajectory import SUFFIX
from codeagent.errors import InputError
from codeagent.protocols import KVStats


@dataclass
class Task:
    """One issue to solve in one repository."""

    id: str
    repo: Path
    issue: str
    issue_path: Path | None = None


@dataclass
class BatchOptions:
    """How the batch runs (mirrors the ``batch`` command's options)."""

    out: Path
    workers: int = 1
    sandbox: str | None = None
    """--sandbox, or None for sandbox.kind from the settings."""
    max_steps: int | None = None
    budget: int | None = None
    model: str | None = None
    """--model, or None for model.model from the settings."""
    config: Path | None = None
    sets: list[str] = field(default_factory=list)
    engine: str | None = None
    redo: bool = False
    """Run tasks again that already have a result (and start afresh instead of resuming an attempt)."""
    keep: bool = False
    """Keep the worktree and branch of an attempt that changed nothing."""


def safe_id(task_id: str) -> str:
    """A task id usable as a folder name."""
    return re.sub(r"[^\w.-]", "_", task_id)


def _text(path: Path) -> str:
    """``path`` read as UTF-8 text; a one-line error for a binary or unreadable file."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path} is not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _issue_text(value: Any, base: Path, where: str) -> tuple[str, Path | None]:
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: 'issue' must be non-empty text or a path to an issue file")
    candidate = base / value if len(value) < 400 and "\n" not in value else None
    if candidate is not None and candidate.is_file():
        return _text(candidate), candidate
    return value, None


def load_tasks(path: Path) -> list[Task]:
    """Tasks from a JSONL file (``{id, repo, issue}``; paths relative to the file) or a folder of repos with issue.md."""
    path = Path(path)
    tasks: list[Task] = []
    if path.is_dir():
        for child in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
            issue = child / "issue.md"
            if issue.is_file():
                tasks.append(Task(id=child.name, repo=child.resolve(), issue=_text(issue), issue_path=issue))
        if not tasks:
            raise InputError(f"no task folders with an issue.md in {path}")
    elif path.is_file():
        for n, line in enumerate(_text(path).splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise InputError(f"{where}: not JSON ({exc})") from None
            if not isinstance(row, dict) or not all(k in row for k in ("id", "repo", "issue")):
                raise InputError(f"{where}: each line needs id, repo and issue")
            repo = (path.parent / str(row["repo"])).resolve()
            if not repo.is_dir():
                raise InputError(f"{where}: repository {row['repo']!r} is not a directory")
            text, ipath = _issue_text(row["issue"], path.parent, where)
            tasks.append(Task(id=str(row["id"]), repo=repo, issue=text, issue_path=ipath))
        if not tasks:
            raise InputError(f"no tasks in {path}")
    else:
        raise InputError(f"tasks not found: {path} (a JSONL file or a folder of repositories)")
    ids = [safe_id(t.id) for t in tasks]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise InputError(f"duplicate task ids: {', '.join(dup)}")
    return tasks


# ---------------------------------------------------------------------------------- workers
_WORKER: dict[str, Any] = {}


class _Reporter(Listener):
    """Sends a task's progress to the parent's queue."""

    def __init__(self, q, task_id: str) -> None:
        self.q, self.id = q, task_id

    def phase(self, phase: str, step: int, total: int, text: str) -> None:
        self.q.put((self.id, {"phase": f"{phase} {step}/{total}" if total else phase}))

    def kv(self, stats: KVStats) -> None:
        self.q.put((self.id, {"slots": stats.physical_slots, "turns_inc": 1}))


def _init_worker(opts: BatchOptions, q) -> None:
    from codeagent.agent.runner import make_engine, prepare

    settings, cfg = prepare(opts.config, opts.sets, opts.model, opts.budget, opts.max_steps)
    _WORKER.update(opts=opts, q=q, settings=settings, cfg=cfg)
    if not opts.engine:
        _WORKER["engine"] = make_engine(settings)


RUN_TOKEN = re.compile(r"[0-9a-f]{6}")


def _latest_unfinished(runs: Path, sid: str) -> Path | None:
    """The newest earlier attempt of exactly task ``sid``: a folder ``<sid>-<6 hex>`` (never another task
    whose id merely starts with ``sid-``) whose trajectory names that run and has no final result."""
    found: list[tuple[float, Path]] = []
    for traj in [*runs.glob(f"*/*{SUFFIX}"), *runs.glob("*/trajectory.json")]:
        name = traj.parent.name
        if not (name.startswith(f"{sid}-") and RUN_TOKEN.fullmatch(name[len(sid) + 1:])):
            continue
        try:
            data = json.loads(traj.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        result = data.get("result")
        if data.get("run_id") != name or (result is not None and not _resumable(result)):
            continue
        found.append((traj.stat().st_mtime, traj))
    return max(found)[1] if found else None


def _resumable(result: dict) -> bool:
    from codeagent.agent.trajectory import ResultRecord

    try:
        return ResultRecord.model_validate(result).resumable()
    except ValueError:
        return False


def _run_task(task: Task) -> dict[str, Any]:
    from codeagent.agent.runner import make_engine, solve, tidy

    opts: BatchOptions = _WORKER["opts"]
    settings, cfg, q = _WORKER["settings"], _WORKER["cfg"], _WORKER["q"]
    engine = _WORKER.get("engine") or make_engine(settings, opts.engine)
    sid = safe_id(task.id)
    runs = opts.out / "runs"
    q.put((task.id, {"status": "running", "started": time.time()}))
    previous = None if opts.redo else _latest_unfinished(runs, sid)
    common = dict(sandbox_kind=opts.sandbox, listener=_Reporter(q, task.id))
    if previous is not None:
        try:
            out = solve(engine, settings, cfg, resume=previous, **common)
        except InputError:
            previous = None
    if previous is None:
        out = solve(engine, settings, cfg, repo=task.repo, issue=task.issue, issue_path=task.issue_path,
                    runs_dir=runs, run_id=f"{sid}-{secrets.token_hex(3)}", **common)
    r = out.result
    tidy(out.workspace, r.status, opts.keep)
    row = {"instance_id": task.id, "status": r.status, "reason": r.reason, "tests_passed": r.tests_passed,
           "files_changed": r.files_changed, "model_patch": Path(r.patch_path).read_text() if r.patch_path else "",
           "trajectory": str(out.trajectory), "max_physical_slots": r.max_physical_slots,
           "budget_slots": r.budget_slots, "within_budget": r.within_budget,
           "turns": json.loads(out.trajectory.read_text())["state"]["turns"]}
    if r.status != "interrupted":
        results = opts.out / "results"
        results.mkdir(parents=True, exist_ok=True)
        (results / f"{sid}.json").write_text(json.dumps(row, indent=1))
    return row


# ---------------------------------------------------------------------------------- parent
def model_label(model: str) -> str:
    """``codeagent/<name>`` for preds.json: a path model is named by its folder or file stem, not its path."""
    name = model.rstrip("/")
    if "/" in name and (Path(name).exists() or name.startswith((".", "/", "~"))):
        name = Path(name).name
        for suffix in (".gguf", ".safetensors"):
            name = name.removesuffix(suffix)
    return f"codeagent/{name}"


def write_preds(out: Path, tasks: list[Task], model: str) -> Path:
    """``preds.json``: one ``{instance_id, model_name_or_path, model_patch}`` per finished task."""
    preds = []
    for t in tasks:
        f = out / "results" / f"{safe_id(t.id)}.json"
        if f.is_file():
            row = json.loads(f.read_text())
            preds.append({"instance_id": t.id, "model_name_or_path": model_label(model),
                          "model_patch": row.get("model_patch", "")})
    path = out / "preds.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(preds, indent=1))
    tmp.replace(path)
    return path


def _table(tasks: list[Task], rows: dict[str, dict]):
    from rich.table import Table

    t = Table("task", "status", "phase", "turns", "kv slots", "tests", "time", title="codeagent batch")
    for task in tasks:
        r = rows[task.id]
        tests = {True: "pass", False: "fail", None: "-"}.get(r.get("tests_passed"), "-")
        took = r.get("took") or (time.time() - r["started"] if r.get("started") else 0)
        t.add_row(task.id, r.get("status", "queued"), r.get("phase", ""), str(r.get("turns", 0)),
                  str(r.get("slots", "")), tests, f"{took:.0f}s" if took else "")
    return t


def run_batch(tasks: list[Task], opts: BatchOptions) -> dict[str, dict]:
    """Run every unfinished task; returns the rows of all tasks (finished earlier ones marked skipped)."""
    from rich.console import Console
    from rich.live import Live

    from codeagent.agent.batch_progress import BatchProgress
    from codeagent.agent.runner import prepare

    opts.out.mkdir(parents=True, exist_ok=True)
    model_name = prepare(opts.config, opts.sets, opts.model, opts.budget, opts.max_steps)[0].model.model
    con = Console(stderr=True)
    rows: dict[str, dict] = {}
    todo: list[Task] = []
    for t in tasks:
        f = opts.out / "results" / f"{safe_id(t.id)}.json"
        if f.is_file() and not opts.redo:
            prev = json.loads(f.read_text())
            rows[t.id] = {"status": f"skipped ({prev.get('status')})", "tests_passed": prev.get("tests_passed"),
                          "turns": prev.get("turns", 0)}
        else:
            rows[t.id] = {"status": "queued", "turns": 0}
            todo.append(t)
    progress = BatchProgress(total=len(todo))
    live = Live(progress.renderable(_table(tasks, rows)), console=con, refresh_per_second=4) if con.is_terminal else None

    def update(task_id: str, change: dict) -> None:
        row = rows[task_id]
        row["turns"] = row.get("turns", 0) + change.pop("turns_inc", 0)
        row.update(change)
        if live is None and "status" in change:
            con.print(f"[{task_id}] {row['status']}" + (f": {row.get('reason', '')}" if row.get("reason") else ""),
                      markup=False, highlight=False)

    if todo:
        ctx = mp.get_context("spawn")
        manager = ctx.Manager()
        q = manager.Queue()
        if live is not None:
            live.start()
        try:
            with ProcessPoolExecutor(max_workers=min(opts.workers, len(todo)), mp_context=ctx,
                                     initializer=_init_worker, initargs=(opts, q)) as pool:
                futures = {pool.submit(_run_task, t): t for t in todo}
                pending = set(futures)
                while pending:
                    finished, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                    _drain(q, update)
                    for fut in finished:
                        task = futures[fut]
                        took = time.time() - rows[task.id].get("started", time.time())
                        try:
                            row = fut.result()
                            update(task.id, {"status": row["status"], "reason": row["reason"],
                                             "tests_passed": row["tests_passed"], "took": took, "turns": row["turns"]})
                        except Exception as exc:  # noqa: BLE001 - one task's failure must not stop the batch
                            update(task.id, {"status": "error", "reason": str(exc).splitlines()[0] if str(exc) else
                                             type(exc).__name__, "took": took})
                        write_preds(opts.out, tasks, model_name)
                        progress.finish_one()
                        if live is None:
                            con.print(f"progress: {progress.line()}", highlight=False)
                    if live is not None:
                        live.update(progress.renderable(_table(tasks, rows)))
                _drain(q, update)
        finally:
            if live is not None:
                live.update(progress.renderable(_table(tasks, rows)))
                live.stop()
            manager.shutdown()
    preds = write_preds(opts.out, tasks, model_name)
    if live is None:
        con.print(_table(tasks, rows))
    con.print(f"preds: {preds}")
    return rows


def _drain(q, update) -> None:
    while True:
        try:
            task_id, change = q.get_nowait()
        except queue_mod.Empty:
            return
        update(task_id, change)
