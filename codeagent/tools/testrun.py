"""Which test runner a repository uses, and the counts in that runner's summary."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from codeagent.tools.beneath import read_text_if_file

PYTEST_CONFIGS = (("pytest.ini", None), ("pyproject.toml", "[tool.pytest"), ("setup.cfg", "[tool:pytest]"),
                  ("tox.ini", "[pytest]"))


def _has_python_tests(root: Path) -> bool:
    if (root / "tests").is_dir() and any((root / "tests").rglob("*.py")):
        return True
    for pattern in ("test_*.py", "*_test.py"):
        for p in root.rglob(pattern):
            if not {".git", "node_modules", ".venv", "venv"} & set(p.relative_to(root).parts):
                return True
    return False


def detect(root: Path) -> tuple[str, str] | None:
    """``(runner, command)`` for the repository at ``root``, or None when no test set-up is found.

    Config files are read beneath ``root`` (no symlink out, no FIFO, bounded size)."""
    for name, marker in PYTEST_CONFIGS:
        text = read_text_if_file(root, name)
        if text is not None and (marker is None or marker in text):
            return "pytest", "python3 -m pytest -q"
    pkg = read_text_if_file(root, "package.json")
    if pkg is not None:
        try:
            if json.loads(pkg).get("scripts", {}).get("test"):
                return "npm", "npm test --silent"
        except (ValueError, AttributeError):
            pass
    if (root / "go.mod").is_file():
        return "go", "go test ./..."
    if (root / "Cargo.toml").is_file():
        return "cargo", "cargo test"
    if _has_python_tests(root):
        return "pytest", "python3 -m pytest -q"
    for name in ("Makefile", "makefile", "GNUmakefile"):
        text = read_text_if_file(root, name)
        if text is not None and re.search(r"^test\s*:", text, re.M):
            return "make", "make test"
    return None


def with_args(runner: str, command: str, extra: str) -> str:
    """``command`` narrowed to ``extra`` (a path or runner options) where the runner takes them."""
    if not extra:
        return command
    if runner == "npm":
        return f"{command} -- {extra}"
    if runner == "go" and not extra.startswith("-"):
        return f"go test {shlex.quote(extra if extra.startswith(('.', '/')) else './' + extra)}"
    return f"{command} {extra}"


_WORDS = {"passed": "passed", "pass": "passed", "ok": "passed", "failed": "failed", "fail": "failed",
          "failures": "failed", "error": "errors", "errors": "errors", "skipped": "skipped",
          "ignored": "skipped", "pending": "skipped", "todo": "skipped", "xfailed": "skipped", "xpassed": "passed"}


def parse_counts(output: str) -> dict[str, int]:
    """Passed/failed/errors/skipped counts from pytest, jest, node --test, cargo or go output."""
    counts: dict[str, int] = {}

    def add(word: str, n: int) -> None:
        key = _WORDS.get(word.lower())
        if key:
            counts[key] = counts.get(key, 0) + n

    lines = output.splitlines()
    for line in reversed(lines):  # pytest: the last summary line
        if re.search(r"\d+ (passed|failed|errors?|skipped)\b", line) and re.search(r" in [\d.]+s", line):
            for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed)\b", line):
                add(word, int(n))
            return counts
    for line in lines:  # cargo: one "test result" line per test binary
        if line.startswith("test result:"):
            for n, word in re.findall(r"(\d+) (passed|failed|ignored)", line):
                add(word, int(n))
    if counts:
        return counts
    for line in lines:  # jest: "Tests:  1 failed, 3 passed, 4 total"
        if line.strip().startswith("Tests:"):
            for n, word in re.findall(r"(\d+) (passed|failed|skipped|todo)", line):
                add(word, int(n))
            return counts
    for n_word in re.findall(r"^# (pass|fail|skipped|todo) (\d+)$", output, re.M):  # node --test / TAP
        add(n_word[0], int(n_word[1]))
    if counts:
        return counts
    go_ok = len(re.findall(r"^ok\s+\S+", output, re.M))
    go_fail = len(re.findall(r"^(?:FAIL|--- FAIL)\s", output, re.M))
    if go_ok or go_fail:
        counts = {"passed": go_ok, "failed": go_fail}
    return counts
