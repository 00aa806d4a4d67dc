"""Fixtures for agent tests: a small git repository with a failing test, scripts, a quick agent setup."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from codeagent.agent.runner import prepare, solve
from codeagent.agent.scripted import ScriptedEngine

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "calc"

VIEW = "```view calc/ops.py\n```\n"
DONE = "```done\n```\n"
BAD_EDIT = ("```edit calc/ops.py\n<<<<<<< SEARCH\n    return a // b\n=======\n"
            "    return a // b + 0\n>>>>>>> REPLACE\n```\n")
FIX_AFTER_BAD = ("```edit calc/ops.py\n<<<<<<< SEARCH\n    return a // b + 0\n=======\n"
                 "    return a / b\n>>>>>>> REPLACE\n```\n")
FIX = ("```edit calc/ops.py\n<<<<<<< SEARCH\n    return a // b\n=======\n"
       "    return a / b\n>>>>>>> REPLACE\n```\n")
TESTS = "```run_tests\n```\n"
FINISH = "```finish\ndivide uses true division now\n```\n"
PLAN = "1. View calc/ops.py\n2. Fix divide in calc/ops.py\n"

GOOD_DEF = ("```python\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError('division by zero')\n"
            "    return a / b\n```\n")
WRONG_DEF = "```python\ndef divide(a, b):\n    return a // b + 0\n```\n"
BREAKING_DEF = "```python\ndef divide(a, b):\n    return a / b if b else 0.0\n```\n"  # fixes 7/2, breaks division by zero


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(dest: Path, example: Path = EXAMPLE) -> Path:
    """A git copy of an example (default examples/calc: one failing test), without its held-back tests."""
    shutil.copytree(example, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", ".codeagent-runs", "hidden"))
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    return dest


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "calc")


def write_script(path: Path, replies: list) -> Path:
    path.write_text(json.dumps(replies))
    return path


ISSUE = "Division drops the fraction: `evaluate('7 / 2')` gives 3.0; `divide` in calc/ops.py floors."


def run(repo: Path, replies: list, *sets: str, issue: str = ISSUE, prefer: dict | None = None, **kw):
    """Solve ``issue`` in ``repo`` with a scripted engine replying ``replies`` (local sandbox, settings ``sets``)."""
    settings, cfg = prepare(None, ["sandbox.kind=local", *sets], None)
    eng = ScriptedEngine(replies, budget_tokens=settings.kv.budget_tokens, prefer=prefer)
    out = solve(eng, settings, cfg, repo=repo, issue=issue, **kw)
    return out, eng


def calls(eng: ScriptedEngine, kind: str) -> list[tuple]:
    """The scripted engine's recorded calls of one kind."""
    return [c for c in eng.calls if c[0] == kind]
