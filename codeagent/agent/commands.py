"""The ``solve``, ``repl`` and ``batch`` commands, added to the typer app by :func:`register`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from codeagent import options

EXIT_CODES = {"resolved": 0, "interrupted": 130}
"""Exit status of ``solve`` by result (anything else, unresolved or failed, is 1; usage errors are 2)."""


def register(app: typer.Typer) -> None:
    """Add solve, repl and batch to ``app`` (heavy imports happen inside the commands)."""
    app.command()(solve)
    app.command()(repl)
    app.command()(batch)


def _sandbox_kind(value: str | None) -> str | None:
    from codeagent.errors import InputError

    if value is not None and value not in ("auto", "docker", "local"):
        raise InputError(f"--sandbox must be auto, docker or local, not {value!r}")
    return value


def solve(
    issue: Optional[Path] = typer.Argument(None, help="Markdown file describing the issue (not needed with --resume)."),
    repo: Path = options.REPO,
    sandbox: Optional[str] = options.SANDBOX,
    apply: bool = typer.Option(False, "--apply", help="Apply the patch to your working tree when resolved."),
    commit: bool = typer.Option(False, "--commit", help="Commit the result on the run's branch."),
    keep: bool = typer.Option(False, "--keep", help="Keep the run's worktree and branch even when it changed nothing."),
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Most model turns."),
    budget: Optional[int] = options.BUDGET,
    model: Optional[str] = options.MODEL,
    runs_dir: Optional[Path] = typer.Option(None, "--runs-dir", help="Where runs live (default <repo>/.codeagent-runs)."),
    resume: Optional[Path] = typer.Option(None, "--resume", help="Continue the run saved in this trajectory."),
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    engine: Optional[str] = options.ENGINE,
) -> None:
    """Solve an issue in a sandboxed copy (exit 0 resolved, 1 unresolved, 2 usage error, 130 interrupted).

    Reproduce, localize, sample candidate repairs from one KV snapshot, validate with the tests."""
    from rich.console import Console

    from codeagent.agent import runner
    from codeagent.agent.display import LiveDisplay, report
    from codeagent.errors import InputError

    kind = _sandbox_kind(sandbox)
    if issue is None and resume is None:
        raise InputError("give an issue file (or --resume TRAJECTORY)")
    text = runner.read_issue(issue) if issue is not None and resume is None else None
    if resume is None:
        runner.check_repo(repo)
    settings, cfg = runner.prepare(config, sets, model, budget, max_steps)
    err = Console(stderr=True)
    eng = runner.make_engine(settings, engine, progress=lambda m: err.print(f"[dim]{m}[/]"))
    title = (f"codeagent solve · {settings.model.model} · kv {settings.kv.policy}, "
             f"budget {settings.kv.budget_tokens} slots")
    with LiveDisplay(err, title=title) as ui:
        out = runner.solve(eng, settings, cfg, repo=repo, issue=text, issue_path=issue, runs_dir=runs_dir,
                           sandbox_kind=kind, resume=resume, listener=ui)
    extra = []
    if commit:
        extra.append(f"committed {out.workspace.commit(f'codeagent: {out.result.summary[:60] or out.run_id}')[:10]}"
                     f" on {out.workspace.branch or out.workspace.path}")
    if apply:
        extra.append(out.workspace.apply_to_user_tree() if out.result.status == "resolved"
                     else "not applied to your tree: the issue is not resolved (the patch is kept in the run)")
    tidied = runner.tidy(out.workspace, out.result.status, keep or commit)
    if tidied:
        extra.append(tidied)
    if out.result.resumable() and resume is None:
        extra.append(f"continue with: codeagent solve --resume {out.trajectory}")
    if out.sandbox:
        extra.append(f"sandbox: {out.sandbox}")
    report(Console(), out.result, str(out.trajectory), extra)
    sys.exit(EXIT_CODES.get(out.result.status, 1))


def repl(
    repo: Path = options.REPO,
    sandbox: Optional[str] = options.SANDBOX,
    model: Optional[str] = options.MODEL,
    budget: Optional[int] = options.BUDGET,
    runs_dir: Optional[Path] = typer.Option(None, "--runs-dir", help="Where sessions live (default <repo>/.codeagent-runs)."),
    keep: bool = typer.Option(False, "--keep", help="Keep the session's worktree and branch even when it changed nothing."),
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    engine: Optional[str] = options.ENGINE,
) -> None:
    """Interactive session keeping the model's cache across turns; /help lists the slash commands.

    /plan /diff /apply /commit /kv /undo /save /resume /quit; line editing, history and completion in a terminal."""
    from rich.console import Console

    from codeagent.agent import runner
    from codeagent.agent.repl import Repl

    kind = _sandbox_kind(sandbox)
    runner.check_repo(repo)
    settings, cfg = runner.prepare(config, sets, model, budget)
    err = Console(stderr=True)
    eng = runner.make_engine(settings, engine, progress=lambda m: err.print(f"[dim]{m}[/]"))
    Repl(eng, settings, cfg, repo=repo, runs_dir=runs_dir, sandbox_kind=kind, keep=keep).loop()


def batch(
    tasks: Path = typer.Argument(..., help="JSONL of {id, repo, issue}, or a folder of repos each with an issue.md."),
    out: Path = typer.Option(Path("codeagent-batch"), "--out", "-o", help="Output folder (runs, results, preds.json)."),
    workers: int = typer.Option(1, "--workers", "-j", min=1, help="Worker processes (each loads its own model)."),
    sandbox: Optional[str] = options.SANDBOX,
    max_steps: Optional[int] = typer.Option(None, "--max-steps", min=1, help="Most model turns per task."),
    redo_existing: bool = typer.Option(False, "--redo-existing", help="Run again tasks that already have a result."),
    keep: bool = typer.Option(False, "--keep", help="Keep the worktree and branch of attempts that changed nothing."),
    budget: Optional[int] = options.BUDGET,
    model: Optional[str] = options.MODEL,
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    engine: Optional[str] = options.ENGINE,
) -> None:
    """Solve many tasks with N workers; resumable; writes one trajectory per task and preds.json (SWE-bench)."""
    from codeagent.agent.batch import BatchOptions, load_tasks, run_batch

    kind = _sandbox_kind(sandbox)
    task_list = load_tasks(tasks)
    opts = BatchOptions(out=out.resolve(), workers=workers, sandbox=kind, max_steps=max_steps, budget=budget,
                        model=model, config=config, sets=list(sets), engine=engine,
                        redo=redo_existing, keep=keep)
    rows = run_batch(task_list, opts)
    if any(r.get("status") in ("error", "failed") for r in rows.values()):
        sys.exit(1)
