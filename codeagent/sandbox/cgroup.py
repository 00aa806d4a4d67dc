"""A cgroup per local sandbox: a process limit and a memory limit that bind the whole sandbox (root
included), and a kill that catches processes which left the process group or daemonised.

cgroup v1 (separate ``pids`` and ``memory`` hierarchies) and v2 (one folder with ``pids.max`` and
``memory.max``) are both handled. Folders are named ``codeagent-<owner tag>-<id>`` so that
:func:`sweep` can remove those whose codeagent process died without cleaning up.
"""

from __future__ import annotations

import os
import re
import signal
import time
import uuid
from pathlib import Path

from codeagent.sandbox.owner import alive, owner_tag

ROOT = Path("/sys/fs/cgroup")
NAME = re.compile(r"codeagent-(\d+\.\d+\.\d+)-[0-9a-f]+")


def _own_paths(proc_cgroup: Path = Path("/proc/self/cgroup")) -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    found: dict[str, str] = {}
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        _, ctrls, path = line.split(":", 2)
        for ctrl in ctrls.split(","):
            found[ctrl] = path.lstrip("/")
    return found


def _bases(root: Path = ROOT) -> dict[str, list[Path]]:
    """Where ``pids`` and ``memory`` cgroups can be made, best first: under this process's own cgroup
    (so outer limits still apply), then at the hierarchy's top; v1 or v2."""
    own = _own_paths()
    found: dict[str, list[Path]] = {}
    for ctrl in ("pids", "memory"):
        mount = root / ctrl
        if (mount / "cgroup.procs").exists():
            found[ctrl] = list(dict.fromkeys([mount / own.get(ctrl, ""), mount]))
    ctrl_file = root / "cgroup.subtree_control"
    try:
        enabled = ctrl_file.read_text().split() if ctrl_file.exists() else []
    except OSError:
        enabled = []
    for ctrl in ("pids", "memory"):
        if ctrl not in found and ctrl in enabled:
            found[ctrl] = [root]  # v2: a cgroup holding processes cannot delegate, so only the top
    return found


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _members(folder: Path) -> list[int]:
    try:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_members(folder: Path, wait_s: float) -> None:
    """SIGKILL every member (``cgroup.kill`` where v2 has it) until none is left or ``wait_s`` passes."""
    deadline = time.monotonic() + wait_s
    while True:
        pids = _members(folder)
        if not pids or time.monotonic() > deadline:
            return
        if (folder / "cgroup.kill").exists():
            _write(folder / "cgroup.kill", "1")
        for pid in pids:
            try:
                os.kill(pid, signal.SIGSTOP)  # stopped processes cannot fork while the rest are killed
            except ProcessLookupError:
                pass
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.02)


def _remove(folder: Path) -> None:
    _kill_members(folder, 2.0)
    for _ in range(50):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


class SandboxCgroup:
    """The cgroup folders of one sandbox; :meth:`create` returns None where no cgroup can be made."""

    def __init__(self, folders: dict[str, Path]) -> None:
        self.folders = folders  # controller -> folder (the same folder twice on v2)

    @property
    def limits_memory(self) -> bool:
        """Whether a memory limit binds the sandbox as a whole."""
        return "memory" in self.folders

    @property
    def limits_pids(self) -> bool:
        """Whether a process limit binds the sandbox (root included)."""
        return "pids" in self.folders

    @classmethod
    def create(cls, pids_max: int, memory_max: int | None, root: Path = ROOT) -> SandboxCgroup | None:
        """Make ``codeagent-<owner>-<id>`` under each available controller and set its limits."""
        name = f"codeagent-{owner_tag()}-{uuid.uuid4().hex[:8]}"
        folders: dict[str, Path] = {}
        for ctrl, bases in _bases(root).items():
            for base in bases:
                folder = base / name
                shared = folder in folders.values()  # v2: one folder serves both controllers
                if not shared:
                    try:
                        folder.mkdir()
                    except OSError:
                        continue
                ok = _write(folder / "pids.max", str(pids_max)) if ctrl == "pids" else (
                    memory_max is not None and cls._set_memory(folder, memory_max, base == root))
                if ok:
                    folders[ctrl] = folder
                    break
                if not shared:
                    _remove(folder)
        return cls(folders) if folders else None

    @staticmethod
    def _set_memory(folder: Path, limit: int, v2: bool) -> bool:
        if v2:
            ok = _write(folder / "memory.max", str(limit))
            _write(folder / "memory.swap.max", "0")
            return ok
        ok = _write(folder / "memory.limit_in_bytes", str(limit))
        if ok and (folder / "memory.memsw.limit_in_bytes").exists():
            _write(folder / "memory.memsw.limit_in_bytes", str(limit))
        return ok

    def join_self(self) -> None:
        """Move the calling process in (used from ``preexec_fn``, before exec)."""
        pid = str(os.getpid()).encode()
        for folder in dict.fromkeys(self.folders.values()):
            fd = os.open(folder / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def pids(self) -> list[int]:
        """Processes now in the sandbox."""
        return sorted({p for f in dict.fromkeys(self.folders.values()) for p in _members(f)})

    def kill_all(self, wait_s: float = 2.0) -> None:
        """SIGKILL every member until none is left (or ``wait_s`` passes)."""
        for folder in dict.fromkeys(self.folders.values()):
            _kill_members(folder, wait_s)

    def oom_kills(self) -> int:
        """How often the kernel's OOM killer fired in the memory cgroup (v2 ``memory.events``, v1 ``oom_control``)."""
        folder = self.folders.get("memory")
        if folder is None:
            return 0
        for name in ("memory.events", "memory.oom_control"):
            try:
                for line in (folder / name).read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
            except (OSError, ValueError):
                continue
        return 0

    def remove(self) -> None:
        """Kill what is left and delete the folders."""
        for folder in dict.fromkeys(self.folders.values()):
            _remove(folder)
        self.folders = {}


def sweep(root: Path = ROOT) -> list[Path]:
    """Kill the members of and delete every codeagent cgroup whose owner process is dead; returns them."""
    removed: list[Path] = []
    for base in dict.fromkeys(b for bases in _bases(root).values() for b in bases):
        try:
            children = list(base.iterdir())
        except OSError:
            continue
        for folder in children:
            m = NAME.fullmatch(folder.name)
            if m is None or alive(m.group(1)):
                continue
            _remove(folder)
            removed.append(folder)
    return removed
