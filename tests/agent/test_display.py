"""What people see while a run goes and after: a clock that ticks between events, tokens and tok/s,
step k of n, a tool error said once, and a report that folds long paths instead of cutting them."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from codeagent.agent.display import LiveDisplay, obs_line
from codeagent.kvcache.tags import SpanInfo
from codeagent.protocols import Observation
from tests.agent.conftest import GOOD_DEF, make_repo, write_script


def test_clock_ticks_between_events() -> None:
    out = io.StringIO()
    con = Console(file=out, force_terminal=True, width=80, color_system=None)
    with LiveDisplay(con, live=True, title="t") as ui:
        ui.phase("repair", 0, 0, "4 candidate(s)")
        time.sleep(2.3)  # no event at all: only the refresh thread draws
    clocks = set(re.findall(r"(\d+)s · ", out.getvalue()))
    assert {"0", "1", "2"} <= clocks, clocks
    assert "step 3 of 5: repair · 4 candidate(s)" in out.getvalue()


def test_tokens_and_rate_of_the_reply() -> None:
    ui = LiveDisplay(Console(file=io.StringIO()), live=False)
    ui.generating("candidate 2")
    for _ in range(10):
        ui.token("x")
    ui.gen_t0, ui.gen_last = 100.0, 104.0  # ten tokens in four seconds
    ui.t0 = 1000.0  # a round start: monotonic() + 65 - monotonic() can come out as 64.99999 and read 1m04s
    line = ui.status_line(now=ui.t0 + 65)
    assert line == "1m05s · candidate 2: 10 tokens, 2.5 tok/s · 10 tokens in all"


def test_tool_error_is_said_once() -> None:
    obs = Observation(text="error: error: no such file: calc/x.py\nmore", info=SpanInfo(), ok=False)
    assert obs_line(obs) == "error: no such file: calc/x.py"
    assert obs_line(Observation(text="3 passed", info=SpanInfo())) == "ok: 3 passed"


def test_report_folds_long_paths_at_60_columns(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-folder-name-" * 3) / "calc"
    repo = make_repo(deep)
    script = write_script(tmp_path / "s.json", [GOOD_DEF])
    r = subprocess.run([sys.executable, "-m", "codeagent.cli", "solve", str(repo / "issue.md"), "--repo", str(repo),
                        "--engine", f"scripted:{script}", "--sandbox", "local"], capture_output=True, text=True,
                       env={**os.environ, "COLUMNS": "60"}, timeout=240)
    assert r.returncode == 0, r.stderr
    [traj] = list((repo / ".codeagent-runs").glob("*/*.traj.json"))
    flat = re.sub(r"[\s│]", "", r.stdout)
    assert "…" not in r.stdout and f"trajectory{traj}" in flat
