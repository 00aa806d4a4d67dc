"""Who owns a sandbox resource: a tag naming this process (pid namespace, pid, start time), and whether it lives.

Cgroups, home folders and containers carry the tag of the codeagent process that made them, so a
later start-up can tell the leftovers of a dead (``kill -9``-ed) run from those of a live one, even
after the pid was reused. A tag from another pid namespace (another container sharing the docker
daemon or the cgroup tree) cannot be judged from here and counts as alive.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

TAG = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (``/proc/<pid>/stat`` field 22), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


@functools.cache
def boot_id() -> str:
    """This boot's id (containers made before a reboot have no live owner)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


@functools.cache
def pid_namespace() -> int:
    """The inode of this process's pid namespace (0 when unknown)."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def owner_tag(pid: int | None = None) -> str:
    """``<pid namespace>.<pid>.<start time>`` of ``pid`` (this process by default)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid_namespace()}.{pid}.{_start_time(pid) or 0}"


def alive(tag: str) -> bool:
    """Whether the process named by ``tag`` may still run: same pid and start time here, or another namespace."""
    m = TAG.fullmatch(tag)
    if m is None:
        return True  # not ours to judge
    ns, pid, start = (int(g) for g in m.groups())
    if ns != pid_namespace():
        return True
    return _start_time(pid) == start
