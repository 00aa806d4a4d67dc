"""Paired comparisons with bootstrap intervals: is a retention, a lead over a press or a style's gap more than noise?

Top-1 retention is a ratio of sums over tasks (a method's top-1 over the full cache's on the same tasks), and the
bench's cells hold few tasks whose targets are a dozen tokens, so one token moves a cell by 0.05-0.10. Each interval
here resamples the *tasks* with replacement, keeping a task's numbers together (its method, press and full-cache
top-1, or its rendering in a style and in the own style), and reads the 2.5th and 97.5th percentiles of the
statistic. The generator is seeded, so a report is reproducible.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Callable, Sequence

from codeagent.bench.metrics import Row, full_rows, retention as ratio

RESAMPLES = 2000
"""Bootstrap resamples per interval."""
LEVEL = 0.95
"""Coverage of the intervals."""
STYLE_GAP = 0.05
"""The largest gap below the own style that issue 10's target allows."""
MIN_TASKS = 8
"""Fewer tasks than this get no verdict: a bootstrap over a handful of tasks reads narrower than the truth."""
PRESS = "kvpress:"
"""Prefix of the kvpress presses' method names."""

Sample = Sequence[tuple[float, ...]]


def interval(tasks: Sample, stat: Callable[[Sample], float | None], resamples: int = RESAMPLES,
             seed: int = 0) -> tuple[float, float] | None:
    """The ``LEVEL`` percentile interval of ``stat`` over ``tasks`` resampled with replacement; None for fewer than
    two tasks or when ``stat`` is undefined (None) on more than half the resamples."""
    if len(tasks) < 2:
        return None
    rng = random.Random(seed)
    values = sorted(v for v in (stat(rng.choices(tasks, k=len(tasks))) for _ in range(resamples)) if v is not None)
    if len(values) * 2 < resamples:
        return None
    tail = (1.0 - LEVEL) / 2
    return values[int(tail * len(values))], values[min(len(values) - 1, int((1.0 - tail) * len(values)))]


def retention(tasks: Sample) -> float | None:
    """``(method, full)`` per task: sum of the method's over sum of the full cache's (``metrics.retention``)."""
    return ratio(sum(t[0] for t in tasks), sum(t[1] for t in tasks))


def lead(tasks: Sample) -> float | None:
    """``(ours, theirs, full)`` per task: our retention minus theirs on the same tasks."""
    full = sum(t[2] for t in tasks)
    return None if full <= 0 else (sum(t[0] for t in tasks) - sum(t[1] for t in tasks)) / full


def gap(tasks: Sample) -> float | None:
    """``(method, full)`` in a style then in the own style, per task: the style's retention minus the own style's."""
    full_s, full_o = sum(t[1] for t in tasks), sum(t[3] for t in tasks)
    if full_s <= 0 or full_o <= 0:
        return None
    return sum(t[0] for t in tasks) / full_s - sum(t[2] for t in tasks) / full_o


def _top1(rows: Sequence[Row]) -> dict[tuple[str, str, float], dict[str, float]]:
    """Top-1 per (family, method, budget) and task, rows with an error or no top-1 left out."""
    out: dict[tuple[str, str, float], dict[str, float]] = defaultdict(dict)
    for r in rows:
        if not r.error and r.top1 is not None:
            out[(r.family, r.method, float(r.budget))][r.task_id] = float(r.top1)
    return out


def _full(rows: Sequence[Row]) -> dict[str, float]:
    """The full cache's top-1 per task (``metrics.full_rows``)."""
    return {t: float(r.top1) for t, r in full_rows(rows).items() if r.top1 is not None}


def _style(row: Row) -> str:
    return row.style or "own"


def _ordered(cells: list[dict[str, Any]], rows: Sequence[Row]) -> list[dict[str, Any]]:
    """``cells`` by family (as the rows first name them), budget (largest first), style (``all`` first), method."""
    families = {f: i for i, f in enumerate(dict.fromkeys(r.family for r in rows))}
    return sorted(cells, key=lambda c: (families[c["family"]], -c["budget"], c["style"] != "all", c["style"],
                                        c["method"]))


def _verdict(ci: tuple[float, float] | None, n: int, floor: float, above: str) -> str:
    """``above`` when the interval lies wholly above ``floor``, ``behind`` when wholly below, else ``within noise``."""
    if ci is None or n < MIN_TASKS:
        return "too few tasks"
    return above if ci[0] > floor else "behind" if ci[1] < floor else "within noise"


