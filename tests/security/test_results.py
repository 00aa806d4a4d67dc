"""Every failure ends with a result and the right exit code; nothing is left of a run that never started."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import FINISH, FIX, PLAN, bash, codeagent, make_repo, need_bwrap, script

SETS: list[str] = []


def test_a_failed_run_exits_1_with_a_result(tmp_path: Path) -> None:
    need_bwrap()
    repo = make_repo(tmp_path / "calc")
    issue = tmp_path / "huge.md"
    issue.write_text("Division is wrong.\n" + "x" * (5 * 1024**2))
    engine = script(tmp_path / "s.json", [PLAN, FINISH])
    r = codeagent("solve", str(issue), "--repo", str(repo), "--engine", engine, "--sandbox", "local", *SETS)
    assert r.returncode == 1, (r.returncode, r.stderr[-1000:])
    [traj] = list(repo.glob(".codeagent-runs/*/*.traj.json"))
    assert json.loads(traj.read_text())["result"]["status"] == "failed"


def test_deleting_git_in_the_workspace_still_gives_result_and_patch(tmp_path: Path) -> None:
    need_bwrap()
    repo = make_repo(tmp_path / "calc")
    engine = script(tmp_path / "s.json", [PLAN, bash("rm -rf .git && echo gone", fix=True), FINISH])
    r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", engine, "--sandbox", "local",
                  *SETS)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    [traj] = list(repo.glob(".codeagent-runs/*/*.traj.json"))
    data = json.loads(traj.read_text())
    assert data["result"]["status"] == "resolved"
    assert "+    return a / b" in data["patch"]


def _leftovers(repo: Path) -> tuple[str, str, list[Path]]:
    branches = subprocess.run(["git", "branch", "--list", "codeagent/*"], cwd=repo, capture_output=True,
                              text=True).stdout.strip()
    worktrees = subprocess.run(["git", "worktree", "list", "--porcelain"], cwd=repo, capture_output=True,
                               text=True).stdout
    return branches, worktrees, [p for p in repo.glob(".codeagent-runs/*") if p.is_dir()]


def test_a_sandbox_that_cannot_start_leaves_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    engine = script(tmp_path / "s.json", [PLAN, FINISH])
    r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", engine, "--sandbox", "docker",
                  "--set", "sandbox.image=codeagent-missing:none", *SETS)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    branches, worktrees, runs = _leftovers(repo)
    assert branches == "" and worktrees.count("worktree ") == 1 and runs == []


def test_auto_falls_back_to_local_when_docker_cannot_run_the_image(tmp_path: Path) -> None:
    need_bwrap()
    from codeagent.sandbox.docker_box import docker_unavailable

    reason = docker_unavailable()
    if reason:
        pytest.skip(f"no docker daemon: {reason}")
    repo = make_repo(tmp_path / "calc")
    engine = script(tmp_path / "s.json", [PLAN, FIX, FINISH])
    r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", engine, "--sandbox", "auto",
                  "--set", "sandbox.image=codeagent-missing:none", *SETS)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "resolved" in r.stdout and "docker could not run" in " ".join(r.stdout.replace("│", " ").split())


def test_batch_resumes_only_its_own_task(tmp_path: Path) -> None:
    need_bwrap()
    for name in ("calc", "calc-x"):
        make_repo(tmp_path / "repos" / name)
    out = tmp_path / "out"
    common = ["--out", str(out), "--sandbox", "local", *SETS]
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "calc-x", "repo": "repos/calc-x", "issue": "repos/calc-x/issue.md"}) + "\n")
    stop = script(tmp_path / "stop.json", [bash("echo unrelated > other.txt"),
                                           {"text": "", "finish_reason": "interrupted"}])
    r = codeagent("batch", str(other), "--engine", stop, "--max-steps", "2", *common)
    assert r.returncode == 0, r.stderr[-2000:]
    [x_traj] = list((out / "runs").glob("calc-x-*/*.traj.json"))
    assert json.loads(x_traj.read_text())["result"]["status"] == "interrupted"  # resumable, not finished
    before = x_traj.read_text()

    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"id": "calc", "repo": "repos/calc", "issue": "repos/calc/issue.md"}) + "\n")
    fix = script(tmp_path / "fix.json", [PLAN, FIX, FINISH])
    r = codeagent("batch", str(mine), "--engine", fix, *common)
    assert r.returncode == 0, r.stderr[-2000:]
    row = json.loads((out / "results" / "calc.json").read_text())
    assert re.fullmatch(r"calc-[0-9a-f]{6}", Path(row["trajectory"]).parent.name), row["trajectory"]
    assert "other.txt" not in row["model_patch"] and "+    return a / b" in row["model_patch"]
    assert x_traj.read_text() == before
