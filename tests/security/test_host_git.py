"""Host-side git never runs what the model planted: fsmonitor, hooks, external diff, pager."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from codeagent.agent.workspace import Workspace
from codeagent.hostgit import GitError, git
from codeagent.tools.gitdiff import diff_worktree

from .conftest import FINISH, FIX, PLAN, bash, codeagent, make_repo, need_bwrap, need_docker, outside_dir, \
    plain_folder, script


def plant(markers: Path) -> str:
    """What an attacker model runs in the sandbox: a fresh .git whose config and hooks run commands."""
    return (
        "rm -rf .git && git init -q . && "
        f"git config core.fsmonitor 'touch {markers}/fsmonitor' && "
        f"git config diff.external 'touch {markers}/extdiff' && "
        f"git config core.pager 'touch {markers}/pager' && "
        f"printf '#!/bin/sh\\ntouch {markers}/hook\\n' > .git/hooks/post-commit && "
        "cp .git/hooks/post-commit .git/hooks/pre-commit && chmod +x .git/hooks/* && echo planted"
    )


@pytest.mark.parametrize("layout", ["git repository", "plain folder"])
def test_planted_fsmonitor_and_hooks_never_run_on_the_host(layout: str, tmp_path: Path) -> None:
    need_bwrap()
    repo = make_repo(tmp_path / "calc") if layout == "git repository" else plain_folder(tmp_path / "calc")
    markers = outside_dir()
    try:
        engine = script(tmp_path / "s.json", [PLAN, bash(plant(markers)), FIX, FINISH])
        r = codeagent("solve", str(repo / "issue.md"), "--repo", str(repo), "--engine", engine, "--sandbox", "local",
                      "--commit")
        planted = sorted(p.name for p in markers.iterdir())
    finally:
        shutil.rmtree(markers)
    assert planted == [], f"host ran planted git config: {planted}"
    assert r.returncode == 0, r.stderr[-2000:]
    assert "planted" in "".join(p.read_text() for p in repo.glob(".codeagent-runs/*/*.traj.json"))
    assert "committed" in r.stdout and "+    return a / b" in "".join(
        p.read_text() for p in repo.glob(".codeagent-runs/*/patch.diff"))


def test_host_git_ignores_a_planted_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    ws = Workspace.create(repo, tmp_path / "runs", "r1")
    markers = outside_dir()
    try:
        subprocess.run(["bash", "-c", plant(markers)], cwd=ws.path, check=True, capture_output=True)
        (ws.path / "calc" / "ops.py").write_text("changed\n")
        patch = diff_worktree(ws.path, ws.base)
        git(ws.path, "status", "--porcelain")
        sha = ws.commit("codeagent: change")
        git(ws.path / "calc", "log", "-1", "-p")  # a subfolder of the work tree is covered too
        unregistered = tmp_path / "planted"
        unregistered.mkdir()
        subprocess.run(["bash", "-c", plant(markers)], cwd=unregistered, check=True, capture_output=True)
        (unregistered / "f").write_text("x")
        git(unregistered, "add", "f")
        git(unregistered, "-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "m")
        git(unregistered, "diff", "HEAD~0")
        planted = sorted(p.name for p in markers.iterdir())
    finally:
        shutil.rmtree(markers)
    assert planted == []
    assert "+changed" in patch
    assert subprocess.run(["git", "rev-parse", ws.branch], cwd=repo, capture_output=True, text=True).stdout.strip() == sha


def test_host_git_has_a_clean_environment_and_a_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path / "calc")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))  # an inherited GIT_* must not steer host git
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.fsmonitor=touch /nonexistent/x'")
    assert git(repo, "rev-parse", "--show-toplevel").strip() == str(repo)
    fifo = tmp_path / "index-fifo"
    os.mkfifo(fifo)  # reading an index from a FIFO blocks forever
    with pytest.raises(GitError, match="timed out"):
        git(repo, "status", env={"GIT_INDEX_FILE": str(fifo)}, timeout=1.0)


@pytest.mark.parametrize("kind", ["bwrap", "docker"])
@pytest.mark.parametrize("layout", ["git repository", "plain folder"])
def test_the_sandbox_cannot_write_the_run_git_dir(kind: str, layout: str, tmp_path: Path) -> None:
    need_bwrap() if kind == "bwrap" else need_docker()
    from codeagent.sandbox import SandboxConfig
    from codeagent.sandbox.docker_box import DockerSandbox
    from codeagent.sandbox.local import LocalSandbox

    repo = make_repo(tmp_path / "calc") if layout == "git repository" else plain_folder(tmp_path / "calc")
    ws = Workspace.create(repo, tmp_path / "runs", "r1")
    gdir = Path(subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=ws.path, check=True,
                               capture_output=True, text=True).stdout.strip())
    before = (gdir / "HEAD").read_bytes()
    cfg = SandboxConfig(timeout_s=30)
    box = LocalSandbox(cfg, ws.path) if kind == "bwrap" else DockerSandbox(cfg, ws.path, ro_paths=ws.git_dirs())
    try:
        r = box.run(f"echo 'ref: refs/heads/pwned' > {gdir}/HEAD; touch {gdir}/hooks/x; git status --short")
    finally:
        box.close()
    assert (gdir / "HEAD").read_bytes() == before and not (gdir / "hooks" / "x").exists(), r.output


def test_a_huge_new_file_stays_out_of_the_patch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    ws = Workspace.create(repo, tmp_path / "runs", "r1")
    with open(ws.path / "blob.bin", "wb") as f:
        f.write(os.urandom(1 << 20) * 20)  # 20 MB: its binary patch would be ~25 MB of text
    (ws.path / "calc" / "ops.py").write_text("changed\n")
    patch = ws.diff()
    assert "+changed" in patch and "blob.bin" not in patch and len(patch) < 100_000


def test_a_relative_path_entry_never_runs_a_planted_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_bwrap()
    from codeagent.sandbox import SandboxConfig
    from codeagent.sandbox.local import LocalSandbox

    repo = make_repo(tmp_path / "calc")
    ws = Workspace.create(repo, tmp_path / "runs", "r1")
    markers = outside_dir()
    try:
        for name in ("git", "bwrap", "bash"):  # what the model can leave in the workspace
            exe = ws.path / name
            exe.write_text(f"#!/bin/sh\ntouch {markers}/{name}\n")
            exe.chmod(0o755)
        monkeypatch.setenv("PATH", f".::{os.environ['PATH']}")  # a user PATH with '.' and an empty entry
        box = LocalSandbox(SandboxConfig(timeout_s=20), ws.path)
        try:
            r = box.run("echo ran")
        finally:
            box.close()
        patch = ws.diff()
        planted = sorted(p.name for p in markers.iterdir())
    finally:
        shutil.rmtree(markers)
    assert planted == [], f"host ran planted programs: {planted}"
    assert "ran" in r.output and "bwrap" in patch
