"""The local sandbox hides host sockets and credentials, keeps /sys read-only, and is weak only when asked."""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest

from codeagent.errors import InputError
from codeagent.sandbox import SandboxConfig
from codeagent.sandbox.local import LocalSandbox

from .conftest import need_bwrap, outside_dir

CONNECT = """
import socket, sys
for path in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("CONNECTED", path)
    except OSError as e:
        print("blocked", path, e.strerror)
"""


def _listen(path: str) -> socket.socket:
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(8)  # connections queue in the backlog; nothing needs to accept them
    return srv


def test_host_unix_sockets_are_out_of_reach(tmp_path: Path) -> None:
    need_bwrap()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "connect.py").write_text(CONNECT)
    outside = outside_dir()
    run_dir = Path("/run") / outside.name
    paths = [str(outside / "agent.sock")]
    if os.access("/run", os.W_OK):
        run_dir.mkdir()
        paths.append(str(run_dir / "daemon.sock"))
    box = LocalSandbox(SandboxConfig(timeout_s=20), ws)  # made before the sockets: each command hides new ones
    servers = [_listen(p) for p in paths]
    for p in paths:  # reachable from the host itself
        socket.socket(socket.AF_UNIX).connect(p)
    docker = [p for p in ("/var/run/docker.sock", "/run/docker.sock") if Path(p).exists()]
    try:
        r = box.run(f"python3 connect.py {' '.join(paths + docker)}")
    finally:
        box.close()
        for s in servers:
            s.close()
        shutil.rmtree(outside)
        shutil.rmtree(run_dir, ignore_errors=True)
    assert "CONNECTED" not in r.output, r.output
    assert r.output.count("blocked") == len(paths + docker), r.output


def test_sys_and_sysctls_are_read_only_and_the_cgroup_cannot_be_left(tmp_path: Path) -> None:
    need_bwrap()
    box = LocalSandbox(SandboxConfig(timeout_s=20), tmp_path)
    try:
        r = box.run("for f in /sys/fs/cgroup/cgroup.procs /sys/fs/cgroup/pids/cgroup.procs "
                    "/sys/fs/cgroup/memory/cgroup.procs; do [ -e $f ] && (echo $$ > $f) 2>&1; done; "
                    "touch /sys/codeagent-probe 2>&1; echo end-sys; "
                    # writing a sysctl's own value back: harmless if it got through, refused when read-only
                    "f=/proc/sys/kernel/printk_ratelimit; v=$(cat $f); (echo $v > $f) 2>&1; echo end-proc")
    finally:
        box.close()
    assert "end-sys" in r.output and "end-proc" in r.output
    sys_part, proc_part = r.output.split("end-sys")
    assert "Read-only file system" in sys_part and "Read-only file system" in proc_part, r.output
    assert not Path("/sys/codeagent-probe").exists()


def test_host_credential_files_are_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    need_bwrap()
    home = outside_dir()
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
        (home / ".netrc").write_text("machine x password hunter2\n")
        monkeypatch.setenv("HOME", str(home))
        box = LocalSandbox(SandboxConfig(timeout_s=20), tmp_path)
        try:
            r = box.run(f"cat {home}/.ssh/id_ed25519 {home}/.netrc; ls -a {home}/.ssh; echo end")
        finally:
            box.close()
    finally:
        shutil.rmtree(home)
    assert "end" in r.output and "PRIVATE KEY" not in r.output and "hunter2" not in r.output, r.output


def test_weak_isolation_needs_an_explicit_opt_in(tmp_path: Path) -> None:
    for kind in ("unshare", "none"):
        with pytest.raises(InputError, match="allow_weak"):
            LocalSandbox(SandboxConfig(), tmp_path, isolation=kind)
    box = LocalSandbox(SandboxConfig(allow_weak=True), tmp_path, isolation="unshare")
    try:
        assert box.isolation.startswith("WEAK") and "NOT write-protected" in box.isolation
        assert box.run("echo ok").output.strip() == "ok"
    finally:
        box.close()
    assert not box._home.exists()
