"""How the local sandbox wraps a command: bubblewrap, or (only when asked for) unshare or nothing.

bubblewrap is the only local isolation that protects files outside the workspace. Its mount
namespace also hides the host's Unix sockets: ``/run`` (``/var/run``) and ``/tmp`` become empty
tmpfs, every other socket a host process listens on (``/proc/net/unix``) is covered by
``/dev/null``, and well-known credential files of the host user are hidden. ``unshare`` (own
network and pid namespaces, nothing else) and ``none`` are weak: they are used only with
``sandbox.allow_weak=true``, and their note starts with ``WEAK``.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from codeagent.errors import InputError
from codeagent.sandbox.env import host_program

SOCKET_DIRS = ("/run", "/var/run", "/tmp", "/dev", "/proc", "/sys")
"""Folders replaced wholesale inside bwrap (sockets there need no mask)."""

PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus")
"""Parts of the sandbox's fresh /proc made read-only (bwrap leaves /proc/sys writable)."""

SECRET_PATHS = (".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".config/gh", ".docker", ".kube",
                ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".cache/huggingface/token")
"""Paths under the host user's home hidden inside bwrap."""


@dataclass(frozen=True)
class Isolation:
    """A command prefix and what it confines."""

    kind: str  # "bwrap", "unshare" or "none"
    prefix: tuple[str, ...]
    note: str  # one line: what is and is not confined; starts with "WEAK" for unshare/none

    @property
    def weak(self) -> bool:
        """Whether files outside the workspace are unprotected."""
        return self.kind != "bwrap"


def _works(argv: list[str]) -> bool:
    try:
        r = subprocess.run([*argv, "true"], capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def host_sockets(proc_net_unix: Path = Path("/proc/net/unix")) -> list[str]:
    """Paths of the Unix sockets bound in this network namespace that exist as socket files."""
    try:
        lines = proc_net_unix.read_text(errors="replace").splitlines()[1:]
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed or abstract (abstract ones are cut off by the network namespace)
        path = fields[7]
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found.append(path)
        except OSError:
            continue
    return sorted(set(found))


def _under(path: str, folders: list[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def _masks(workspace: Path, home: Path) -> list[str]:
    """bwrap arguments hiding /run, host sockets and the host user's credential files."""
    argv: list[str] = []
    for d in ("/run", "/var/run"):
        if os.path.isdir(d) and not os.path.islink(d):
            argv += ["--tmpfs", d]
    keep = [str(workspace), str(home), *SOCKET_DIRS]
    for sock in host_sockets():
        real = os.path.realpath(sock)
        if not _under(real, keep) and not _under(sock, keep):
            argv += ["--ro-bind", "/dev/null", real]
    user_home = os.path.expanduser("~")
    if user_home not in ("/", "") and os.path.isdir(user_home):
        for rel in SECRET_PATHS:
            p = os.path.join(user_home, rel)
            if os.path.islink(p) or not os.path.exists(p) or _under(p, keep):
                continue
            argv += ["--tmpfs", p] if os.path.isdir(p) else ["--ro-bind", "/dev/null", p]
    return argv


def bwrap_prefix(workspace: Path, home: Path, network: bool) -> list[str]:
    """bwrap: / read-only (/sys and /proc/sys included), workspace and home read-write, private /tmp and /run,
    host sockets and credentials hidden, own pid/ipc/uts (and net) namespaces, no capabilities."""
    argv = [host_program("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for p in PROC_READ_ONLY:  # uid 0 may write sysctls and sysrq without any capability
        argv += ["--ro-bind-try", p, p]
    argv += _masks(workspace, home)
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
    unshare = host_program("unshare")
    forms = [(unshare, *net, *pid), (unshare, *net)] if os.geteuid() == 0 else []
    forms += [(unshare, "--map-root-user", *net, *pid), (unshare, "--map-root-user", *net)]
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


def choose(kind: str, workspace: Path, home: Path, network: bool, allow_weak: bool = False) -> Isolation:
    """The isolation asked for (``kind``: auto, bwrap, unshare, none); ``auto`` means bwrap.

    unshare and none protect no file outside the workspace: they need ``allow_weak`` (else a
    one-line :class:`InputError`); ``auto`` falls back to them only then.
    """
    if kind not in ("auto", "bwrap", "unshare", "none"):
        raise InputError(f"unknown local isolation {kind!r} (auto, bwrap, unshare or none)")
    if kind in ("auto", "bwrap"):
        if _bwrap_works():
            return Isolation(
                "bwrap", tuple(bwrap_prefix(workspace, home, network)),
                "bwrap: / and /sys read-only, workspace writable, private /tmp and /run, host sockets hidden, "
                "own pid namespace" + ("" if network else ", no network"),
            )
        missing = "bubblewrap " + ("does not run here" if shutil.which("bwrap") else "is not installed")
        if kind == "bwrap" or not allow_weak:
            raise InputError(f"local sandbox needs bubblewrap: {missing}; install it (apt-get install bubblewrap), "
                             "use --sandbox docker, or set sandbox.allow_weak=true to run unprotected")
        kind = "unshare"
    if not allow_weak:
        raise InputError(f"local isolation {kind!r} protects no file outside the workspace; "
                         "set sandbox.allow_weak=true to use it")
    if kind == "unshare":
        base = _unshare_base(network)
        if base is not None:
            prefix = list(base)
            if os.geteuid() == 0 and "--map-root-user" not in base and shutil.which("setpriv"):
                prefix += [host_program("setpriv"), "--bounding-set=-all", "--inh-caps=-all", "--"]
            return Isolation(
                "unshare", tuple(prefix),
                "WEAK unshare (sandbox.allow_weak): " + ("no network" if not network else "network allowed")
                + (", own pid namespace" if "--pid" in base else "")
                + "; files outside the workspace are NOT write-protected, host sockets reachable",
            )
        return Isolation("none", (), "WEAK no isolation (sandbox.allow_weak): unshare does not run here")
    return Isolation("none", (), "WEAK no isolation (sandbox.allow_weak): asked for none")
