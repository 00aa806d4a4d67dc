"""Commands run in a hardened docker container per sandbox.

The container: no network, memory/cpu/pids limits, all capabilities dropped, ``no-new-privileges``,
a read-only root file system with the workspace writable and a tmpfs ``/tmp``, docker's ``init``
as PID 1. Its keeper process (``sleep <lifetime>``) runs as root-without-capabilities, every
command as an unprivileged user, so after each command a ``kill -9 -1`` by that user removes all
the command left behind (daemons, fork bombs) but not the keeper. Containers carry labels naming
their owner process and an expiry; the keeper ends at the expiry and docker removes the container
(``auto_remove``), and :func:`sweep` removes those of dead owners at start-up.
"""

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
from codeagent.sandbox.owner import alive, boot_id, owner_tag
from codeagent.sandbox.registry import SANDBOXES

GUARD_S = 10.0  # client-side slack past the in-container ``timeout -s KILL``
SANDBOX_UID = 1000  # the container user when codeagent runs as root
LABEL, OWNER, EXPIRES = "codeagent", "codeagent.owner", "codeagent.expires"

REAP = r"""
me=$$
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
  kill -9 -1 2>/dev/null
  left=0
  for d in /proc/[0-9]*; do
    [ "${d#/proc/}" = "$me" ] && continue
    [ -O "$d" ] || continue
    read -r st < "$d/stat" 2>/dev/null || continue
    st=${st##*) }
    [ "${st%% *}" = Z ] && continue
    left=1; break
  done
  [ $left = 0 ] && exit 0
done
exit 1
"""
"""Run as the command user after every command: kill all of that user's processes but this shell."""


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


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return (lines[0] if lines else type(e).__name__)[:200]


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give the workspace to the container user: symlinks themselves, never their targets; iterative,
    so a planted very deep tree cannot exhaust the stack."""
    os.chown(root, uid, gid)
    stack = [str(root)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                os.chown(entry.path, uid, gid, follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
            except OSError:
                pass


def sweep(client=None, now: float | None = None) -> list[str]:  # noqa: ANN001
    """Remove codeagent containers whose owner process (on this boot) is dead or whose expiry passed."""
    import docker.errors

    own = client is None
    try:
        client = client or docker_client()
    except Exception:  # noqa: BLE001 - no daemon: nothing to sweep
        return []
    now = time.time() if now is None else now
    removed: list[str] = []
    try:
        for c in client.containers.list(all=True, filters={"label": f"{LABEL}=sandbox"}):
            labels = c.labels or {}
            boot, _, tag = labels.get(OWNER, "").partition("/")
            try:
                expired = float(labels.get(EXPIRES, "inf")) < now
            except ValueError:
                expired = False
            orphan = boot == boot_id() and bool(tag) and not alive(tag)
            if expired or orphan:
                try:
                    c.remove(force=True)
                    removed.append(c.name)
                except docker.errors.APIError:
                    pass
    except docker.errors.APIError:
        pass
    finally:
        if own:
            client.close()
    return removed


@SANDBOXES.register("docker")
class DockerSandbox:
    """One hardened container per sandbox; the workspace is bind-mounted at its own path.

    Each command is ``exec``-ed as ``timeout -s KILL <t> bash -c <cmd>`` by the unprivileged user,
    with a client-side guard should the exec outlive that; then everything the user still runs
    is killed. ``ro_paths`` are mounted read-only at their own paths (e.g. the git directory a
    worktree points into).
    """

    name = "docker"

    def __init__(self, cfg: SandboxConfig, workspace: Path, ro_paths: Sequence[Path] = ()) -> None:
        import docker.errors

        self.cfg = cfg
        self.workspace = Path(workspace).resolve()
        try:
            self.client = docker_client(timeout=30)
        except Exception as e:  # noqa: BLE001 - any failure means "no daemon"
            raise InputError(f"no docker daemon: {_first_line(e)}") from None
        try:
            self.client.images.get(cfg.image)
        except docker.errors.DockerException as e:
            self.client.close()
            if isinstance(e, docker.errors.ImageNotFound):
                raise InputError(f"docker image {cfg.image} missing: run `codeagent sandbox build`") from None
            raise InputError(f"docker cannot inspect {cfg.image}: {_first_line(e)}") from None
        volumes = {str(self.workspace): {"bind": str(self.workspace), "mode": "rw"}}
        for p in ro_paths:
            p = Path(p).resolve()
            volumes.setdefault(str(p), {"bind": str(p), "mode": "ro"})
        if os.geteuid() == 0:
            self.uid, self.gid = SANDBOX_UID, SANDBOX_UID
            _chown_tree(self.workspace, self.uid, self.gid)
        else:
            self.uid, self.gid = os.geteuid(), os.getegid()
        expires = time.time() + cfg.lifetime_s
        try:
            self.container = self.client.containers.run(
                cfg.image, ["sleep", str(int(cfg.lifetime_s))], detach=True, auto_remove=True, init=True,
                name=f"codeagent-{uuid.uuid4().hex[:12]}", user="0:0",
                network_mode="bridge" if cfg.network else "none", mem_limit=cfg.memory_bytes,
                memswap_limit=cfg.memory_bytes, nano_cpus=int(cfg.cpus * 1e9), pids_limit=cfg.pids_limit,
                cap_drop=["ALL"], security_opt=["no-new-privileges"], read_only=True,
                tmpfs={"/tmp": f"rw,nosuid,nodev,size={cfg.tmp_bytes},mode=1777"},
                volumes=volumes, working_dir=str(self.workspace),
                labels={LABEL: "sandbox", OWNER: f"{boot_id()}/{owner_tag()}", EXPIRES: f"{expires:.0f}"},
            )
        except docker.errors.DockerException as e:
            self.client.close()
            raise InputError(f"docker cannot start {cfg.image}: {_first_line(e)}") from None
        self.env = sandbox_env("/tmp", cfg.env, base={})
        self.isolation = (f"docker container {self.container.short_id} ({cfg.image}): user {self.uid}, no capabilities, "
                          "read-only root, workspace writable, tmpfs /tmp, " + ("network on" if cfg.network else "no network"))

    def _exec(self, cmd: list[str]) -> tuple[str, object]:
        api = self.client.api
        exec_id = api.exec_create(self.container.id, cmd, workdir=str(self.workspace), environment=self.env,
                                  user=f"{self.uid}:{self.gid}")["Id"]
        return exec_id, api.exec_start(exec_id, stream=True)

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` with bash in the container's workspace; never raises for a failing command."""
        timeout = float(timeout or self.cfg.timeout_s)
        start = time.monotonic()
        secs = max(1, int(round(timeout)))
        out = CappedOutput(self.cfg.max_output_bytes)
        try:
            exec_id, stream = self._exec(["timeout", "-s", "KILL", str(secs), "bash", "-c", command])
        except Exception as e:  # noqa: BLE001 - the container may be gone (expired, removed)
            return CommandResult(exit_code=127, output=f"cannot start command: {_first_line(e)}",
                                 duration_s=time.monotonic() - start)

        def pump() -> None:
            try:
                for chunk in stream:  # type: ignore[attr-defined]
                    out.feed(chunk)
            except Exception as e:  # noqa: BLE001 - a broken stream ends the output, not the run
                out.feed(f"\n[output stream broke: {e}]\n".encode())

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        reader.join(timeout + GUARD_S)
        guard_fired = reader.is_alive()
        self.kill_all()
        reader.join(5.0)
        code = self.client.api.exec_inspect(exec_id).get("ExitCode")
        duration = time.monotonic() - start
        timed_out = guard_fired or (code == 137 and duration >= secs - 0.5)
        if timed_out:
            out.feed(f"\n[killed: command ran past its {timeout:g} s timeout]\n".encode())
        return CommandResult(
            exit_code=124 if timed_out else (code if code is not None else -1),
            output=out.text(), timed_out=timed_out, truncated_bytes=max(out.cut_bytes, 0), duration_s=duration,
        )

    def kill_all(self) -> bool:
        """SIGKILL every process of the command user (the keeper and init are root's); True when none is left."""
        try:
            res = self.container.exec_run(["bash", "-c", REAP], user=f"{self.uid}:{self.gid}")
        except Exception:  # noqa: BLE001 - container may already be gone
            return False
        return res.exit_code == 0

    def close(self) -> None:
        """Remove the container (and everything still running in it)."""
        try:
            self.container.remove(force=True)
        except Exception:  # noqa: BLE001 - already gone is fine
            pass
        self.client.close()
