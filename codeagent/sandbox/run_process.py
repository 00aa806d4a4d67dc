"""Run one command as its own process group, stream its output capped, kill it all at the deadline."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from codeagent.protocols import CommandResult
from codeagent.sandbox.output import CappedOutput

GRACE_S = 0.3  # after the main process exits, how long stragglers may keep the pipe open


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _pump(proc: subprocess.Popen, out: CappedOutput, deadline: float) -> bool:
    """Stream the command's output into ``out`` until it exits (plus a grace) or ``deadline``; True if it timed out."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    exited_at: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > GRACE_S:
                return False
            if now >= deadline:
                return exited_at is None
            if not sel.select(timeout=min(0.05, deadline - now)):
                continue
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                return False
            out.feed(chunk)


def run_capped(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    max_output_bytes: int,
    preexec_fn: Callable[[], None] | None = None,
    kill_extra: Callable[[], None] | None = None,
) -> CommandResult:
    """Run ``argv`` (stdout+stderr merged), never holding more than ``max_output_bytes`` of output.

    At ``timeout`` the whole process group gets SIGKILL (``kill_extra`` then catches processes that
    left the group); leftovers are killed the same way once the main process has exited.
    """
    start = time.monotonic()
    out = CappedOutput(max_output_bytes)
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=preexec_fn, close_fds=True,
        )
    except (OSError, subprocess.SubprocessError) as e:
        return CommandResult(exit_code=127, output=f"cannot start command: {e}", duration_s=time.monotonic() - start)
    assert proc.stdout is not None
    try:
        timed_out = _pump(proc, out, start + timeout)
    finally:  # also on KeyboardInterrupt / SIGTERM: nothing the command started may outlive it
        _kill_group(proc.pid)
        if kill_extra is not None:
            kill_extra()
        proc.stdout.close()
        code = proc.wait()
    if timed_out:
        out.feed(f"\n[killed: command ran past its {timeout:g} s timeout]\n".encode())
    return CommandResult(
        exit_code=124 if timed_out else code,
        output=out.text(),
        timed_out=timed_out,
        truncated_bytes=max(out.cut_bytes, 0),
        duration_s=time.monotonic() - start,
    )
