"""Runs left behind, through the real entry point: a run that changed nothing cleans itself unless --keep;
`runs list` shows every run, `runs clean` removes worktrees, codeagent/<run> branches and run folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.agent.conftest import GOOD_DEF, git, make_repo, write_script

ENV = {**os.environ, "COLUMNS": "60", "NO_COLOR": "1"}
ONE_TRY = ["--sandbox", "local", "--set", "agent.candidates=1", "--set", "agent.max_debug_rounds=0"]


def codeagent(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True, env=ENV,
                          timeout=240)


def solve(repo: Path, script: Path, *extra: str) -> subprocess.CompletedProcess:
    return codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", f"scripted:{script}",
                     *ONE_TRY, *extra)


def run_branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--list", "codeagent/*", "--format=%(refname:short)").split()


def run_worktrees(repo: Path) -> list[str]:
    return [ln for ln in git(repo, "worktree", "list", "--porcelain").splitlines()
            if ln.startswith("branch refs/heads/codeagent/")]


def test_a_run_that_changed_nothing_cleans_itself_unless_keep(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    nothing = write_script(tmp_path / "s.json", ["I do not know how to fix this."])
    r = solve(repo, nothing)
    assert r.returncode == 1, r.stderr
    assert "no change" in " ".join(r.stdout.split()) and run_branches(repo) == [] and run_worktrees(repo) == []
    [traj] = list((repo / ".codeagent-runs").glob("*/*.traj.json"))  # the trajectory stays
    r = solve(repo, nothing, "--keep")
    assert r.returncode == 1, r.stderr
    assert len(run_branches(repo)) == 1 and len(run_worktrees(repo)) == 1


def test_runs_list_and_clean(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    assert solve(repo, write_script(tmp_path / "good.json", [GOOD_DEF])).returncode == 0
    assert solve(repo, write_script(tmp_path / "none.json", ["no idea"]), "--keep").returncode == 1
    [resolved_id] = [p.parent.name for p in (repo / ".codeagent-runs").glob("*/*.traj.json")
                     if json.loads(p.read_text())["info"]["exit_status"] == "resolved"]
    r = codeagent("runs", "list", "--repo", str(repo))
    assert r.returncode == 0, r.stderr
    first_column = "".join(ln.split("│")[1].strip() for ln in r.stdout.splitlines() if ln.startswith("│"))
    assert all(b.split("/", 1)[1] in first_column for b in run_branches(repo))  # ids fold at 60 columns, never cut
    assert "…" not in r.stdout and "resolved" in r.stdout and "unresolved" in r.stdout and resolved_id in first_column
    r = codeagent("runs", "clean", "--repo", str(repo), "--older-than", "1h")
    assert r.returncode == 0 and "0 run(s) removed" in r.stdout and len(run_branches(repo)) == 2
    r = codeagent("runs", "clean", "--repo", str(repo))
    assert r.returncode == 0 and "2 run(s) removed" in r.stdout, r.stdout + r.stderr
    assert run_branches(repo) == [] and run_worktrees(repo) == []
    assert [p for p in (repo / ".codeagent-runs").iterdir() if p.is_dir()] == []
    assert "no runs" in codeagent("runs", "list", "--repo", str(repo)).stdout


def test_runs_clean_bad_age_is_one_line(tmp_path: Path) -> None:
    r = codeagent("runs", "clean", "--repo", str(tmp_path), "--older-than", "soon")
    assert r.returncode == 2 and r.stderr.strip().startswith("codeagent: error: --older-than 'soon'")
    assert len(r.stderr.strip().splitlines()) == 1


def test_runs_clean_leaves_a_run_that_may_still_be_going(tmp_path: Path) -> None:
    import time

    repo = make_repo(tmp_path / "calc")
    folder = repo / ".codeagent-runs" / "20261130-120000-abcdef"
    folder.mkdir(parents=True)
    traj = folder / f"{folder.name}.traj.json"
    traj.write_text(json.dumps({"created": time.time() - 5, "updated": time.time(), "result": None}))
    r = codeagent("runs", "clean", "--repo", str(repo))
    assert r.returncode == 0 and "left 20261130-120000-abcdef" in r.stdout and "0 run(s) removed" in r.stdout
    assert folder.is_dir()
    traj.write_text(json.dumps({"created": time.time() - 3600, "updated": time.time() - 3000, "result": None}))
    r = codeagent("runs", "clean", "--repo", str(repo))
    assert r.returncode == 0 and "1 run(s) removed" in r.stdout and not folder.exists()
