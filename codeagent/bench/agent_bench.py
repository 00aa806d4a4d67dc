"""``codeagent bench agent``: solve rate of the agent on bug-fix tasks, decided by held-back tests.

Each task is a folder with ``issue.md``, the repository and ``hidden/`` tests the agent never sees
(SWE-bench's FAIL_TO_PASS and PASS_TO_PASS). Per policy and budget, each task gets a fresh git copy
without ``hidden/``, the agent solves it (one engine, loaded once), then the hidden tests are copied
next to the visible ones and run: a task is solved when they and the visible tests all pass.
A fractional budget is that fraction of the ``full`` run's KV peak on the same task.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from codeagent.errors import InputError

FULL = "full"


@dataclass
class AgentRow:
    """One task under one policy and budget."""

    task: str
    policy: str
    budget: float  # fraction of the full run's peak (1.0 = no budget)
    budget_slots: int | None = None
    status: str = ""
    solved: bool = False
    hidden: str = ""
    wall_s: float = 0.0
    gen_tokens: int = 0
    prefill_saved: int = 0
    kv_peak: int = 0
    candidates: int = 0
    reason: str = ""


@dataclass
class AgentTask:
    """A task folder: the repository (everything but ``hidden/``) and its issue."""

    id: str
    root: Path
    issue: str
    hidden: list[Path] = field(default_factory=list)


def load_agent_tasks(path: Path) -> list[AgentTask]:
    """Task folders under ``path`` (each with issue.md and hidden/), or those a JSONL file lists (``{id, repo}``)."""
    path = Path(path)
    if path.is_dir():
        roots = [(p.name, p) for p in sorted(path.iterdir()) if (p / "issue.md").is_file()]
    elif path.is_file():
        roots = []
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                roots.append((str(row["id"]), (path.parent / str(row["repo"])).resolve()))
            except (ValueError, KeyError, TypeError):
                raise InputError(f"{path}:{n}: each line needs id and repo") from None
    else:
        raise InputError(f"tasks not found: {path} (a folder of task folders or a JSONL file)")
    tasks = []
    for name, root in roots:
        if not (root / "issue.md").is_file():
            raise InputError(f"task {name}: no issue.md in {root}")
        hidden = sorted(p for p in (root / "hidden").glob("*") if p.is_file() and p.suffix in (".py", ".js", ".go"))
        if not hidden:
            raise InputError(f"task {name}: no held-back tests in {root / 'hidden'}")
        tasks.append(AgentTask(id=name, root=root, issue=(root / "issue.md").read_text(), hidden=hidden))
    if not tasks:
        raise InputError(f"no tasks in {path}")
    return tasks


def fresh_copy(task: AgentTask, dest: Path) -> Path:
    """A git repository at ``dest`` holding the task without ``hidden/`` (and without caches)."""
    shutil.copytree(task.root, dest, ignore=shutil.ignore_patterns("hidden", ".codeagent-runs", "__pycache__",
                                                                   ".pytest_cache", "node_modules"))
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=bench", "-c", "user.email=bench@localhost",
                                                  "commit", "-qm", "task"]):
        subprocess.run(["git", *args], cwd=dest, check=True, capture_output=True)
    return dest


def hidden_verdict(task: AgentTask, workspace: Path, sandbox) -> tuple[bool, str]:
    """Copy the hidden tests beside the visible ones and run everything; solved when every test of the task's own
    files (visible and hidden: SWE-bench's FAIL_TO_PASS and PASS_TO_PASS) passes. Tests in files the agent added
    (its reproduction) are reported but do not decide. Returns (solved, summary)."""
    from codeagent.agent.testreport import run_tests

    folder = next((workspace / d for d in ("tests", "test") if (workspace / d).is_dir()), workspace / "tests")
    folder.mkdir(exist_ok=True)
    placed = []
    for f in task.hidden:
        shutil.copy2(f, folder / f.name)
        placed.append(str((folder / f.name).relative_to(workspace)))
    report = run_tests(sandbox, workspace)
    if report is None:
        return False, "no test set-up"
    hidden = {t: o for t, o in report.outcomes.items() if any(Path(p).name in t or t.startswith("hidden") for p in placed)}
    added = {t: o for t, o in report.outcomes.items() if t not in hidden and _added_by_agent(t, task.root)}
    own = {t: o for t, o in report.outcomes.items() if t not in added}
    ok = bool(own) and all(o == "passed" for o in own.values())
    extra = f"; the agent's own tests {sum(o == 'passed' for o in added.values())}/{len(added)} passed" if added else ""
    return ok, f"{report.summary()}; hidden {sum(o == 'passed' for o in hidden.values())}/{len(hidden)} passed{extra}"


def _added_by_agent(test_id: str, root: Path) -> bool:
    """Whether a test id names a test file the task's repository does not have (one the agent wrote)."""
    path = test_id.split("::", 1)[0]
    return "::" in test_id and Path(path).suffix in (".py", ".js", ".ts", ".go") and not (root / path).is_file()


def run_task(engine, task: AgentTask, policy: str, fraction: float, budget: int | None, settings, cfg,
             work: Path, out_dir: Path) -> AgentRow:
    """Solve ``task`` once under ``policy`` with ``budget`` slots (None: no budget) and judge it; the trajectory
    is kept under ``out_dir/trajectories``."""
    from codeagent.agent.runner import solve
    from codeagent.agent.config import sandbox_config
    from codeagent.sandbox import open_sandbox

    row = AgentRow(task=task.id, policy=policy, budget=fraction, budget_slots=budget)
    _configure(engine, settings, policy, budget)
    repo = fresh_copy(task, work / f"{task.id}-{policy}-{fraction:g}")
    t0 = time.monotonic()
    try:
        out = solve(engine, settings, cfg, repo=repo, issue=task.issue, runs_dir=work / "runs",
                    sandbox_kind=settings.extra.get("sandbox", {}).get("kind"))
    except InputError as exc:
        row.status, row.reason = "error", str(exc)
        return row
    row.wall_s = round(time.monotonic() - t0, 1)
    kept = out_dir / "trajectories" / f"{task.id}-{policy}-{fraction:g}.traj.json"
    kept.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(out.trajectory, kept)  # the run's workspace goes with the temporary folder; its trajectory stays
    r = out.result
    row.status, row.reason = r.status, r.reason
    row.gen_tokens, row.prefill_saved, row.candidates = r.gen_tokens, r.prefill_saved_tokens, r.candidates
    row.kv_peak = r.kv_peak or r.max_physical_slots
    box = open_sandbox(sandbox_config(settings.extra), out.workspace.path, ro_paths=out.workspace.git_dirs())
    try:
        row.solved, row.hidden = hidden_verdict(task, out.workspace.path, box)
    finally:
        box.close()
    return row


def _configure(engine, settings, policy: str, budget: int | None) -> None:
    """Point the engine's KV manager at ``policy`` and ``budget`` (a fresh manager; the scripted engine just
    takes the budget)."""
    kv = settings.kv.model_copy(update={"policy": policy, "budget_tokens": budget})
    settings.kv = kv
    if hasattr(engine, "manager"):
        from codeagent.kvcache.manager import KVManager

        engine.kv_cfg = kv
        engine.manager = KVManager(kv)
    else:
        engine.budget_tokens = budget


def bench_agent(tasks: list[AgentTask], policies: list[str], budgets: list[float], out: Path, *, model: str | None,
                config: Path | None, sets: list[str], engine_spec: str | None, command: str,
                progress=print) -> list[AgentRow]:
    """Every task under every policy at every budget fraction; writes rows, summary and a plot to ``out``."""
    from codeagent.agent.runner import make_engine, prepare

    if any(not 0 < b <= 1 for b in budgets):
        raise InputError("--budgets are fractions of the full run's KV peak, in (0, 1]")
    out.mkdir(parents=True, exist_ok=True)
    (out / "rows.jsonl").unlink(missing_ok=True)
    settings, cfg = prepare(config, ["sandbox.kind=local", *sets], model)
    engine = make_engine(settings, engine_spec, progress=progress)
    rows: list[AgentRow] = []
    peaks: dict[str, int] = {}
    cells = [(FULL, 1.0)] if FULL in policies or any(b < 1 for b in budgets) else []
    cells += [(p, b) for p in policies for b in budgets if (p, b) != (FULL, 1.0) and not (p == FULL and b < 1)]
    with tempfile.TemporaryDirectory(prefix="codeagent-bench-agent-") as tmp:
        work = Path(tmp)
        for task in tasks:  # task by task, every cell: a partial run still compares the cells
            for policy, fraction in cells:
                if fraction < 1 and task.id not in peaks:
                    continue  # the full run of this task failed: no reference peak
                budget = None if fraction >= 1 else max(64, math.ceil(fraction * peaks[task.id]))
                row = run_task(engine, task, policy, fraction, budget, settings, cfg, work, out)
                if policy == FULL and fraction >= 1 and row.kv_peak:
                    peaks[task.id] = row.kv_peak
                rows.append(row)
                with (out / "rows.jsonl").open("a") as f:
                    f.write(json.dumps(asdict(row)) + "\n")
                progress(f"{task.id} {policy}@{fraction:g}: {row.status}, solved={row.solved}, {row.wall_s:.0f}s, "
                         f"{row.gen_tokens} tokens, peak {row.kv_peak}")
                write_reports(rows, out, command, settings.model.model)
                if row.status == "interrupted":  # Ctrl-C or SIGTERM stopped the solve: stop the bench too
                    raise KeyboardInterrupt
    return rows


def summarize(rows: list[AgentRow]) -> list[dict]:
    """One line per policy and budget: solve rate, median wall time, tokens, prefill saved, KV peak."""
    groups: dict[tuple[str, float], list[AgentRow]] = {}
    for r in rows:
        groups.setdefault((r.policy, r.budget), []).append(r)
    out = []
    for (policy, budget), rs in sorted(groups.items(), key=lambda x: (x[0][0] != FULL, x[0][0], -x[0][1])):
        out.append({"policy": policy, "budget": budget, "tasks": len(rs), "solved": sum(r.solved for r in rs),
                    "resolved": sum(r.status == "resolved" for r in rs),
                    "median_wall_s": round(statistics.median(r.wall_s for r in rs), 1),
                    "mean_gen_tokens": round(statistics.mean(r.gen_tokens for r in rs)),
                    "prefill_saved": sum(r.prefill_saved for r in rs),
                    "median_kv_peak": round(statistics.median(r.kv_peak for r in rs))})
    return out


def markdown(rows: list[AgentRow], command: str, model: str) -> str:
    """The report: the command, the summary table and one row per task."""
    lines = [f"Model `{model}`. Command: `{command}`", "",
             "| policy | budget | solved (hidden tests) | agent says resolved | median wall s | mean tokens | "
             "prefill saved | median KV peak |", "|---|---|---|---|---|---|---|---|"]
    for s in summarize(rows):
        lines.append(f"| {s['policy']} | {s['budget']:g} | {s['solved']}/{s['tasks']} | {s['resolved']}/{s['tasks']} | "
                     f"{s['median_wall_s']} | {s['mean_gen_tokens']} | {s['prefill_saved']} | {s['median_kv_peak']} |")
    lines += ["", "| task | policy | budget | status | solved | wall s | tokens | candidates | KV peak | hidden |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r.task} | {r.policy} | {r.budget:g} | {r.status} | {'yes' if r.solved else 'no'} | "
                     f"{r.wall_s:.0f} | {r.gen_tokens} | {r.candidates} | {r.kv_peak} | {r.hidden} |")
    return "\n".join(lines) + "\n"


def write_reports(rows: list[AgentRow], out: Path, command: str, model: str) -> None:
    """summary.json, rows.csv, report.md and solve_rate.png under ``out``."""
    (out / "summary.json").write_text(json.dumps({"command": command, "model": model, "summary": summarize(rows)},
                                                 indent=1))
    with (out / "rows.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(asdict(rows[0]) if rows else asdict(AgentRow("", "", 1.0))))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))
    (out / "report.md").write_text(markdown(rows, command, model))
    if rows:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        summary = summarize(rows)
        labels = [f"{s['policy']}@{s['budget']:g}" for s in summary]
        fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(labels)), 3))
        ax.bar(labels, [s["solved"] / s["tasks"] for s in summary], color="#4a7")
        ax.set_ylim(0, 1)
        ax.set_ylabel("solved (hidden tests)")
        ax.set_title(f"codeagent bench agent · {model}")
        fig.tight_layout()
        fig.savefig(out / "solve_rate.png", dpi=120)
        plt.close(fig)
