"""File tools under attack: a directory flipped to a symlink mid-call, FIFOs, huge sparse files, devices."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from codeagent.tools import ToolContext, make_tools

from .conftest import outside_dir

FLIPPER = """
import ctypes, os, sys
os.chdir(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
while True:  # 'd' is a real folder, then a symlink to the outside, swapped atomically again and again
    if libc.renameat2(AT_FDCWD, b"d", AT_FDCWD, b"other", RENAME_EXCHANGE) != 0:
        sys.exit(f"renameat2: {os.strerror(ctypes.get_errno())}")
"""


class _NoSandbox:
    name = "none"
    isolation = "none"

    def run(self, command: str, timeout: float | None = None):  # noqa: ANN201 - not used by file tools
        raise AssertionError("file tools must not run commands")

    def close(self) -> None:
        pass


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    ws = tmp_path / "ws"
    ws.mkdir()
    yield ToolContext(workspace=ws, sandbox=_NoSandbox(), max_output_chars=2000)


@pytest.fixture(params=["openat2", "walk"])
def resolver(request: pytest.FixtureRequest) -> Iterator[str]:
    """Both ways of opening beneath the workspace (the O_NOFOLLOW walk serves kernels without openat2)."""
    from codeagent.tools import beneath

    if request.param == "openat2" and not beneath.openat2_available():
        pytest.skip("this kernel has no openat2")
    beneath.use_openat2(request.param == "openat2")
    yield request.param
    beneath.use_openat2(None)


def test_flipping_a_folder_to_a_symlink_never_lets_a_tool_out(ctx: ToolContext, resolver: str) -> None:
    tools = make_tools(["view", "create", "edit", "search"])
    outside = outside_dir()
    secret = outside / "f.txt"
    secret.write_text("SECRET\n")
    (ctx.workspace / "d").mkdir()
    (ctx.workspace / "d" / "f.txt").write_text("inside\n")
    os.symlink(outside, ctx.workspace / "other")
    flipper = subprocess.Popen([sys.executable, "-c", FLIPPER, str(ctx.workspace)])
    leaks, tries, deadline = 0, 0, time.monotonic() + 6
    try:
        time.sleep(0.2)
        assert flipper.poll() is None, "the flipper could not start"
        while time.monotonic() < deadline:
            tries += 1
            tools["create"].run({"path": "d/f.txt", "content": "inside\n"}, ctx)
            tools["edit"].run({"path": "d/f.txt", "search": "\n", "replace": " edited\n"}, ctx)
            tools["create"].run({"path": "d/new.txt", "content": "planted\n"}, ctx)
            leaks += "SECRET" in tools["view"].run({"path": "d/f.txt"}, ctx).text
            leaks += ": SECRET" in tools["search"].run({"pattern": "S.CRET"}, ctx).text
    finally:
        flipper.kill()
        flipper.wait()
        content = secret.read_text()
        extra = sorted(p.name for p in outside.iterdir())
        shutil.rmtree(outside)
    assert content == "SECRET\n" and extra == ["f.txt"], (content, extra, tries)
    assert leaks == 0, f"{leaks} reads saw the outside file"
    assert tries > 50


def _in_thread(fn, timeout: float):  # noqa: ANN001, ANN202
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("value", fn()), daemon=True)
    t.start()
    t.join(timeout)
    return t.is_alive(), box.get("value")


def test_a_fifo_is_refused_at_once(ctx: ToolContext, resolver: str) -> None:
    tools = make_tools(["view", "edit", "create", "search"])
    fifo = ctx.workspace / "pytest.ini"
    os.mkfifo(fifo)
    (ctx.workspace / "a.py").write_text("needle = 1\n")
    calls = {
        "view": {"path": "pytest.ini"},
        "edit": {"path": "pytest.ini", "search": "a", "replace": "b"},
        "create": {"path": "pytest.ini", "content": "x"},
        "search": {"pattern": "needle"},
    }
    try:
        for name, args in calls.items():
            hung, obs = _in_thread(lambda: tools[name].run(args, ctx), 5.0)
            assert not hung, f"{name} hangs on a FIFO"
            if name == "search":
                assert obs.ok and "a.py:1" in obs.text
            else:
                assert not obs.ok and "FIFO" in obs.text and len(obs.text.splitlines()) == 1, obs.text
        from codeagent.tools.testrun import detect

        hung, _ = _in_thread(lambda: detect(ctx.workspace), 5.0)
        assert not hung, "test-runner detection hangs on a FIFO"
    finally:
        fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # releases any reader still blocked
        os.close(fd)
    assert fifo.exists() and not fifo.is_file()


def test_a_huge_sparse_file_costs_no_memory(ctx: ToolContext, resolver: str) -> None:
    tools = make_tools(["view", "edit", "search"])
    big = ctx.workspace / "big.log"
    with open(big, "wb") as f:
        f.truncate(3 * 1024**3)
    rss = psutil.Process().memory_info().rss
    start = time.monotonic()
    view = tools["view"].run({"path": "big.log"}, ctx)
    edit = tools["edit"].run({"path": "big.log", "search": "x", "replace": "y"}, ctx)
    search = tools["search"].run({"pattern": "x"}, ctx)
    grown = psutil.Process().memory_info().rss - rss
    assert time.monotonic() - start < 5
    assert grown < 64 * 1024**2, f"RSS grew by {grown} bytes"
    for obs in (view, edit):
        assert not obs.ok and "limit" in obs.text and len(obs.text.splitlines()) == 1, obs.text
    assert search.ok and "no matches" in search.text
    assert big.stat().st_size == 3 * 1024**3


def test_symlinks_to_devices_and_outside_files_are_refused(ctx: ToolContext, resolver: str) -> None:
    tools = make_tools(["view", "edit", "create"])
    os.symlink("/dev/zero", ctx.workspace / "zero")
    os.symlink("/etc/hostname", ctx.workspace / "host")
    for path in ("zero", "host"):
        hung, obs = _in_thread(lambda: tools["view"].run({"path": path}, ctx), 5.0)
        assert not hung and not obs.ok and "outside the workspace" in obs.text, obs.text
        obs = tools["create"].run({"path": path, "content": "x"}, ctx)
        assert not obs.ok and "outside the workspace" in obs.text, obs.text
    assert Path("/etc/hostname").read_text() != "x"


def test_a_very_deep_tree_does_not_crash_search(ctx: ToolContext) -> None:
    deep = "/".join(["a"] * 1500)
    subprocess.run(["mkdir", "-p", deep], cwd=ctx.workspace, check=True)
    (ctx.workspace / "top.py").write_text("needle = 1\n")
    try:
        obs = make_tools(["search"])["search"].run({"pattern": "needle"}, ctx)
    finally:  # rm -rf: Python's own rmtree recurses too deep for pytest's temp-folder cleanup
        subprocess.run(["rm", "-rf", "a"], cwd=ctx.workspace, check=True)
    assert obs.ok and "top.py:1" in obs.text, obs.text
