"""A solve's trajectory as other tools read it: named ``<run id>.traj.json``, readable by others (not 0600),
with mini-swe-agent's fields; opened with mini-swe-agent's own inspector when that is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.conftest import GOOD_DEF, make_repo, write_script


@pytest.fixture(scope="module")
def solved(tmp_path_factory) -> Path:
    """The trajectory of a resolved solve (scripted engine), run under umask 022."""
    tmp = tmp_path_factory.mktemp("traj")
    repo = make_repo(tmp / "calc")
    script = write_script(tmp / "s.json", [GOOD_DEF])
    r = subprocess.run([sys.executable, "-m", "codeagent.cli", "solve", str(repo / "issue.md"), "--repo", str(repo),
                        "--engine", f"scripted:{script}", "--sandbox", "local"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "120"}, timeout=240, preexec_fn=lambda: os.umask(0o022))
    assert r.returncode == 0, r.stderr
    [traj] = list((repo / ".codeagent-runs").glob("*/*.traj.json"))
    return traj


def test_named_by_run_and_readable_by_others(solved: Path) -> None:
    assert solved.name == f"{solved.parent.name}.traj.json"
    assert solved.stat().st_mode & 0o777 == 0o644


def test_carries_mini_swe_agent_fields(solved: Path) -> None:
    data = json.loads(solved.read_text())
    assert data["trajectory_format"] == "mini-swe-agent-1.1"
    info = data["info"]
    assert info["exit_status"] == "resolved" and info["submission"] == data["patch"]
    assert info["submission"].startswith("diff --git") and "+    return a / b" in info["submission"]
    assert info["model_stats"]["api_calls"] == data["state"]["turns"] >= 1
    assert info["model_stats"]["instance_cost"] == 0.0
    assert all({"role", "content"} <= set(m) for m in data["messages"])


def test_mini_swe_agent_inspector_reads_it(solved: Path) -> None:
    inspector = pytest.importorskip("minisweagent.run.utilities.inspector",
                                    reason="mini-swe-agent is not installed (pip install mini-swe-agent)")
    app = inspector.TrajectoryInspector([solved])
    assert app.n_trajectories == 1 and app.n_steps >= 2
    assert any("divide" in str(m.get("content")) for m in app.messages)
