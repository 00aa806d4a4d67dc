"""The runs a repository has: run folders, ``codeagent/<run>`` worktrees and branches; listing and removing them."""

from __future__ import annotations

import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from codeagent import hostgit
from codeagent.errors import InputError

BRANCH_PREFIX = "codeagent/"
RUNS_FOLDER = ".codeagent-runs"
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
STAMP = re.compile(r"(\d{8}-\d{6})")
BUSY_S = 600.0
"""A run without a result whose trajectory changed this recently may still be going: ``clean`` leaves it."""


@dataclass
class RunInfo:
    """One run, assembled from whatever of it is left: its folder, its worktree, its branch."""

    id: str
    folder: Path | None = None
    worktree: Path | None = None
    branch: str | None = None
    started: float | None = None
    status: str = "-"
    changed_files: int | None = None
    updated: float | None = None

    @property
    def busy(self) -> bool:
        """Whether the run may still be going: no result yet, and its trajectory saved in the last ``BUSY_S``."""
        return self.status == "open" and self.updated is not None and time.time() - self.updated < BUSY_S

    @property
    def age_s(self) -> float | None:
        """Seconds since the run started, when known."""
        return None if self.started is None else max(time.time() - self.started, 0.0)


def parse_age(text: str) -> float:
    """``"7d"``, ``"12h"``, ``"30m"``, ``"90s"``, ``"2w"`` -> seconds; a one-line error otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text or "")
    if not m:
        raise InputError(f"--older-than {text!r}: give a number and a unit s, m, h, d or w (e.g. 7d)")
    return float(m.group(1)) * UNITS[m.group(2)]


def trajectory_of(folder: Path) -> Path | None:
    """The trajectory file of a run folder (``<id>.traj.json``; ``trajectory.json`` from older runs)."""
    found = sorted(folder.glob("*.traj.json")) or sorted(folder.glob("trajectory.json"))
    return found[0] if found else None


def _from_folder(run: RunInfo) -> None:
    traj = trajectory_of(run.folder) if run.folder else None
    if traj is None:
        return
    try:
        data = json.loads(traj.read_text())
    except (OSError, ValueError):
        run.status = "unreadable"
        return
    if not isinstance(data, dict):
        return
    run.started = data.get("created") or run.started
    run.updated = data.get("updated")
    result = data.get("result")
    run.status = result.get("status", "-") if isinstance(result, dict) else "open"
    run.changed_files = str(data.get("patch") or "").count("diff --git ")


def _is_repo(repo: Path) -> bool:
    return hostgit.run_git(repo, "rev-parse", "--git-dir", check=False).returncode == 0


def _git_runs(repo: Path, runs: dict[str, RunInfo]) -> None:
    """Add the ``codeagent/*`` worktrees and branches of ``repo``."""
    out = hostgit.run_git(repo, "worktree", "list", "--porcelain", check=False).stdout
    for block in out.split("\n\n"):
        fields = dict(line.split(" ", 1) for line in block.splitlines() if " " in line)
        ref = fields.get("branch", "")
        if ref.startswith("refs/heads/" + BRANCH_PREFIX):
            rid = ref[len("refs/heads/" + BRANCH_PREFIX):]
            run = runs.setdefault(rid, RunInfo(id=rid))
            run.worktree = Path(fields["worktree"])
    refs = hostgit.run_git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/" + BRANCH_PREFIX,
                           check=False).stdout
    for name in refs.split():
        rid = name[len(BRANCH_PREFIX):]
        runs.setdefault(rid, RunInfo(id=rid)).branch = name


def list_runs(repo: Path, runs_dir: Path | None = None) -> list[RunInfo]:
    """Every run of ``repo``, oldest first: folders under the runs folder, plus codeagent worktrees and branches."""
    repo = Path(repo).expanduser().resolve()
    if not repo.is_dir():
        raise InputError(f"repository path is not a directory: {repo}")
    root = Path(runs_dir).expanduser().resolve() if runs_dir else repo / RUNS_FOLDER
    runs: dict[str, RunInfo] = {}
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if p.is_dir()):
            runs[folder.name] = RunInfo(id=folder.name, folder=folder, started=folder.stat().st_mtime)
    if _is_repo(repo):
        _git_runs(repo, runs)
    for run in runs.values():
        if run.folder is None and run.worktree is not None and run.worktree.name == "work":
            run.folder = run.worktree.parent if run.worktree.parent.is_dir() else None
        _from_folder(run)
        if run.started is None:
            m = STAMP.search(run.id)
            if m:
                run.started = time.mktime(time.strptime(m.group(1), "%Y%m%d-%H%M%S"))
    return sorted(runs.values(), key=lambda r: (r.started or 0.0, r.id))


def remove_run(repo: Path, run: RunInfo) -> list[str]:
    """Delete what is left of ``run``: worktree, branch, folder. Returns what was removed."""
    gone = []
    if run.worktree is not None:
        r = hostgit.run_git(repo, "worktree", "remove", "--force", str(run.worktree), check=False)
        if r.returncode != 0:
            shutil.rmtree(run.worktree, ignore_errors=True)
        hostgit.run_git(repo, "worktree", "prune", check=False)
        gone.append("worktree")
    if run.branch is not None:
        if hostgit.run_git(repo, "branch", "-D", "--quiet", run.branch, check=False).returncode == 0:
            gone.append("branch")
    if run.folder is not None and run.folder.is_dir():
        shutil.rmtree(run.folder, ignore_errors=True)
        gone.append("folder")
    return gone


def clean_runs(repo: Path, older_than_s: float | None = None, runs_dir: Path | None = None) -> list[tuple[RunInfo, list[str]]]:
    """Remove the runs of ``repo`` older than ``older_than_s`` (all when None) but not a run that may still be
    going (:attr:`RunInfo.busy`); what each lost (``["busy"]`` for one left alone)."""
    repo = Path(repo).expanduser().resolve()
    done = []
    for run in list_runs(repo, runs_dir):
        if older_than_s is not None and (run.age_s is None or run.age_s < older_than_s):
            continue
        done.append((run, ["busy"] if run.busy else remove_run(repo, run)))
    return done
