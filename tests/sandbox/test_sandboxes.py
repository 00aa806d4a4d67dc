"""The same hostile commands against every sandbox kind this machine has."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import psutil
import pytest

from codeagent.sandbox import SandboxConfig, open_sandbox, resolve_kind
from codeagent.sandbox.env import is_secret, sandbox_env

from .conftest import make_sandbox


def _procs_with(marker: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        if marker in " ".join(p.info["cmdline"] or []):
            found.append(p)
    return found


def test_echo_and_exit_code(sandbox) -> None:
    r = sandbox.run("echo hello; pwd; exit 3")
    assert r.exit_code == 3 and not r.timed_out
    assert "hello" in r.output and str(sandbox.workspace) in r.output


def test_hanging_command_is_killed_with_its_group(sandbox) -> None:
    marker = f"{100 + uuid.uuid4().int % 1000}.{os.getpid()}"
    start = time.monotonic()
    r = sandbox.run(f"sleep {marker} & sleep {marker}; echo never", timeout=1)
    assert r.timed_out and r.exit_code == 124
    assert time.monotonic() - start < 8
    assert "never" not in r.output
    deadline = time.monotonic() + 5
    while _procs_with(f"sleep {marker}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _procs_with(f"sleep {marker}")


def test_background_leftovers_do_not_block(sandbox) -> None:
    start = time.monotonic()
    r = sandbox.run("sleep 30 & echo started", timeout=20)
    assert r.exit_code == 0 and "started" in r.output
    assert time.monotonic() - start < 5


FORKS = """
import os, sys, time
n = 0
try:
    for _ in range(1000):
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except OSError as e:
    print("blocked after", n, e)
    sys.exit(3)
