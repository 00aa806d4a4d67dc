"""How the local sandbox wraps a command: bubblewrap, unshare, or nothing (with the reason)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Isolation:
    """A command prefix and what it confines."""

    kind: str  # "bwrap", "unshare" or "none"
    prefix: tuple[str, ...]
    note: str  # one line: what is and is not confined, or why nothing is


def _works(argv: list[str]) -> bool:
    try:
        r = subprocess.run([*argv, "true"], capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def bwrap_prefix(workspace: Path, home: Path, network: bool) -> list[str]:
    """bwrap: / read-only, workspace and home read-write, private /tmp, own pid/ipc (and net) namespaces."""
    argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    argv += ["--bind", str(workspace), str(workspace), "--bind", str(home), str(home)]
    argv += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session"]
    if not network:
        argv.append("--unshare-net")
    if os.geteuid() == 0:
        argv += ["--cap-drop", "ALL"]
    return [*argv, "--chdir", str(workspace), "--"]


@functools.cache
def _unshare_base(network: bool) -> tuple[str, ...] | None:
    """The first unshare form that runs here: own pid namespace (+net), as root or via a user namespace."""
    if not shutil.which("unshare"):
        return None
    net = () if network else ("--net",)
    pid = ("--pid", "--fork", "--kill-child", "--mount-proc")
    forms = [("unshare", *net, *pid), ("unshare", *net)] if os.geteuid() == 0 else []
    forms += [("unshare", "--map-root-user", *net, *pid), ("unshare", "--map-root-user", *net)]
    for form in forms:
        if _works(list(form)):
            return form
    return None


@functools.cache
def _bwrap_works() -> bool:
    if not shutil.which("bwrap"):
        return False
    tmp = Path("/")
    return _works(bwrap_prefix(tmp, tmp, network=False))


def choose(kind: str, workspace: Path, home: Path, network: bool) -> Isolation:
    """The strongest isolation that works here (``kind="auto"``), or the one asked for."""
    reasons: list[str] = []
    if kind in ("auto", "bwrap"):
        if _bwrap_works():
            return Isolation(
                "bwrap", tuple(bwrap_prefix(workspace, home, network)),
                "bwrap: / read-only, workspace writable, private /tmp, own pid namespace"
                + ("" if network else ", no network"),
            )
        reasons.append("bwrap " + ("does not run here" if shutil.which("bwrap") else "not installed"))
        if kind == "bwrap":
            return Isolation("none", (), "no isolation: " + "; ".join(reasons))
    if kind in ("auto", "unshare"):
        base = _unshare_base(network)
        if base is not None:
            prefix = list(base)
            if os.geteuid() == 0 and "--map-root-user" not in base and shutil.which("setpriv"):
                prefix += ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--"]
            pid = "--pid" in base
            return Isolation(
                "unshare", tuple(prefix),
                "unshare: " + ("no network" if not network else "network allowed")
                + (", own pid namespace" if pid else "")
                + "; files outside the workspace are NOT write-protected",
            )
        reasons.append("unshare " + ("does not run here" if shutil.which("unshare") else "not installed"))
    return Isolation("none", (), "no isolation: " + ("; ".join(reasons) or "asked for none"))
