"""Commands run in a docker container per sandbox: no network, memory/cpu/pids limits."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from codeagent.errors import InputError
from codeagent.protocols import CommandResult
from codeagent.sandbox.config import SandboxConfig
from codeagent.sandbox.env import sandbox_env
from codeagent.sandbox.output import CappedOutput
from codeagent.sandbox.registry import SANDBOXES

GUARD_S = 10.0  # client-side slack past the in-container ``timeout -s KILL``


def docker_client(timeout: float = 3.0):  # noqa: ANN201 - docker is imported lazily
    """A client talking to the local daemon; raises when none answers within ``timeout``."""
    import docker

    client = docker.from_env(version="auto", timeout=timeout)
    client.ping()
    return client


def docker_unavailable(timeout: float = 3.0) -> str | None:
    """None when a daemon answers a ping quickly, else the reason in one line."""
    try:
        docker_client(timeout).close()
    except Exception as e:  # noqa: BLE001 - any failure means "no daemon"
        msg = str(e).strip().splitlines()
        return (msg[0] if msg else type(e).__name__)[:200]
    return None


@SANDBOXES.register("docker")
class DockerSandbox:
    """One container (``sleep infinity``) per sandbox; the workspace is bind-mounted at its own path.

    Each command is ``exec``-ed as ``timeout -s KILL <t> bash -c <cmd>`` (coreutils ``timeout``
    kills the command's whole process group), with a client-side guard that kills every process
    in the container but pid 1 should the exec outlive that. ``ro_paths`` are mounted read-only
    at their own paths (e.g. the git directory a worktree points into).
    """

    name = "docker"

    def __init__(self, cfg: SandboxConfig, workspace: Path, ro_paths: Sequence[Path] = ()) -> None:
        import docker.errors

        self.cfg = cfg
        self.workspace = Path(workspace).resolve()
        self.client = docker_client(timeout=30)
        try:
            self.client.images.get(cfg.image)
        except docker.errors.ImageNotFound:
            raise InputError(f"docker image {cfg.image} missing: run `codeagent sandbox build`") from None
        volumes = {str(self.workspace): {"bind": str(self.workspace), "mode": "rw"}}
        for p in ro_paths:
            p = Path(p).resolve()
            volumes.setdefault(str(p), {"bind": str(p), "mode": "ro"})
        user = None if os.geteuid() == 0 else f"{os.geteuid()}:{os.getegid()}"
        self.container = self.client.containers.run(
            cfg.image, ["sleep", "infinity"], detach=True, name=f"codeagent-{uuid.uuid4().hex[:12]}",
            network_mode="bridge" if cfg.network else "none", mem_limit=cfg.memory_bytes,
            memswap_limit=cfg.memory_bytes, nano_cpus=int(cfg.cpus * 1e9), pids_limit=cfg.pids_limit,
            volumes=volumes, working_dir=str(self.workspace), user=user, init=False,
            labels={"codeagent": "sandbox"},
        )
        self.env = sandbox_env("/tmp", cfg.env, base={})
        self.isolation = f"docker container {self.container.short_id} ({cfg.image}), " + (
            "network on" if cfg.network else "no network"
        )

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` with bash in the container's workspace; never raises for a failing command."""
        timeout = float(timeout or self.cfg.timeout_s)
        api = self.client.api
        start = time.monotonic()
        secs = max(1, int(round(timeout)))
        cmd = ["timeout", "-s", "KILL", str(secs), "bash", "-c", command]
        exec_id = api.exec_create(self.container.id, cmd, workdir=str(self.workspace), environment=self.env)["Id"]
        stream = api.exec_start(exec_id, stream=True)
        out = CappedOutput(self.cfg.max_output_bytes)

        def pump() -> None:
            try:
                for chunk in stream:
                    out.feed(chunk)
            except Exception as e:  # noqa: BLE001 - a broken stream ends the output, not the run
                out.feed(f"\n[output stream broke: {e}]\n".encode())

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(timeout + GUARD_S)
        guard_fired = reader.is_alive()
        if guard_fired:
            self.kill_all()
            reader.join(5.0)
        code = api.exec_inspect(exec_id).get("ExitCode")
        duration = time.monotonic() - start
        timed_out = guard_fired or (code == 137 and duration >= secs - 0.5)
        if timed_out:
            out.feed(f"\n[killed: command ran past its {timeout:g} s timeout]\n".encode())
        return CommandResult(
            exit_code=124 if timed_out else (code if code is not None else -1),
            output=out.text(), timed_out=timed_out, truncated_bytes=max(out.cut_bytes, 0), duration_s=duration,
        )

    def kill_all(self) -> None:
        """SIGKILL every process in the container except its ``sleep infinity``."""
        try:
            self.container.exec_run(["bash", "-c", "kill -9 -1"], detach=False)
        except Exception:  # noqa: BLE001 - container may already be gone
            pass

    def close(self) -> None:
        """Remove the container (and everything still running in it)."""
        try:
            self.container.remove(force=True)
        except Exception:  # noqa: BLE001 - already gone is fine
            pass
        self.client.close()
