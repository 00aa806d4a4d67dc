"""Commands run on this machine, isolated as far as it allows and always resource-limited."""

from __future__ import annotations

import math
import os
import resource
import shutil
import tempfile
from pathlib import Path

from codeagent.protocols import CommandResult
from codeagent.sandbox.cgroup import PidsCgroup
from codeagent.sandbox.config import SandboxConfig
from codeagent.sandbox.env import sandbox_env
from codeagent.sandbox.isolation import choose
from codeagent.sandbox.registry import SANDBOXES
from codeagent.sandbox.run_process import run_capped


@SANDBOXES.register("local")
class LocalSandbox:
    """``bash -c`` in the workspace, wrapped by bubblewrap or unshare, under rlimits and a timeout.

    Isolation, strongest that works: bubblewrap (/ read-only, workspace and a private home
    writable, private /tmp, own pid namespace, no network, no capabilities as root); else unshare
    (no network, own pid namespace; files outside the workspace are *not* protected); else none,
    the reason kept in ``isolation``. Limits: RLIMIT_AS (memory), RLIMIT_CPU, RLIMIT_FSIZE and
    RLIMIT_NPROC, hard and soft alike, so a command cannot raise them.

    The process limit: RLIMIT_NPROC never binds uid 0, and a user namespace does not help (its
    root is still kuid 0 outside). Switching to an unprivileged uid would bind it, but then the
    command cannot reach a root-only toolchain (here Python lives under /root, mode 0700) nor
    write a root-owned workspace. So as root each sandbox gets its own pids cgroup (``pids.max``),
    which binds root, is counted per sandbox rather than per uid, and lets every member be killed
    even if it left the process group. Where no cgroup can be made (and the caller is root) the
    process limit is missing, and ``limits`` says so.
    """

    name = "local"

    def __init__(self, cfg: SandboxConfig, workspace: Path, isolation: str = "auto") -> None:
        self.cfg = cfg
        self.workspace = Path(workspace).resolve()
        self._home = Path(tempfile.mkdtemp(prefix="codeagent-home-"))
        self._iso = choose(isolation, self.workspace, self._home, cfg.network)
        self.isolation = self._iso.note
        self._cgroup = PidsCgroup.create(cfg.pids_limit) if os.geteuid() == 0 else None
        if os.geteuid() != 0:
            procs = f"RLIMIT_NPROC {cfg.pids_limit}"
        elif self._cgroup is not None:
            procs = f"pids cgroup max {cfg.pids_limit}"
        else:
            procs = "processes NOT limited (root, no pids cgroup available)"
        self.limits = f"memory {cfg.memory_bytes} B, {procs}, file size {cfg.max_file_bytes} B"
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

        def preexec() -> None:
            if cgroup is not None:
                cgroup.join_self()
            for what, value in limits:
                resource.setrlimit(what, (value, value))

        return preexec

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` with bash inside the workspace; the result carries exit code and output."""
        timeout = float(timeout or self.cfg.timeout_s)
        argv = [*self._iso.prefix, "bash", "-c", command]
        return run_capped(
            argv, cwd=self.workspace, env=self.env, timeout=timeout,
            max_output_bytes=self.cfg.max_output_bytes, preexec_fn=self._preexec(timeout),
            kill_extra=self._cgroup.kill_all if self._cgroup else None,
        )

    def close(self) -> None:
        """Kill anything left and remove the private home and the cgroup."""
        if self._cgroup is not None:
            self._cgroup.remove()
            self._cgroup = None
        shutil.rmtree(self._home, ignore_errors=True)
