"""Nothing a command starts outlives it: daemons, fork bombs, a killed or terminated codeagent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest

from codeagent.sandbox import SandboxConfig

from .conftest import ENV, FINISH, PLAN, bash, make_repo, need_bwrap, need_docker, script

LIMITS = dict(timeout_s=20, pids_limit=128, memory_bytes=1 << 30)


def _box(kind: str, ws: Path):  # noqa: ANN202
    if kind == "bwrap":
        need_bwrap()
        from codeagent.sandbox.local import LocalSandbox

        return LocalSandbox(SandboxConfig(**LIMITS), ws)
    need_docker()
    from codeagent.sandbox.docker_box import DockerSandbox

    return DockerSandbox(SandboxConfig(**LIMITS), ws)


def _with(marker: str) -> list[psutil.Process]:
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if marker in " ".join(p.info["cmdline"] or []):
                found.append(p)
        except psutil.Error:
            continue
    return found


def _gone(marker: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _with(marker)


def _marker() -> str:
    return f"{1000 + uuid.uuid4().int % 9000}.{os.getpid() % 1000}"


@pytest.mark.parametrize("kind", ["bwrap", "docker"])
def test_daemons_die_with_their_command(kind: str, tmp_path: Path) -> None:
    box = _box(kind, tmp_path)
    m = _marker()
    try:
        r = box.run(f"setsid sleep {m} >/dev/null 2>&1 < /dev/null & nohup sleep {m} >/dev/null 2>&1 & "
                    f"(sleep {m} &) ; echo started", timeout=10)
        assert "started" in r.output
        assert _gone(f"sleep {m}")
        after = box.run(f"ps -eo user,args | grep -c '[s]leep {m}' || true", timeout=10)
    finally:
        box.close()
    assert after.output.strip() == "0", after.output


@pytest.mark.parametrize("kind", ["bwrap", "docker"])
def test_a_fork_bomb_leaves_the_next_command_working(kind: str, tmp_path: Path) -> None:
    box = _box(kind, tmp_path)
    try:
        bomb = box.run("bomb() { bomb | bomb & }; bomb; sleep 3", timeout=3)
        start = time.monotonic()
        r = box.run("echo alive; ps -e --no-headers | wc -l", timeout=10)
        took = time.monotonic() - start
    finally:
        box.close()
    assert bomb.exit_code != 0
    assert r.exit_code == 0 and "alive" in r.output, r.output
    assert took < 5
    assert int(r.output.split()[-1]) < 10, r.output  # init, keeper, bash, ps, wc at most


CHILD = """
import sys, time
from pathlib import Path
from codeagent.sandbox import SandboxConfig
kind, ws, marker = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if kind == "docker":
    from codeagent.sandbox.docker_box import DockerSandbox as Box
else:
    from codeagent.sandbox.local import LocalSandbox as Box
box = Box(SandboxConfig(timeout_s=600), ws)
print(getattr(box, "_home", ""), getattr(getattr(box, "container", None), "name", ""), sep="|", flush=True)
box.run(f"sleep {marker}")
"""


@pytest.mark.parametrize("kind", ["bwrap", "docker"])
def test_kill_9_of_codeagent_then_startup_sweep(kind: str, tmp_path: Path) -> None:
    need_bwrap() if kind == "bwrap" else need_docker()
    from codeagent.sandbox import sweep_leftovers

    m = _marker()
    child = subprocess.Popen([sys.executable, "-c", CHILD, kind, str(tmp_path), m], stdout=subprocess.PIPE,
                             text=True, env=ENV)
    assert child.stdout is not None
    home, _, container = child.stdout.readline().strip().partition("|")
    deadline = time.monotonic() + 20
    while not _with(f"sleep {m}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _with(f"sleep {m}"), "the sandboxed command did not start"
    cgroups = [p for p in Path("/sys/fs/cgroup").rglob(f"codeagent-*.{child.pid}.*")] if kind == "bwrap" else []
    assert cgroups or kind != "bwrap" or os.geteuid() != 0
    child.kill()
    child.wait()
    if kind == "bwrap":
        assert _gone(f"sleep {m}"), "the command outlived its killed parent"
    removed = sweep_leftovers(docker=kind == "docker")
    assert _gone(f"sleep {m}")
    if kind == "bwrap":
        assert home and not Path(home).exists() and home in removed
        assert all(not p.exists() for p in cgroups)
    else:
        import docker

        client = docker.from_env()
        try:
            names = [c.name for c in client.containers.list(all=True)]
        finally:
            client.close()
        assert container and container not in names and container in removed


def test_sigterm_ends_the_run_like_ctrl_c(tmp_path: Path) -> None:
    need_bwrap()
    repo = make_repo(tmp_path / "calc")
    m = _marker()
    engine = script(tmp_path / "s.json", [PLAN, bash(f"sleep {m}"), FINISH])
    proc = subprocess.Popen([sys.executable, "-m", "codeagent.cli", "solve", str(repo / "issue.md"), "--repo",
                             str(repo), "--engine", engine, "--sandbox", "local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
    try:
        deadline = time.monotonic() + 120  # a loaded 2-core CI machine
        while not _with(f"sleep {m}") and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.1)
        assert _with(f"sleep {m}"), "the scripted command did not start"
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err[-2000:]
    assert _gone(f"sleep {m}")
    [traj] = list(repo.glob(".codeagent-runs/*/*.traj.json"))
    result = json.loads(traj.read_text())["result"]
    assert result is not None and result["status"] == "interrupted"
    assert not list(Path("/sys/fs/cgroup").rglob(f"codeagent-*.{proc.pid}.*"))
    assert not list(Path("/tmp").glob(f"codeagent-home-*.{proc.pid}.*"))


def test_docker_container_is_hardened(tmp_path: Path) -> None:
    need_docker()
    from codeagent.sandbox.docker_box import EXPIRES, OWNER, DockerSandbox, sweep

    box = DockerSandbox(SandboxConfig(**LIMITS), tmp_path)
    try:
        r = box.run("id -u; grep CapEff /proc/self/status; touch /etc/x 2>&1; touch /tmp/ok && echo tmp-ok; "
                    "touch ws-ok && echo ws-ok", timeout=10)
        box.container.reload()
        host = box.container.attrs["HostConfig"]
        labels = box.container.labels
        assert sweep(now=time.time()) == []  # its owner lives and it has not expired
    finally:
        box.close()
    lines = r.output.splitlines()
    assert lines[0] != "0", r.output
    assert "CapEff:\t0000000000000000" in r.output
    assert "Read-only file system" in r.output and "tmp-ok" in r.output and "ws-ok" in r.output
    assert host["CapDrop"] == ["ALL"] and host["ReadonlyRootfs"] and host["Init"]
    assert any("no-new-privileges" in o for o in host["SecurityOpt"])
    assert float(labels[EXPIRES]) > time.time() and labels[OWNER]


def test_docker_expired_containers_are_swept(tmp_path: Path) -> None:
    need_docker()
    from codeagent.sandbox.docker_box import DockerSandbox, sweep

    box = DockerSandbox(SandboxConfig(**LIMITS, lifetime_s=60), tmp_path)
    try:
        name = box.container.name
        assert name in sweep(now=time.time() + 120)
    finally:
        box.close()
