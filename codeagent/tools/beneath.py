"""Files opened beneath the workspace in one step, so no symlink, ``..`` or race can lead outside it.

Every path is resolved by the kernel relative to a descriptor of the workspace root:
``openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`` where the kernel has it (Linux 5.6+), else a
walk that opens one component at a time with ``O_NOFOLLOW`` (symlinks then refused outright).
What is opened is checked on the descriptor (``fstat``), never on the path again: FIFOs, sockets,
devices and files over the size limit are refused, reads are bounded, and writes go to a fresh
temporary file renamed over the target inside the same directory descriptor.
"""

from __future__ import annotations

import ctypes
import errno
import os
import posixpath
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_BYTES = 4 * 1024 * 1024
"""Largest file the file tools read or rewrite."""

MAX_DEPTH = 32
"""Deepest folder level :func:`walk_files` enters (a planted 1,500-level tree must not exhaust the stack)."""

SYS_OPENAT2 = 437  # the same number on every architecture with the generic syscall table
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
_OPENAT2: bool | None = None  # None: not probed yet


class PathRefused(Exception):
    """The path cannot be used safely; the message is one line for the model."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc = ctypes.CDLL(None, use_errno=True)


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int:
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = _libc.syscall(SYS_OPENAT2, dirfd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return fd


def openat2_available() -> bool:
    """Whether this kernel has openat2 (probed once)."""
    global _OPENAT2
    if _OPENAT2 is None:
        try:
            os.close(_openat2(os.open("/", os.O_PATH | os.O_DIRECTORY), ".", os.O_PATH, 0))
            _OPENAT2 = True
        except OSError:
            _OPENAT2 = False
    return _OPENAT2


def use_openat2(flag: bool | None) -> None:
    """Force (True/False) or re-probe (None) the openat2 path; tests use it to cover the fallback walk."""
    global _OPENAT2
    _OPENAT2 = flag


def relative(root: Path, raw: object) -> str:
    """``raw`` (absolute or relative) as a normalised path relative to ``root``; ``"."`` for the root itself."""
    if not isinstance(raw, str) or not raw.strip():
        raise PathRefused("path must be a non-empty string")
    text = raw.strip()
    if "\0" in text:
        raise PathRefused("path must not contain NUL bytes")
    if os.path.isabs(text):
        norm = posixpath.normpath(text)
        for base in {str(root), str(Path(root).resolve())}:
            if norm == base or norm.startswith(base.rstrip("/") + "/"):
                text = norm[len(base):].lstrip("/") or "."
                break
        else:
            raise PathRefused(f"path {raw!r} is outside the workspace; use a path relative to the repository root")
    norm = posixpath.normpath(text)
    if norm == ".." or norm.startswith("../"):
        raise PathRefused(f"path {raw!r} is outside the workspace; use a path relative to the repository root")
    return norm


def _refusal(raw: str, e: OSError) -> PathRefused | OSError:
    if e.errno in (errno.EXDEV, errno.ELOOP):
        return PathRefused(f"path {raw!r} leads outside the workspace (through a symbolic link); refused")
    return e


def _open_at(dirfd: int, rel: str, flags: int, mode: int = 0o644) -> int:
    """``rel`` opened beneath ``dirfd``: one openat2 call, or an O_NOFOLLOW walk of its components."""
    if openat2_available():
        return _openat2(dirfd, rel, flags, mode)
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts:
        return os.open(".", flags | os.O_CLOEXEC, dir_fd=dirfd)
    fd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=dirfd)
    try:
        for part in parts[:-1]:
            if part == "..":
                raise OSError(errno.EXDEV, "'..' not allowed", rel)
            try:
                nxt = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError as e:
                if e.errno == errno.ENOTDIR and _is_link(part, fd):
                    raise OSError(errno.ELOOP, "symbolic link on the way", rel) from None
                raise
            os.close(fd)
            fd = nxt
        if parts[-1] == "..":
            raise OSError(errno.EXDEV, "'..' not allowed", rel)
        if _is_link(parts[-1], fd):
            raise OSError(errno.ELOOP, "symbolic link", rel)
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    finally:
        os.close(fd)


def _is_link(name: str, dirfd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dirfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


@contextmanager
def _root_fd(root: Path) -> Iterator[int]:
    fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield fd
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _check_regular(raw: str, st: os.stat_result, limit: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise PathRefused(f"{raw} is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused(f"{raw} is {_kind(st.st_mode)}; only regular files can be read or edited")
    if st.st_size > limit:
        raise PathRefused(f"{raw} is {st.st_size} bytes, over the {limit}-byte limit of the file tools; "
                          "look at parts of it with bash (head, sed -n)")


def _read_fd(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total <= limit:
        chunk = os.read(fd, min(1 << 20, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > limit:
        raise PathRefused(f"file grew past the {limit}-byte limit while being read")
    return b"".join(chunks)


@dataclass(frozen=True)
class Entry:
    """What a path names: ``kind`` is "file" or "dir"."""

    rel: str
    kind: str


def probe(root: Path, raw: object) -> Entry | None:
    """What ``raw`` names beneath ``root`` (following symlinks that stay inside); None when it does not exist."""
    rel = relative(root, raw)
    with _root_fd(root) as rfd:
        try:
            fd = _open_at(rfd, rel, os.O_PATH)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno == errno.ENOTDIR:
                return None
            raise _refusal(str(raw), e) from None
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
    return Entry(rel, "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other")


def read_bytes(root: Path, raw: object, limit: int = MAX_FILE_BYTES) -> bytes:
    """The content of regular file ``raw`` beneath ``root``, at most ``limit`` bytes (else refused)."""
    rel = relative(root, raw)
    with _root_fd(root) as rfd:
        try:
            fd = _open_at(rfd, rel, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        except OSError as e:
            raise _refusal(str(raw), e) from None
    try:
        _check_regular(str(raw), os.fstat(fd), limit)
        return _read_fd(fd, limit)
    finally:
        os.close(fd)


def read_text_if_file(root: Path, name: str, limit: int = MAX_FILE_BYTES) -> str | None:
    """Text of regular file ``name`` beneath ``root``; None when missing, not a regular file or too big."""
    try:
        return read_bytes(root, name, limit).decode("utf-8", errors="replace")
    except (OSError, PathRefused):
        return None


def list_dir(root: Path, raw: object) -> list[tuple[str, bool]]:
    """``(name, is_dir)`` of each entry of directory ``raw`` beneath ``root`` (symlinks are not followed)."""
    rel = relative(root, raw)
    with _root_fd(root) as rfd:
        try:
            fd = _open_at(rfd, rel, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise _refusal(str(raw), e) from None
    try:
        with os.scandir(fd) as it:
            return sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
    finally:
        os.close(fd)


def _owner(rfd: int) -> tuple[int, int] | None:
    """Owner for new files: the workspace root's, when this process (root) could otherwise leave them root-owned."""
    if os.geteuid() != 0:
        return None
    st = os.fstat(rfd)
    return None if st.st_uid == 0 else (st.st_uid, st.st_gid)


