"""Commands run on this machine, isolated by bubblewrap (or, opted in, weaker) and always resource-limited."""

from __future__ import annotations

import ctypes
import math
import os
import resource
import shutil
import signal
import tempfile
from pathlib import Path

from codeagent.protocols import CommandResult
from codeagent.sandbox.cgroup import SandboxCgroup
from codeagent.sandbox.config import SandboxConfig
from codeagent.sandbox.env import sandbox_env
from codeagent.sandbox.isolation import bwrap_prefix, choose
from codeagent.sandbox.owner import owner_tag
from codeagent.sandbox.registry import SANDBOXES
from codeagent.sandbox.run_process import run_capped

HOME_PREFIX = "codeagent-home-"
PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


@SANDBOXES.register("local")
class LocalSandbox:
    """``bash -c`` in the workspace, wrapped by bubblewrap, under a cgroup, rlimits and a timeout.

    Isolation (:mod:`codeagent.sandbox.isolation`): bubblewrap (/ and /sys read-only, workspace and
    a private home writable, private /tmp and /run, host sockets and credential files hidden, own
    pid namespace, no network, no capabilities as root). unshare or none only with
    ``allow_weak``. Limits: a cgroup per sandbox where one can be made (root) with ``pids.max``
    and a memory limit over all its processes together, which also lets every process the command
    left behind be killed after it; rlimits (RLIMIT_AS per process as a backstop, CPU, file size,
    NPROC, no core files), hard and soft alike. Every child gets PR_SET_PDEATHSIG(SIGKILL), so a
    killed codeagent takes its commands along; a later start-up sweeps the cgroup and home folder.
    """

    name = "local"

    def __init__(self, cfg: SandboxConfig, workspace: Path, isolation: str = "auto") -> None:
        self.cfg = cfg
        self.workspace = Path(workspace).resolve()
        self._home = Path(tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{owner_tag()}-"))
        try:
            self._iso = choose(isolation, self.workspace, self._home, cfg.network, cfg.allow_weak)
        except BaseException:
            shutil.rmtree(self._home, ignore_errors=True)
            raise
        self.isolation = self._iso.note
        self._cgroup = SandboxCgroup.create(cfg.pids_limit, cfg.memory_bytes) if os.geteuid() == 0 else None
        cg = self._cgroup
        if cg is not None and cg.limits_pids:
            procs = f"pids cgroup max {cfg.pids_limit}"
        elif os.geteuid() != 0:
            procs = f"RLIMIT_NPROC {cfg.pids_limit}"
        else:
            procs = "processes NOT limited (root, no pids cgroup available)"
        memory = (f"memory {cfg.memory_bytes} B for the whole sandbox (cgroup)" if cg is not None and cg.limits_memory
                  else f"memory {cfg.memory_bytes} B per process only (RLIMIT_AS; no memory cgroup)")
        self.limits = f"{memory}, {procs}, file size {cfg.max_file_bytes} B"
        self.env = sandbox_env(str(self._home), cfg.env)

    def _preexec(self, timeout: float):  # noqa: ANN202 - returns the preexec_fn closure
        cfg = self.cfg
        cpu_s = int(math.ceil(timeout * max(cfg.cpus, 1.0))) + 5
        limits = [
            (resource.RLIMIT_AS, cfg.memory_bytes),
            (resource.RLIMIT_CPU, cpu_s),
            (resource.RLIMIT_FSIZE, cfg.max_file_bytes),
            (resource.RLIMIT_NPROC, cfg.pids_limit),
            (resource.RLIMIT_CORE, 0),
        ]
        cgroup = self._cgroup
        parent = os.getpid()

        def preexec() -> None:
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the parent died before prctl took effect
                os._exit(137)
            if cgroup is not None:
                cgroup.join_self()
            for what, value in limits:
                resource.setrlimit(what, (value, value))

        return preexec

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` with bash inside the workspace; everything it started is killed when it ends."""
        timeout = float(timeout or self.cfg.timeout_s)
        self._home.mkdir(mode=0o700, exist_ok=True)  # a /tmp cleaner may have removed it between commands
        prefix = self._iso.prefix
        if self._iso.kind == "bwrap":  # rebuilt per command: sockets bound since the last one are hidden too
            prefix = tuple(bwrap_prefix(self.workspace, self._home, self.cfg.network))
        argv = [*prefix, "bash", "-c", command]
        ooms = self._cgroup.oom_kills() if self._cgroup is not None else 0
        result = run_capped(
            argv, cwd=self.workspace, env=self.env, timeout=timeout,
            max_output_bytes=self.cfg.max_output_bytes, preexec_fn=self._preexec(timeout),
            kill_extra=self._cgroup.kill_all if self._cgroup else None,
        )
        if self._cgroup is not None and self._cgroup.oom_kills() > ooms:
            result.output += f"\n[a process was killed: the sandbox ran out of memory ({self.cfg.memory_bytes} B)]\n"
        return result

    def close(self) -> None:
        """Kill anything left and remove the private home and the cgroup."""
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        shutil.rmtree(self._home, ignore_errors=True)


def sweep_homes(tmp: Path | None = None) -> list[Path]:
    """Delete the private home folders of local sandboxes whose codeagent process is dead."""
    from codeagent.sandbox.owner import alive

    tmp = Path(tmp or tempfile.gettempdir())
    removed = []
    for home in tmp.glob(f"{HOME_PREFIX}*"):
        tag = home.name[len(HOME_PREFIX):].rsplit("-", 1)[0]
        try:
            mine = not home.is_symlink() and home.is_dir() and home.stat().st_uid == os.geteuid()
        except OSError:
            continue
        if mine and not alive(tag):
            shutil.rmtree(home, ignore_errors=True)
            removed.append(home)
    return removed
