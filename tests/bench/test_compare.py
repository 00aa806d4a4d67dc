"""Paired bootstrap comparisons: intervals, the lead over the best press, the style gap against own."""

from __future__ import annotations

import json

import pytest

from codeagent.bench.compare import (
    MIN_TASKS,
    compare_markdown,
    interval,
    lead,
    press_leads,
    retention,
    style_gaps,
)
from codeagent.bench.metrics import Row
from codeagent.bench.report import summarise, write_reports


def row(task: str, method: str, budget: float, top1: float, style: str | None = None,
        family: str = "next_line") -> Row:
    tid = task if style in (None, "own") else f"{task}-{style}"
    return Row(task_id=tid, family=family, method=method, budget=budget, style=style, top1=top1,
               n_context_tokens=1000, kv_slots=int(1000 * budget))


def grid(n: int, scores: dict[str, list[float]], style: str | None = None, budget: float = 0.25) -> list[Row]:
    """Rows of ``n`` tasks: the full cache at 0.8 and each method's top-1 from ``scores`` (cycled)."""
    rows = [row(f"t{i}", "full", 1.0, 0.8, style) for i in range(n)]
    for method, vals in scores.items():
        rows += [row(f"t{i}", method, budget, vals[i % len(vals)], style) for i in range(n)]
    return rows


def test_interval_is_seeded_holds_the_estimate_and_narrows_with_more_tasks():
    few = [(0.5, 0.8), (0.8, 0.8), (0.3, 0.8), (0.7, 0.8), (0.6, 0.8)]
    many = few * 10
    a, b = interval(few, retention), interval(few, retention)
    assert a == b  # seeded: a report is reproducible
    assert a[0] <= retention(few) <= a[1]
    wide, narrow = a[1] - a[0], interval(many, retention)[1] - interval(many, retention)[0]
    assert narrow < wide / 2
    assert interval(few[:1], retention) is None
    assert interval([(0.5, 0.0), (0.4, 0.0)], retention) is None  # full cache never right: undefined


def test_lead_over_the_best_press_per_style_and_pooled():
    n = MIN_TASKS + 2
    rows = grid(n, {"default": [0.8], "kvpress:a": [0.4], "kvpress:b": [0.6, 0.4]}, style="own")
    rows += grid(n, {"default": [0.6, 0.8], "kvpress:a": [0.8, 0.6], "kvpress:b": [0.4]}, style="raw")
    leads = {(c["style"], c["method"]): c for c in press_leads(rows)}
    assert set(leads) == {("all", "default"), ("own", "default"), ("raw", "default")}
    own = leads[("own", "default")]
    assert own["press"] == "kvpress:b" and own["press_ret_top1"] == pytest.approx(0.625)
    assert own["lead"] == pytest.approx(1.0 - 0.625) and own["verdict"] == "ahead" and own["n"] == n
    raw = leads[("raw", "default")]  # the two alternate, task by task: the same mean, a tie
    assert raw["press"] == "kvpress:a" and raw["lead"] == pytest.approx(0.0) and raw["verdict"] == "within noise"
    assert leads[("all", "default")]["n"] == 2 * n


def test_lead_is_behind_when_the_press_wins_on_every_task_and_too_few_tasks_get_no_verdict():
    behind = press_leads(grid(MIN_TASKS, {"default": [0.4, 0.5], "kvpress:a": [0.8]}))
    assert [c["verdict"] for c in behind] == ["behind"] and behind[0]["lead_ci"][1] < 0
    few = press_leads(grid(MIN_TASKS - 1, {"default": [0.4, 0.5], "kvpress:a": [0.8]}))
    assert [c["verdict"] for c in few] == ["too few tasks"] and few[0]["lead_ci"] is not None
    assert press_leads(grid(MIN_TASKS, {"default": [0.8]})) == []  # no press, nothing to compare


def test_style_gap_pairs_each_task_with_its_own_rendering():
    n = MIN_TASKS
    rows = grid(n, {"default": [0.8]}, style="own") + grid(n, {"default": [0.4, 0.6]}, style="json")
    rows += grid(n, {"default": [0.8, 0.76]}, style="raw")
    rows += [row("x9", "full", 1.0, 0.8, "raw"), row("x9", "default", 0.25, 0.0, "raw")]  # no own twin: left out
    gaps = {g["style"]: g for g in style_gaps(rows)}
    assert gaps["json"]["gap"] == pytest.approx(-0.375) and gaps["json"]["verdict"] == "behind"
    assert gaps["raw"]["n"] == n and gaps["raw"]["gap"] == pytest.approx(-0.025)
    assert gaps["raw"]["verdict"] == "within"  # the whole interval above -0.05
    assert style_gaps(grid(n, {"default": [0.8]}, style="raw")) == []  # no own rendering


def test_reports_carry_the_intervals_and_the_comparisons(tmp_path):
    n = MIN_TASKS
    rows = grid(n, {"default": [0.8, 0.6], "kvpress:a": [0.4]}, style="own")
    rows += grid(n, {"default": [0.6], "kvpress:a": [0.4]}, style="raw")
    files = write_reports(rows, tmp_path / "out", ["codeagent bench run"])
    md = files["summary_md"].read_text()
    assert md.index("## By style") < md.index("## Against the best press") < md.index("## Style gap against own")
    assert "| next_line | 0.25 | all | default | 16 | 0.812 | a | 0.500 | +0.312 |" in md
    data = json.loads(files["compare_json"].read_text())
    assert {c["style"] for c in data["press_leads"]} == {"all", "own", "raw"}
    assert [(g["method"], g["style"]) for g in data["style_gaps"]] == [("default", "raw"), ("kvpress:a", "raw")]
    [cell] = [s for s in summarise(rows) if s["method"] == "default" and s["family"] == "next_line"]
    lo, hi = cell["ret_top1_ci"]
    assert lo < cell["ret_top1"] < hi
    assert compare_markdown([], []) == []
    assert lead([(0.5, 0.5, 0.0)]) is None
