"""A workspace (a real git repo) with a local sandbox, for tool tests."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeagent.sandbox import SandboxConfig
from codeagent.sandbox.local import LocalSandbox
from codeagent.tools import ToolContext, make_tools


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    (ws / "README.md").write_text("# demo\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    box = LocalSandbox(SandboxConfig(timeout_s=30, max_output_bytes=256 * 1024, allow_weak=True), ws)
    yield ToolContext(workspace=ws, sandbox=box, max_output_chars=2000, command_timeout=30)
    box.close()


@pytest.fixture
def tools():
    return make_tools()
