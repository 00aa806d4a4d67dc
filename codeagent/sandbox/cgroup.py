"""A pids cgroup per sandbox: the process limit that binds root, and a kill that catches escapees."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

V1 = Path("/sys/fs/cgroup/pids")
V2 = Path("/sys/fs/cgroup")


class PidsCgroup:
    """A child cgroup with ``pids.max`` set; ``create`` returns None where none can be made."""

    def __init__(self, path: Path, v2: bool) -> None:
        self.path = path
        self.v2 = v2

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
        """Make ``codeagent-<id>`` under the v1 pids hierarchy or the v2 root (when pids is delegated)."""
        name = f"codeagent-{uuid.uuid4().hex[:12]}"
        candidates: list[tuple[Path, bool]] = []
        if (V1 / "cgroup.procs").exists():
            candidates.append((V1, False))
        ctrl = V2 / "cgroup.subtree_control"
        try:
            if ctrl.exists() and "pids" in ctrl.read_text().split():
                candidates.append((V2, True))
        except OSError:
            pass
        for base, v2 in candidates:
            path = base / name
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(limit))
                return cls(path, v2)
            except OSError:
                path.rmdir()
        return None

    def join_self(self) -> None:
        """Move the calling process in (used from ``preexec_fn``, before exec)."""
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, str(os.getpid()).encode())
        finally:
            os.close(fd)

    def pids(self) -> list[int]:
        """Processes now in the cgroup."""
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self, wait_s: float = 2.0) -> None:
        """SIGKILL every member until none is left (or ``wait_s`` passes)."""
        kill_file = self.path / "cgroup.kill"
        deadline = time.monotonic() + wait_s
        while True:
            pids = self.pids()
            if not pids or time.monotonic() > deadline:
                return
            if self.v2 and kill_file.exists():
                try:
                    kill_file.write_text("1")
                except OSError:
                    pass
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup."""
        self.kill_all()
        try:
            self.path.rmdir()
        except OSError:
            pass