def _parent_fd(rfd: int, parts: list[str], raw: str, owner: tuple[int, int] | None) -> int:
    """A descriptor of the parent directory of ``parts``, creating missing directories beneath the root."""
    fd = os.dup(rfd)
    try:
        for part in parts[:-1]:
            try:
                nxt = _open_at(fd, part, os.O_PATH | os.O_DIRECTORY)
            except FileNotFoundError:
                os.mkdir(part, 0o755, dir_fd=fd)
                if owner is not None:
                    os.chown(part, *owner, dir_fd=fd, follow_symlinks=False)
                nxt = _open_at(fd, part, os.O_PATH | os.O_DIRECTORY)
            except OSError as e:
                if e.errno == errno.ENOTDIR:
                    raise PathRefused(f"{raw}: {part} is not a directory") from None
                raise _refusal(raw, e) from None
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def write_bytes(root: Path, raw: object, data: bytes) -> bool:
    """Write ``data`` to ``raw`` beneath ``root`` atomically (temp file + rename); True when it existed before.

    Missing parent directories are made; a symlink, directory, FIFO or device at ``raw`` is refused.
    """
    rel = relative(root, raw)
    parts = rel.split("/")
    if rel == ".":
        raise PathRefused(f"{raw} is the workspace root, a directory")
    name = parts[-1]
    with _root_fd(root) as rfd:
        owner = _owner(rfd)
        pfd = _parent_fd(rfd, parts, str(raw), owner)
    try:
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            try:
                os.close(_open_at(pfd, name, os.O_PATH))
            except OSError as e:
                raise _refusal(str(raw), e) from None
            raise PathRefused(f"{raw} is a symbolic link; write to the file it points to instead")
        if st is not None:
            _check_regular(str(raw), st, max(st.st_size, len(data)))
        tmp = f".{name[:80]}.codeagent-{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=pfd)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fchmod(fd, stat.S_IMODE(st.st_mode) if st is not None else 0o644)
                keep = (st.st_uid, st.st_gid) if st is not None and os.geteuid() == 0 else owner
                if keep is not None:
                    os.fchown(fd, *keep)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=pfd, dst_dir_fd=pfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=pfd)
            except OSError:
                pass
            raise
        return st is not None
    finally:
        os.close(pfd)


def walk_files(root: Path, skip_dirs: frozenset[str]) -> Iterator[tuple[str, int]]:
    """``(relative path, dir fd)`` of every entry name in the tree, without following any symlink.

    Directories are opened by descriptor (``os.fwalk``), so a directory swapped for a symlink
    mid-walk is not entered; folders below :data:`MAX_DEPTH` are skipped. Open each name with
    :func:`read_in_dir`.
    """
    for dirpath, dirnames, filenames, dirfd in os.fwalk(str(root)):
        base = os.path.relpath(dirpath, root)
        depth = 0 if base == "." else base.count("/") + 1
        dirnames[:] = [] if depth >= MAX_DEPTH else sorted(d for d in dirnames if d not in skip_dirs)
        for name in sorted(filenames):
            yield (name if base == "." else f"{base}/{name}"), dirfd


def read_in_dir(dirfd: int, name: str, limit: int) -> bytes | None:
    """Regular file ``name`` in ``dirfd`` (never through a symlink); None when it is not one or is over ``limit``."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=dirfd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return _read_fd(fd, limit)
    except (OSError, PathRefused):
        return None
    finally:
        os.close(fd)