def press_leads(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per family, budget and style (``all`` pooled over the styles): each of our methods' top-1 retention minus
    the best kvpress press's on the same tasks, with its interval and a verdict (``ahead`` / ``behind`` when the
    interval excludes 0, else ``within noise``; ``too few tasks`` under ``MIN_TASKS``). Empty when the rows hold no
    press."""
    full = _full(rows)
    styles = {r.task_id: _style(r) for r in rows}
    cells = _top1(rows)
    out: list[dict[str, Any]] = []
    for (family, method, budget), ours in cells.items():
        if method == "full" or method.startswith(PRESS):
            continue
        presses = {m: v for (f, m, b), v in cells.items() if f == family and b == budget and m.startswith(PRESS)}
        for style in ["all", *sorted({styles[t] for t in ours})] if len(set(styles.values())) > 1 else ["all"]:
            mine = {t: v for t, v in ours.items() if t in full and style in ("all", styles[t])}
            samples = {m: [(mine[t], v[t], full[t]) for t in mine if t in v] for m, v in presses.items()}
            scored = [(r, m) for m, sample in samples.items() if (r := retention([t[1:] for t in sample])) is not None]
            if not scored:
                continue
            best_ret, best = max(scored)
            sample = samples[best]
            ci = interval(sample, lead)
            out.append({"family": family, "budget": budget, "style": style, "method": method, "n": len(sample),
                        "ret_top1": retention([(o, f) for o, _, f in sample]), "press": best,
                        "press_ret_top1": best_ret, "lead": lead(sample), "lead_ci": ci,
                        "verdict": _verdict(ci, len(sample), 0.0, "ahead")})
    return _ordered(out, rows)


def style_gaps(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Per family, method, budget and style other than ``own``: the style's top-1 retention minus the own
    rendering's on the tasks rendered in both (a task id is the own id plus ``-STYLE``), with its interval and a
    verdict against issue 10's ``-STYLE_GAP`` (``behind`` when the whole interval is below it, ``within`` when it
    is all above, ``too few tasks`` under ``MIN_TASKS``). Empty without an own rendering and another style."""
    full = _full(rows)
    styles = {r.task_id: _style(r) for r in rows}
    if "own" not in styles.values() or len(set(styles.values())) < 2:
        return []
    out: list[dict[str, Any]] = []
    for (family, method, budget), top in _top1(rows).items():
        if method == "full":
            continue
        own = {t: v for t, v in top.items() if styles[t] == "own" and t in full}
        for style in sorted({styles[t] for t in top} - {"own"}):
            sample = [(v, full[t], own[base], full[base]) for t, v in top.items()
                      if styles[t] == style and t in full and (base := t.removesuffix(f"-{style}")) in own]
            if not sample:
                continue
            ci = interval(sample, gap)
            out.append({"family": family, "method": method, "budget": budget, "style": style, "n": len(sample),
                        "gap": gap(sample), "gap_ci": ci, "verdict": _verdict(ci, len(sample), -STYLE_GAP, "within")})
    return _ordered(out, rows)


def _num(v: float | None) -> str:
    return "–" if v is None else f"{v:+.3f}"


def _ci(ci: Sequence[float] | None) -> str:
    return "–" if ci is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def compare_markdown(leads: Sequence[dict[str, Any]], gaps: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines: the lead over the best press and the style gaps, each with its interval."""
    lines: list[str] = []
    level = f"{LEVEL:.0%}"
    if leads:
        lines += ["", "## Against the best press", "",
                  f"Top-1 retention minus the best kvpress press's on the same tasks, with a {level} paired bootstrap "
                  "interval over the tasks; `ahead` / `behind` when the interval excludes 0.", "",
                  "| family | budget | style | method | n | ret top-1 | best press | its ret top-1 | lead | interval "
                  "| verdict |", "|---|---:|---|---|---:|---:|---|---:|---:|---|---|"]
        lines += [f"| {c['family']} | {c['budget']:g} | {c['style']} | {c['method']} | {c['n']} | "
                  f"{c['ret_top1']:.3f} | {c['press'].removeprefix(PRESS)} | {c['press_ret_top1']:.3f} | "
                  f"{_num(c['lead'])} | {_ci(c['lead_ci'])} | {c['verdict']} |" for c in leads]
    if gaps:
        lines += ["", "## Style gap against own", "",
                  f"A style's top-1 retention minus the own rendering's on the tasks rendered in both, with a {level} "
                  f"paired bootstrap interval; `behind` when the whole interval is below -{STYLE_GAP:g}, `within` when "
                  f"it is all above; no verdict under {MIN_TASKS} tasks.", "",
                  "| family | method | budget | style | n | gap | interval | verdict |",
                  "|---|---|---:|---|---:|---:|---|---|"]
        lines += [f"| {g['family']} | {g['method']} | {g['budget']:g} | {g['style']} | {g['n']} | {_num(g['gap'])} | "
                  f"{_ci(g['gap_ci'])} | {g['verdict']} |" for g in gaps]
    return lines
