"""The per-run workspace: the user's tree is never touched; patches come back out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codeagent.agent.workspace import Workspace
from codeagent.errors import InputError


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def snapshot(repo: Path) -> dict[str, bytes]:
    return {str(p.relative_to(repo)): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(repo).parts}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "user"
    r.mkdir()
    (r / "app.py").write_text("def f():\n    return 1\n")
    (r / "notes.txt").write_text("keep\n")
    git(r, "init", "-q")
    git(r, "add", "-A")
    git(r, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "init")
    return r


def test_dirty_user_repo_is_left_byte_identical(repo: Path, tmp_path: Path) -> None:
    (repo / "app.py").write_text("def f():\n    return 2  # uncommitted\n")
    (repo / "scratch.txt").write_text("untracked\n")
    git(repo, "add", "scratch.txt")
    status, files, index = git(repo, "status", "--porcelain"), snapshot(repo), (repo / ".git/index").read_bytes()
    head = git(repo, "rev-parse", "HEAD")

    ws = Workspace.create(repo, tmp_path / "runs", "r1")
    assert ws.dirty and ws.is_worktree and ws.branch == "codeagent/r1"
    assert (ws.path / "app.py").read_text() == "def f():\n    return 1\n"  # starts from HEAD
    (ws.path / "app.py").write_text("def f():\n    return 42\n")
    (ws.path / "new.py").write_text("x = 1\n")
    (ws.path / "notes.txt").unlink()
    ws.commit("agent change")
    ws.diff()

    assert git(repo, "status", "--porcelain") == status and snapshot(repo) == files
    assert (repo / ".git/index").read_bytes() == index and git(repo, "rev-parse", "HEAD") == head
    ws.remove()
    assert not ws.path.exists() and git(repo, "status", "--porcelain") == status


def test_diff_patch_and_apply(repo: Path, tmp_path: Path) -> None:
    ws = Workspace.create(repo, tmp_path / "runs", "r2")
    assert not ws.dirty and ws.diff() == ""
    (ws.path / "app.py").write_text("def f():\n    return 42\n")
    (ws.path / "pkg").mkdir()
    (ws.path / "pkg" / "new.py").write_text("x = 1\n")
    (ws.path / "pkg" / "__pycache__").mkdir()
    (ws.path / "pkg" / "__pycache__" / "new.cpython-311.pyc").write_bytes(b"\0junk")
    patch = ws.diff()
    assert "+    return 42" in patch and "pkg/new.py" in patch and "__pycache__" not in patch
    assert git(ws.path, "status", "--porcelain").count("??") == 1  # the run's own index untouched
    out = ws.write_patch(tmp_path / "out" / "run.patch")
    assert out.read_text() == patch
    msg = ws.apply_to_user_tree()
    assert "2 file(s)" in msg
    assert (repo / "app.py").read_text() == "def f():\n    return 42\n" and (repo / "pkg/new.py").exists()


def test_apply_refuses_when_patch_conflicts(repo: Path, tmp_path: Path) -> None:
    ws = Workspace.create(repo, tmp_path / "runs", "r3")
    (ws.path / "app.py").write_text("def f():\n    return 42\n")
    (repo / "app.py").write_text("completely different\n")
    before = snapshot(repo)
    with pytest.raises(InputError, match="does not apply"):
        ws.apply_to_user_tree()
    assert snapshot(repo) == before


def test_commit_on_the_run_branch(repo: Path, tmp_path: Path) -> None:
    ws = Workspace.create(repo, tmp_path / "runs", "r4")
    (ws.path / "app.py").write_text("changed\n")
    sha = ws.commit("codeagent: fix")
    assert git(repo, "rev-parse", "codeagent/r4").strip() == sha
    assert git(repo, "log", "-1", "--format=%s", sha).strip() == "codeagent: fix"
    assert "changed" in ws.diff()  # still against the run's base
    assert ws.git_dirs() == [(repo / ".git").resolve()]


def test_plain_folder_is_copied_and_diffable(tmp_path: Path) -> None:
    src = tmp_path / "plain"
    (src / "node_modules" / "dep").mkdir(parents=True)
    (src / "node_modules" / "dep" / "index.js").write_text("x")
    (src / ".venv").mkdir()
    (src / "main.py").write_text("print(1)\n")
    before = snapshot(src)
    ws = Workspace.create(src, tmp_path / "runs", "r5")
    assert not ws.is_worktree and ws.branch is None and not ws.dirty
    assert (ws.path / "main.py").exists() and not (ws.path / "node_modules").exists()
    assert not (src / ".git").exists()
    (ws.path / "main.py").write_text("print(2)\n")
    (ws.path / "extra.py").write_text("y = 2\n")
    patch = ws.diff()
    assert "+print(2)" in patch and "extra.py" in patch
    with pytest.raises(InputError, match="not a git repository"):
        ws.apply_to_user_tree()
    assert snapshot(src) == before
    ws.remove()
    assert not ws.path.exists()


def test_bad_inputs_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        Workspace.create(tmp_path / "missing", tmp_path / "runs", "x")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        Workspace.create(f, tmp_path / "runs", "x")
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(InputError, match="no commit"):
        Workspace.create(empty, tmp_path / "runs", "x")
