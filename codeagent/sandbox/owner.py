"""Who owns a sandbox resource: a tag naming this process (pid + start time + boot), and whether it lives.

Cgroups, home folders and containers carry the tag of the codeagent process that made them, so a
later start-up can tell the leftovers of a dead (``kill -9``-ed) run from those of a live one, even
after the pid was reused.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

TAG = re.compile(r"(\d+)\.(\d+)")


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


def owner_tag(pid: int | None = None) -> str:
    """``<pid>.<start time>`` of ``pid`` (this process by default)."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{_start_time(pid) or 0}"


def alive(tag: str) -> bool:
    """Whether the process named by ``tag`` still runs (same pid and same start time)."""
    m = TAG.fullmatch(tag)
    if m is None:
        return False
    pid, start = int(m.group(1)), int(m.group(2))
    return _start_time(pid) == start
