"""The solve/repl/batch commands through the real entry point (subprocess), with the scripted engine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from codeagent.agent.trajectory import load
from tests.agent.conftest import FIX, GOOD_DEF, WRONG_DEF, git, make_repo, write_script

ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
SETS = ["--sandbox", "local"]


def codeagent(*args: str, stdin: str | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True,
                          input=stdin, env=ENV, timeout=timeout)


def test_missing_issue_file_is_one_line(tmp_path: Path) -> None:
    r = codeagent("solve", str(tmp_path / "nope.md"), "--repo", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.strip() == f"codeagent: error: issue file not found: {tmp_path / 'nope.md'}"


def test_repo_that_is_not_a_directory(tmp_path: Path) -> None:
    issue = tmp_path / "issue.md"
    issue.write_text("fix it\n")
    r = codeagent("solve", str(issue), "--repo", str(issue))
    assert r.returncode == 2 and r.stderr.strip() == f"codeagent: error: repository path is not a directory: {issue}"
    r = codeagent("solve", str(issue), "--repo", str(tmp_path / "missing"))
    assert r.returncode == 2 and "repository path does not exist" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_resume_file_and_bad_setting(tmp_path: Path) -> None:
    junk = tmp_path / "t.json"
    junk.write_text("{}")
    r = codeagent("solve", "--resume", str(junk))
    assert r.returncode == 2 and "is not a codeagent trajectory" in r.stderr
    issue = tmp_path / "issue.md"
    issue.write_text("fix it\n")
    r = codeagent("solve", str(issue), "--repo", str(tmp_path), "--set", "agent.max_steps=zero")
    assert r.returncode == 2 and "bad setting agent.max_steps" in r.stderr


def test_solve_with_scripted_engine_reports_and_applies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    script = write_script(tmp_path / "s.json", [GOOD_DEF])
    r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", f"scripted:{script}", *SETS,
                  "--apply")
    assert r.returncode == 0, r.stderr
    assert "resolved" in r.stdout and "within budget" in r.stdout and "applied changes to 1 file" in r.stdout
    [traj] = list((repo / ".codeagent-runs").glob("*/*.traj.json"))
    assert load(traj).result.status == "resolved"
    assert "return a / b" in (repo / "calc" / "ops.py").read_text()  # --apply changed the user's tree
    assert git(repo, "status", "--porcelain").strip() == "M calc/ops.py"  # runs folder is git-ignored


def test_unresolved_exits_1_and_keeps_the_users_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    script = write_script(tmp_path / "s.json", [WRONG_DEF])
    r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", f"scripted:{script}", *SETS,
                  "--set", "agent.candidates=1", "--set", "agent.max_debug_rounds=0", "--apply")
    assert r.returncode == 1, r.stderr
    assert "unresolved: no candidate resolved the issue" in " ".join(r.stdout.split())
    assert "a // b" in (repo / "calc" / "ops.py").read_text() and "+ 0" not in (repo / "calc" / "ops.py").read_text()


def test_batch_two_tasks_preds_and_resume(tmp_path: Path) -> None:
    for name in ("a", "b"):
        make_repo(tmp_path / "repos" / name)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"calc__{n}", "repo": f"repos/{n}", "issue": f"repos/{n}/issue.md"})
                             + "\n" for n in ("a", "b")))
    script = write_script(tmp_path / "s.json", [GOOD_DEF])
    out = tmp_path / "out"
    args = ("batch", str(tasks), "--out", str(out), "--workers", "2", "--engine", f"scripted:{script}",
            "--sandbox", "local")
    r = codeagent(*args)
    assert r.returncode == 0, r.stderr
    preds = json.loads((out / "preds.json").read_text())
    assert sorted(p["instance_id"] for p in preds) == ["calc__a", "calc__b"]
    for p in preds:
        assert set(p) == {"instance_id", "model_name_or_path", "model_patch"}
        assert p["model_patch"].startswith("diff --git") and "+    return a / b" in p["model_patch"]
    assert len(list((out / "runs").glob("*/*.traj.json"))) == 2
    again = codeagent(*args)
    assert again.returncode == 0 and again.stderr.count("skipped") == 2
    assert len(list((out / "runs").glob("*/*.traj.json"))) == 2
    redo = codeagent(*args, "--redo-existing", "--model", str(tmp_path / "models" / "my-model.gguf"))
    assert redo.returncode == 0 and "skipped" not in redo.stderr, redo.stderr
    assert "progress: 2/2 tasks" in redo.stderr and "ETA 0s" in redo.stderr
    assert len(list((out / "runs").glob("*/*.traj.json"))) == 4
    assert {p["model_name_or_path"] for p in json.loads((out / "preds.json").read_text())} == {"codeagent/my-model"}


def test_batch_binary_tasks_file_is_one_line(tmp_path: Path) -> None:
    tasks = tmp_path / "t.jsonl"
    tasks.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    r = codeagent("batch", str(tasks), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and r.stderr.strip() == f"codeagent: error: {tasks} is not UTF-8 text (byte 0)"


def test_batch_bad_tasks_file(tmp_path: Path) -> None:
    tasks = tmp_path / "t.jsonl"
    tasks.write_text('{"id": "x"}\n')
    r = codeagent("batch", str(tasks), "--out", str(tmp_path / "o"))
    assert r.returncode == 2 and f"{tasks}:1: each line needs id, repo and issue" in r.stderr


def test_repl_piped_stdin(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    script = write_script(tmp_path / "s.json", [FIX, "Done: divide fixed."])
    stdin = "/kv\nfix the division\n/diff\n/undo\n/diff\n/save\n/quit\n"
    r = codeagent("repl", "--repo", str(repo), "--engine", f"scripted:{script}", "--sandbox", "local", "--budget", "900",
                  stdin=stdin)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "model qwen-coder-1.5b · kv policy default, budget 900 slots" in out and "sandbox: bwrap" in out
    assert "kv: " in out and "slots" in out
    assert "→ edit calc/ops.py" in out and "+    return a / b" in out
    assert "undone:" in out and out.rindex("no changes yet") > out.index("+    return a / b")
    assert "session saved" in out and "no change: the run's worktree and branch removed" in " ".join(out.split())
    assert "a // b" in (repo / "calc" / "ops.py").read_text()
    assert git(repo, "branch", "--list", "codeagent/*").strip() == ""


def test_repl_commit_and_apply_take_the_work_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    script = write_script(tmp_path / "s.json", [FIX, "Done: **divide** fixed."])
    stdin = "fix the \\\ndivision\n/commit divide: true division\n/apply\n/quit\n"
    r = codeagent("repl", "--repo", str(repo), "--engine", f"scripted:{script}", "--sandbox", "local", stdin=stdin)
    assert r.returncode == 0, r.stderr
    assert "Done: divide fixed." in r.stdout  # the reply is rendered as Markdown (no ** left)
    [branch] = git(repo, "branch", "--list", "codeagent/*", "--format=%(refname:short)").split()
    assert git(repo, "log", "-1", "--format=%s", branch).strip() == "divide: true division"
    assert "applied changes to 1 file" in r.stdout and "return a / b" in (repo / "calc" / "ops.py").read_text()
    [traj] = (repo / ".codeagent-runs").glob("repl-*/repl-*.traj.json")
    asked = [m.content for m in load(traj).messages if m.role == "user" and "division" in m.content]
    assert asked and "fix the \ndivision" in asked[0]  # a line ending in \ goes on
    assert f"session saved: {traj}" in r.stdout  # one unbroken line to copy
