"""``codeagent runs list`` and ``codeagent runs clean``: what runs left behind, and removing it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(no_args_is_help=True, help="List and remove runs (worktrees, codeagent/<run> branches, run folders).")

REPO = typer.Option(Path("."), "--repo", "-r", help="Repository whose runs to show (default: here).")
RUNS_DIR = typer.Option(None, "--runs-dir", help="Where the runs live (default <repo>/.codeagent-runs).")


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


@app.command("list")
def list_(repo: Path = REPO, runs_dir: Optional[Path] = RUNS_DIR) -> None:
    """Every run of the repository: age, result, files changed, and what is left of it (worktree, branch, folder)."""
    from rich.console import Console
    from rich.table import Column, Table

    from codeagent.agent.runs import list_runs

    runs = list_runs(repo, runs_dir)
    con = Console()
    if not runs:
        con.print(f"no runs in {Path(repo).resolve()}", highlight=False)
        return
    table = Table(Column("run", overflow="fold"), "age", Column("result", overflow="fold"), "files",
                  Column("left", overflow="fold"), title=f"runs of {Path(repo).resolve()}")
    for r in runs:
        left = [name for name, there in (("worktree", r.worktree), ("branch", r.branch), ("folder", r.folder)) if there]
        table.add_row(r.id, _age(r.age_s), r.status, "-" if r.changed_files is None else str(r.changed_files),
                      " ".join(left) or "-")
    con.print(table)


@app.command("clean")
def clean(
    repo: Path = REPO,
    runs_dir: Optional[Path] = RUNS_DIR,
    older_than: Optional[str] = typer.Option(None, "--older-than", help="Only runs older than this, e.g. 7d, 12h, 30m."),
) -> None:
    """Remove runs (all, or those older than --older-than): worktree, codeagent/<run> branch and run folder."""
    from rich.console import Console

    from codeagent.agent.runs import clean_runs, parse_age

    limit = parse_age(older_than) if older_than is not None else None
    done = clean_runs(repo, limit, runs_dir)
    con = Console()
    for run, gone in done:
        if gone == ["busy"]:
            con.print(f"left {run.id}: it may still be running (no result, saved in the last 10 minutes)",
                      highlight=False, soft_wrap=True)
        else:
            con.print(f"removed {run.id}: {', '.join(gone) or 'nothing left'}", highlight=False, soft_wrap=True)
    con.print(f"{sum(gone != ['busy'] for _, gone in done)} run(s) removed", highlight=False)
