"""Every example task is sound: the issue shows in the tests (visible, or only hidden for the reproduction task),
the held-back tests fail before the reference fix (hidden/fix.patch) and everything passes after it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from codeagent.agent.testreport import run_tests
from codeagent.bench.agent_bench import fresh_copy, hidden_verdict, load_agent_tasks
from codeagent.sandbox import SandboxConfig, open_sandbox

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TASKS = load_agent_tasks(EXAMPLES)
NO_VISIBLE_FAILURE = {"leapyear"}  # the agent must write the reproduction


def test_at_least_ten_examples_of_several_languages() -> None:
    assert len(TASKS) >= 10
    assert any((t.root / "package.json").is_file() for t in TASKS)


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_example_fails_before_and_passes_after_the_reference_fix(task, tmp_path: Path) -> None:
    if (task.root / "package.json").is_file() and shutil.which("node") is None:
        pytest.skip("node is not installed")
    before = fresh_copy(task, tmp_path / "before")
    assert not (before / "hidden").exists()
    box = open_sandbox(SandboxConfig(kind="local"), before)
    try:
        visible = run_tests(box, before)
        assert bool(visible.failing) == (task.id not in NO_VISIBLE_FAILURE), visible.summary()
        ok, summary = hidden_verdict(task, before, box)
        assert not ok, summary
    finally:
        box.close()
    after = fresh_copy(task, tmp_path / "after")
    subprocess.run(["git", "apply", str(task.root / "hidden" / "fix.patch")], cwd=after, check=True)
    box = open_sandbox(SandboxConfig(kind="local"), after)
    try:
        ok, summary = hidden_verdict(task, after, box)
        assert ok, summary
    finally:
        box.close()


def test_a_wrong_test_the_agent_added_does_not_decide(tmp_path: Path) -> None:
    """SWE-bench's rule: the task's own tests (visible and held back) decide; a reproduction the agent wrote that
    asserts the wrong thing is reported beside them."""
    task = next(t for t in TASKS if t.id == "calc")
    after = fresh_copy(task, tmp_path / "after")
    subprocess.run(["git", "apply", str(task.root / "hidden" / "fix.patch")], cwd=after, check=True)
    (after / "tests" / "test_issue_reproduction.py").write_text("def test_wrong():\n    assert 1 == 2\n")
    box = open_sandbox(SandboxConfig(kind="local"), after)
    try:
        ok, summary = hidden_verdict(task, after, box)
        assert ok and "the agent's own tests 0/1 passed" in summary, summary
        (after / "calc" / "ops.py").write_text((after / "calc" / "ops.py").read_text().replace("a / b", "a // b"))
        ok, summary = hidden_verdict(task, after, box)
        assert not ok, summary
    finally:
        box.close()