print("forked", n)
"""


def test_fork_loop_is_contained(sandbox) -> None:
    (sandbox.workspace / "forks.py").write_text(FORKS)
    r = sandbox.run("python3 forks.py", timeout=15)
    assert r.exit_code == 3, r.output
    n = int(r.output.split("blocked after")[1].split()[0])
    assert n < 64


def test_memory_hog_fails(sandbox) -> None:
    r = sandbox.run("python3 -c \"b = b'x' * (4 * 1024**3); print('allocated')\"", timeout=30)
    assert r.exit_code != 0
    assert "allocated" not in r.output


def test_network_is_off(sandbox) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # reachable from here
        code = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')"
        r = sandbox.run(f'python3 -c "{code}"', timeout=10)
    finally:
        server.close()
    assert r.exit_code != 0 and "connected" not in r.output


def test_huge_output_is_capped_without_memory_blowup(sandbox) -> None:
    size = 2 * 1024**3 if sandbox.name == "local" else 512 * 1024**2
    rss = psutil.Process().memory_info().rss
    r = sandbox.run(f"yes | head -c {size}; echo; echo END", timeout=60)
    assert r.exit_code == 0, r.output[-300:]
    assert len(r.output) < 70 * 1024
    assert r.truncated_bytes > size - 70 * 1024
    assert "bytes of output cut" in r.output and r.output.rstrip().endswith("END")
    assert psutil.Process().memory_info().rss - rss < 100 * 1024**2


@pytest.mark.parametrize("kind", ["bwrap", "unshare", pytest.param("docker", marks=pytest.mark.docker)])
def test_secrets_stay_out(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "s3cret-gh")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cret-aws")
    monkeypatch.setenv("DB_PASSWORD", "s3cret-db")
    box = make_sandbox(kind, tmp_path, env={"API_KEY": "s3cret-extra", "FOO": "bar"})
    try:
        r = box.run("env")
    finally:
        box.close()
    assert "HOME=" in r.output and "PATH=" in r.output and "FOO=bar" in r.output
    assert "s3cret" not in r.output


def test_files_written_in_workspace_appear(sandbox) -> None:
    r = sandbox.run("mkdir -p sub && echo data > sub/f.txt")
    assert r.exit_code == 0, r.output
    assert (sandbox.workspace / "sub" / "f.txt").read_text() == "data\n"


@pytest.mark.parametrize("kind", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_writes_outside_workspace_do_not_reach_host(kind: str, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    box = make_sandbox(kind, ws)
    try:
        r = box.run(f"echo x > {outside}/f.txt; echo y > /var/tmp/codeagent-probe-{os.getpid()}")
    finally:
        box.close()
    assert not (outside / "f.txt").exists()
    assert not Path(f"/var/tmp/codeagent-probe-{os.getpid()}").exists()
    if kind == "bwrap":
        assert "Read-only file system" in r.output


def test_unshare_documents_what_it_leaves_open(tmp_path: Path) -> None:
    box = make_sandbox("unshare", tmp_path)
    try:
        assert "NOT write-protected" in box.isolation
    finally:
        box.close()


def test_env_scrubbing_drops_secret_names() -> None:
    base = {"PATH": "/bin", "GITHUB_TOKEN": "t", "AWS_ACCESS_KEY_ID": "a", "MY_PASSWORD": "p", "LC_ALL": "C"}
    env = sandbox_env("/h", {"DB_SECRET": "s", "FOO": "bar"}, base=base)
    assert env["PATH"] == "/bin" and env["HOME"] == "/h" and env["FOO"] == "bar" and env["LC_ALL"] == "C"
    assert not {"GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "MY_PASSWORD", "DB_SECRET"} & set(env)
    assert is_secret("OPENAI_API_KEY") and not is_secret("PATH")


def test_open_sandbox_local_and_auto(tmp_path: Path) -> None:
    box = open_sandbox(SandboxConfig(kind="local"), tmp_path)
    try:
        assert box.name == "local" and box.run("echo ok").output.strip() == "ok"
    finally:
        box.close()
    kind, why = resolve_kind(SandboxConfig(kind="auto"))
    assert kind in ("docker", "local") and why


@pytest.mark.docker
def test_docker_sees_a_worktree_git_and_runs_pytest(tmp_path: Path) -> None:
    import subprocess

    from codeagent.agent.workspace import Workspace
    from codeagent.sandbox.docker_box import DockerSandbox

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "test_a.py").write_text("def test_a():\n    assert True\n")
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=u", "-c", "user.email=u@u", "commit", "-qm", "i"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    ws = Workspace.create(repo, tmp_path / "runs", "d1")
    box = make_sandbox("docker", ws.path)
    assert isinstance(box, DockerSandbox)
    box.close()
    box = DockerSandbox(box.cfg, ws.path, ro_paths=ws.git_dirs())
    try:
        r = box.run("git status --short --branch && python -m pytest -q -p no:cacheprovider", timeout=60)
    finally:
        box.close()
        ws.remove()
    assert r.exit_code == 0, r.output
    assert "codeagent/d1" in r.output and "1 passed" in r.output


def test_no_isolation_still_limits_and_says_so(tmp_path: Path) -> None:
    from codeagent.sandbox.local import LocalSandbox

    box = LocalSandbox(SandboxConfig(timeout_s=10, memory_bytes=1 << 30, allow_weak=True), tmp_path, isolation="none")
    try:
        assert box.isolation == "WEAK no isolation (sandbox.allow_weak): asked for none"
        r = box.run("python3 -c \"b = b'x' * (2 * 1024**3)\"")
        assert r.exit_code != 0 and "MemoryError" in r.output
    finally:
        box.close()


def test_apt_mirror_reads_both_source_formats(tmp_path: Path) -> None:
    from codeagent.sandbox.image import DEFAULT_MIRROR, apt_mirror

    assert apt_mirror(tmp_path) == DEFAULT_MIRROR
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "d.sources").write_text(
        "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm\n")
    assert apt_mirror(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text("# c\ndeb [arch=amd64] http://old.example/debian bookworm main\n")
    assert apt_mirror(tmp_path) == "http://old.example/debian"
