"""End to end with the real embedded model: a short ``solve`` on the example ends cleanly within budget.

Kept to a few short turns so it stays within CI time; the model's quality is not under test here,
the loop, the trajectory and the cache budget are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from codeagent.agent.trajectory import load
from tests.agent.conftest import make_repo

pytestmark = [pytest.mark.model, pytest.mark.slow]

BUDGET = 768


def _model_ready() -> str | None:
    from codeagent.kvcache import models

    if models.is_ready("smollm2"):
        return None
    return "embedded model not pulled (run `codeagent models pull`; `make test` does)"


def _solve(tmp_path: Path, budget: int, settings: list[str], max_steps: int, timeout: int):
    """Run ``codeagent solve`` on a fresh copy of the example; the repo, the process and the trajectory path."""
    reason = _model_ready()
    if reason:
        pytest.skip(reason)
    repo = make_repo(tmp_path / "calc")
    args = ["solve", str(repo / "issue.md"), "--repo", str(repo), "--sandbox", "local", "--max-steps", str(max_steps),
            "--budget", str(budget), "--model", "smollm2"]
    for item in settings:
        args += ["--set", item]
    r = subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True, timeout=timeout,
                       env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    [traj_path] = list((repo / ".codeagent-runs").glob("*/trajectory.json"))
    return repo, r, traj_path


@pytest.mark.timeout(900)
def test_solve_example_with_real_model_stays_within_budget(tmp_path: Path) -> None:
    repo, r, traj_path = _solve(tmp_path, BUDGET, ["agent.max_new_tokens=40", "agent.plan_tokens=40",
                                                   "agent.summary_tokens=0", "agent.max_output_chars=800"], 3, 850)
    assert "codeagent report" in r.stdout
    traj = load(traj_path)  # valid against the schema
    assert traj.result is not None and traj.result.status in ("resolved", "finished", "stopped", "failed")
    assert traj.steps and traj.messages[0].role == "system" and traj.messages[1].kind == "issue"
    for step in traj.steps:
        assert step.kv["budget_slots"] == BUDGET
        assert step.kv["physical_slots"] <= BUDGET, f"turn {step.n}: {step.kv['physical_slots']} slots > {BUDGET}"
    assert traj.result.within_budget and traj.result.max_physical_slots <= BUDGET
    kinds = set(traj.steps[-1].kv["by_kind"])
    assert {"system", "issue"} <= kinds  # tags reached the cache
    assert json.loads(traj_path.read_text())["format"] == "codeagent-trajectory/1"
    assert not subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout.strip()


COMMIT_BUDGET = 512


@pytest.mark.timeout(600)
def test_real_run_commits_a_step_and_stays_within_budget_every_turn(tmp_path: Path) -> None:
    """Greedy decoding, one idle turn allowed per step: a stalled step is nudged, then given up and committed."""
    _, _, traj_path = _solve(tmp_path, COMMIT_BUDGET, ["agent.temperature=0", "agent.max_idle_turns=1",
                                                      "agent.max_new_tokens=40", "agent.plan_tokens=24",
                                                      "agent.summary_tokens=0", "agent.max_output_chars=600"], 5, 550)
    traj = load(traj_path)
    ended = [s for s in traj.plan if s.status in ("done", "given_up")]
    assert ended and all(s.reason for s in ended), [(s.status, s.reason) for s in traj.plan]
    assert [e.subtask for e in traj.events if e.type == "commit"] == [s.id for s in ended]
    assert any(f"commit {ended[0].id}" in step.events for step in traj.steps)
    assert traj.result is not None and traj.result.kv["commits"] == len(ended)
    assert traj.result.status != "resolved" or traj.result.tests_passed is True
    for step in traj.steps:
        assert step.kv["physical_slots"] <= COMMIT_BUDGET, f"turn {step.n}: {step.kv['physical_slots']} slots"
    assert traj.result.within_budget and traj.result.kv["compressions"] > 0
