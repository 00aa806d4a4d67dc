"""Helpers for the attack tests: the CLI as a subprocess, scripted actions, backend checks that skip."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.agent.conftest import EXAMPLE, make_repo  # noqa: F401 - re-exported for the tests

FIX = ("```python\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError('division by zero')\n"
       "    return a / b\n```\n")
PLAN = "1. Fix divide in calc/ops.py\n"  # prose where a definition belongs: a candidate that does not apply
FINISH = "```finish\ndivide uses true division now\n```\n"
ENV = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1"}


def bash(command: str, fix: bool = False) -> str:
    """A scripted candidate whose ``divide`` runs ``command`` in the sandbox when the tests call it (the way
    model-written code runs there); with ``fix`` it also fixes the bug."""
    return (f"```python\ndef divide(a, b):\n    import subprocess\n    subprocess.run({command!r}, shell=True)\n"
            "    if b == 0:\n        raise ZeroDivisionError('division by zero')\n"
            f"    return a {'/' if fix else '//'} b\n```\n")


def script(path: Path, replies: list[str]) -> str:
    """Write the scripted engine's replies; the ``--engine`` value."""
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def codeagent(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """The real entry point in a subprocess."""
    return subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def plain_folder(dest: Path) -> Path:
    """examples/calc copied without git."""
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".codeagent-runs"))
    return dest


def outside_dir() -> Path:
    """A fresh folder outside /tmp (which bwrap replaces), removed by the caller."""
    d = Path("/var/tmp") / f"codeagent-sec-{uuid.uuid4().hex[:8]}"
    d.mkdir(parents=True)
    return d


def need_bwrap() -> None:
    """Skip unless bubblewrap runs here."""
    from codeagent.sandbox.isolation import _bwrap_works

    if not _bwrap_works():
        pytest.skip("bubblewrap not installed or not working here (.ci/docker.sh installs it)")


def need_docker() -> None:
    """Skip unless a docker daemon answers and the sandbox image exists."""
    from codeagent.sandbox import SandboxConfig
    from tests.sandbox.conftest import docker_skip_reason

    reason = docker_skip_reason(SandboxConfig().image)
    if reason:
        pytest.skip(reason)


def need_root_cgroups() -> None:
    """Skip unless this process can make a memory cgroup (root, cgroup v1 or delegated v2)."""
    from codeagent.sandbox.cgroup import SandboxCgroup

    if os.geteuid() != 0:
        pytest.skip("not root: no per-sandbox cgroup")
    cg = SandboxCgroup.create(64, 1 << 30)
    if cg is None or not cg.limits_memory:
        if cg is not None:
            cg.remove()
        pytest.skip("no memory cgroup can be made here")
    cg.remove()
