"""Benchmark reports: result rows (JSONL, CSV, resumable store), summaries, markdown, plots, rich table.

A summary row is the mean of each metric per family x method x budget (plus an ``all`` family over
every task), with retention against the ``full`` method on the same tasks: the method's mean
divided by the full cache's mean over the tasks both have a value for (for log-probs, the ratio of
geometric-mean probabilities, see ``codeagent.bench.metrics.retention``).
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import ValidationError
from rich.table import Table

from codeagent.bench import compare
from codeagent.bench.metrics import LOGPROB_METRICS, RATIO_METRICS, Row, full_rows, retention
from codeagent.errors import InputError

FULL = "full"
ALL = "all"
QUALITY = (*LOGPROB_METRICS, *RATIO_METRICS)
"""Metrics that get a retention column."""
COSTS = ("kv_slots", "kv_bytes", "prefill_s", "decode_s", "compress_s", "n_context_tokens")
"""Metrics reported as plain means."""
SPEED_FIELDS = ("policy", "context_tokens", "kv_bytes", "decode_tps", "prefill_tps", "peak_rss", "compress_share")
"""Keys of a speed row (``plot_speed``)."""


# --- rows on disk -----------------------------------------------------------------------------


def write_rows_jsonl(rows: Iterable[Row], path: str | Path) -> Path:
    """All rows as JSONL, one per line."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row.model_dump_json() + "\n")
    return p


def write_csv(rows: Iterable[Row], path: str | Path) -> Path:
    """All rows as CSV with one column per Row field (empty cells for None)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fields = list(Row.model_fields)
    with p.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None else v) for k, v in row.model_dump().items()})
    return p


class RowStore:
    """Append-only JSONL of result rows that knows which (task_id, method, budget) keys are done.

    On opening, a truncated or unreadable last line (an interrupted write) is cut off; a bad line
    elsewhere is an InputError naming it. With ``retry_errors`` rows that failed are not done.
    """

    def __init__(self, path: str | Path, retry_errors: bool = False) -> None:
        self.path = Path(path)
        self.retry_errors = retry_errors
        self.rows: list[Row] = []
        self._done: set[tuple[str, str, float]] = set()
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        keep = len(raw)
        offset = 0
        for no, line in enumerate(lines, start=1):
            start, offset = offset, offset + len(line) + 1
            if not line.strip():
                continue
            try:
                row = Row.model_validate_json(line)
            except ValidationError as exc:
                if all(not rest.strip() for rest in lines[no:]):
                    keep = start  # interrupted last write: drop it
                    break
                raise InputError(f"{self.path}:{no}: bad result row: {exc.errors()[0]['msg']}") from None
            if self.retry_errors and row.error:
                continue
            self.rows.append(row)
            self._done.add(row.key)
        if keep < len(raw) or (raw and not raw.endswith(b"\n")):
            with self.path.open("r+b") as fh:
                fh.truncate(keep)
                if keep and not raw[:keep].endswith(b"\n"):
                    fh.seek(keep)
                    fh.write(b"\n")

    def done(self, task_id: str, method: str, budget: float) -> bool:
        """True when a row for this key is already stored."""
        return (task_id, method, float(budget)) in self._done

    @property
    def keys(self) -> set[tuple[str, str, float]]:
        """The (task_id, method, budget) keys already stored."""
        return set(self._done)

    def append(self, row: Row) -> None:
        """Store one row (written and flushed at once)."""
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(row.model_dump_json() + "\n")
            fh.flush()
        self.rows.append(row)
        self._done.add(row.key)


# --- summaries --------------------------------------------------------------------------------


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(vals) / len(vals) if vals else None


def _group_summary(family: str, method: str, budget: float, group: Sequence[Row], full: dict[str, Row]) -> dict[str, Any]:
    ok = [r for r in group if not r.error]
    out: dict[str, Any] = {"family": family, "method": method, "budget": budget,
                           "n": len(ok), "n_errors": len(group) - len(ok)}
    for m in (*QUALITY, *COSTS):
        out[m] = _mean(getattr(r, m) for r in ok)
    for m in QUALITY:
        pairs = [(getattr(r, m), getattr(full[r.task_id], m)) for r in ok if r.task_id in full]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if not pairs:
            out[f"ret_{m}"] = None
            continue
        out[f"ret_{m}"] = retention(_mean(a for a, _ in pairs), _mean(b for _, b in pairs), logprob=m in LOGPROB_METRICS)
        if m == "top1":
            out["ret_top1_ci"] = None if method == FULL else compare.interval(pairs, compare.retention)
    return out


def summarise(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Means per family x method x budget (and per method x budget over ``all`` tasks), with retention.

    Retention columns are ``ret_<metric>``: the method's mean over the tasks that also have a
    full-cache value, relative to the full cache's mean over those same tasks; ``ret_top1_ci`` is the
    top-1 retention's paired bootstrap interval over those tasks (``codeagent.bench.compare``).
    """
    full = full_rows(rows)
    families = list(dict.fromkeys(r.family for r in rows))
    seen = list(dict.fromkeys(r.method for r in rows))
    methods = sorted(seen, key=lambda m: (m != FULL, seen.index(m)))
    groups: dict[tuple[str, str, float], list[Row]] = defaultdict(list)
    for r in rows:
        groups[(r.family, r.method, float(r.budget))].append(r)
        if len(families) > 1:
            groups[(ALL, r.method, float(r.budget))].append(r)
    order = {f: i for i, f in enumerate([*families, ALL])}
    keys = sorted(groups, key=lambda k: (order[k[0]], methods.index(k[1]), -k[2]))
    return [_group_summary(f, m, b, groups[(f, m, b)], full) for f, m, b in keys]


def style_summary(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """``summarise`` per rendering style (each row gets a ``style`` key); empty when the rows hold
    fewer than two styles."""
    styles = list(dict.fromkeys(r.style or "own" for r in rows))
    if len(styles) < 2:
        return []
    out: list[dict[str, Any]] = []
    for st in styles:
        out += [dict(s, style=st) for s in summarise([r for r in rows if (r.style or "own") == st])]
    return out


def style_markdown(by_style: Sequence[dict[str, Any]]) -> list[str]:
    """Markdown lines: per family, a table of top-1 / log-prob retention, a row per method and
    budget, a column per style."""
    if not by_style:
        return []
    styles = list(dict.fromkeys(s["style"] for s in by_style))
    families = list(dict.fromkeys(s["family"] for s in by_style))
    families.sort(key=lambda f: f == ALL)
    lines = ["", "## By style", "", "Top-1 retention / log-prob retention against the full cache on the same "
             "tasks, per rendering style (`n` tasks per style in parentheses)."]
    cell = {(s["family"], s["style"], s["method"], s["budget"]): s for s in by_style}
    for fam in families:
        keys = list(dict.fromkeys((s["method"], s["budget"]) for s in by_style if s["family"] == fam and s["method"] != FULL))
        counts = {st: max((s["n"] for s in by_style if s["family"] == fam and s["style"] == st), default=0)
                  for st in styles}
        lines += ["", f"### {fam}", "", "| method | budget | " + " | ".join(f"{st} ({counts[st]})" for st in styles) + " |",
                  "|---|---:|" + "---:|" * len(styles)]
        for method, budget in keys:
            vals = []
            for st in styles:
                c = cell.get((fam, st, method, budget))
                vals.append("–" if c is None else f"{_fmt(c['ret_top1'], 2)} / {_fmt(c['ret_mean_logprob'], 2)}")
            lines.append(f"| {method} | {budget:g} | " + " | ".join(vals) + " |")
    return lines


def variant_table(rows: Sequence[dict[str, Any]], by: Sequence[str], total: str | None = None) -> list[str]:
    """Markdown lines for the measurement scripts: top-1 and log-prob retention of rows (dicts with ``task_id``,
    ``variant``, ``top1``, ``mean_logprob`` and the ``by`` keys) against the ``full`` variant's row of the same
    task, one line per group of ``by`` values; ``total``: one of ``by`` also summed over, shown as ``all``."""
    full = {r["task_id"]: r for r in rows if r["variant"] == FULL}
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["variant"] == FULL or r["task_id"] not in full:
            continue
        key = tuple(r.get(k) for k in by)
        groups[key].append(r)
        if total is not None:
            groups[tuple(ALL if k == total else v for k, v in zip(by, key))].append(r)
    lines = ["| " + " | ".join(by) + " | n | top-1 ret | log-prob ret |", "|" + "---|" * (len(by) + 3)]
    for key in sorted(groups, key=lambda k: tuple((v == ALL, str(v)) for v in k)):
        grp = groups[key]
        top = retention(_mean(r["top1"] for r in grp), _mean(full[r["task_id"]]["top1"] for r in grp))
        lp = retention(_mean(r["mean_logprob"] for r in grp), _mean(full[r["task_id"]]["mean_logprob"] for r in grp),
                       logprob=True)
        cells = ["–" if v is None else f"{v:g}" if isinstance(v, float) else str(v) for v in key]
        lines.append(f"| {' | '.join(cells)} | {len(grp)} | {_fmt(top)} | {_fmt(lp)} |")
    return lines


def write_summary_json(summary: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """The summary rows as a JSON list."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(list(summary), indent=1) + "\n")
    return p


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_fmt(v, digits) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


_COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("method", "method", 0), ("budget", "budget", 3), ("n", "n", 0),
    ("top1", "top-1", 3), ("exact", "exact", 3), ("edit_sim", "edit sim", 3), ("mean_logprob", "log-prob", 3),
    ("ret_top1", "ret top-1", 3), ("ret_top1_ci", "interval", 2), ("ret_exact", "ret exact", 3),
    ("ret_edit_sim", "ret edit", 3), ("ret_mean_logprob", "ret log-prob", 3), ("kv_mb", "KV MB", 1), ("n_errors", "errors", 0),
)


def _cells(s: dict[str, Any]) -> list[str]:
    row = dict(s, kv_mb=None if s.get("kv_bytes") is None else s["kv_bytes"] / 1e6)
    return [_fmt(row.get(key), digits) for key, _, digits in _COLUMNS]


def write_markdown(summary: Sequence[dict[str, Any]], path: str | Path, commands: Sequence[str],
                   by_style: Sequence[dict[str, Any]] = (), compared: Sequence[str] = ()) -> Path:
    """A markdown report: one table per family, then ``all``, the per-style breakdown when the
    tasks come in several styles, the ``compared`` lines (``compare.compare_markdown``), then the
    commands to reproduce it."""
    lines = [
        "# codeagent bench results",
        "",
        "Means per method and budget (fraction of context tokens kept). Retention (`ret`) is the "
        "method's mean over the full-cache mean on the same tasks; for log-probs it is "
        "exp(mean log-prob − full mean log-prob), the ratio of per-token geometric-mean probabilities. "
        f"`interval`: the {compare.LEVEL:.0%} paired bootstrap interval of the top-1 retention over the tasks.",
    ]
    families = list(dict.fromkeys(s["family"] for s in summary))
    families.sort(key=lambda f: f == ALL)
    for fam in families:
        part = [s for s in summary if s["family"] == fam]
        lines += ["", f"## {fam}", "", "| " + " | ".join(t for _, t, _ in _COLUMNS) + " |",
                  "|" + "|".join("---" if i == 0 else "---:" for i in range(len(_COLUMNS))) + "|"]
        lines += ["| " + " | ".join(_cells(s)) + " |" for s in part]
    lines += style_markdown(by_style)
    lines += compared
    lines += ["", "## Reproduce", "", "```bash", *commands, "```", ""]
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines))
    return p


def rich_table(summary: Sequence[dict[str, Any]]) -> Table:
    """The summary as a rich table (family column first), for the terminal."""
    table = Table(title="codeagent bench", show_lines=False)
    table.add_column("family")
    for key, title, _ in _COLUMNS:
        table.add_column(title, justify="left" if key == "method" else "right")
    prev = None
    for s in summary:
        if prev is not None and s["family"] != prev:
            table.add_section()
        table.add_row(s["family"] if s["family"] != prev else "", *_cells(s))
        prev = s["family"]
    return table


# --- plots ------------------------------------------------------------------------------------


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_retention(summary: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """Retention of top-1 (solid) and exact match (dashed) against budget: a line per method, a panel per family."""
    plt = _pyplot()
    families = list(dict.fromkeys(s["family"] for s in summary))
    methods = list(dict.fromkeys(s["method"] for s in summary if s["method"] != FULL))
    colours = {m: plt.get_cmap("tab10")(i % 10) for i, m in enumerate(methods)}
    fig, axes = plt.subplots(1, max(1, len(families)), figsize=(4.2 * max(1, len(families)), 3.8), squeeze=False)
    for ax, fam in zip(axes[0], families):
        for m in methods:
            pts = sorted((s["budget"], s) for s in summary if s["family"] == fam and s["method"] == m)
            for metric, style in (("ret_top1", "-"), ("ret_exact", "--")):
                xy = [(b, s[metric]) for b, s in pts if s[metric] is not None]
                if xy:
                    ax.plot(*zip(*xy), style, marker="o", ms=3, color=colours[m],
                            label=m if metric == "ret_top1" else None)
        ax.axhline(1.0, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log", base=2)
        ticks = sorted({s["budget"] for s in summary if s["family"] == fam and s["method"] != FULL})
        if ticks:
            ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
        ax.set_title(fam)
        ax.set_xlabel("budget (fraction of context kept)")
        ax.set_ylabel("retention vs full (— top-1, -- exact)")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 8), fontsize=8)
    fig.tight_layout(rect=(0, 0.08 if handles else 0, 1, 1))
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def plot_speed(speed_rows: Sequence[dict[str, Any]], path: str | Path) -> Path:
    """KV bytes and decode tokens/s against context length, one line per policy."""
    plt = _pyplot()
    policies = list(dict.fromkeys(r["policy"] for r in speed_rows))
    fig, (ax_kv, ax_tps) = plt.subplots(1, 2, figsize=(9, 3.8))
    for i, pol in enumerate(policies):
        pts = sorted((r["context_tokens"], r) for r in speed_rows if r["policy"] == pol)
        colour = plt.get_cmap("tab10")(i % 10)
        for ax, key, scale in ((ax_kv, "kv_bytes", 1e6), (ax_tps, "decode_tps", 1.0)):
            xy = [(x, r[key] / scale) for x, r in pts if r.get(key) is not None]
            if xy:
                ax.plot(*zip(*xy), marker="o", ms=3, color=colour, label=pol)
    ax_kv.set_ylabel("KV cache (MB)")
    ax_tps.set_ylabel("decode tokens/s")
    for ax in (ax_kv, ax_tps):
        ax.set_xlabel("context length (tokens)")
        ax.grid(alpha=0.3)
    if policies:
        ax_tps.legend(fontsize=8)
    fig.tight_layout()
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return p


def write_reports(rows: Sequence[Row], out: str | Path, commands: Sequence[str],
                  speed_rows: Sequence[dict[str, Any]] | None = None) -> dict[str, Path]:
    """Every report file into ``out``: rows.jsonl, rows.csv, summary.json, summary.md, retention.png
    (and speed.png with speed rows; compare.json when the rows hold a press or several styles with
    the own one). Returns them by name."""
    d = Path(out)
    summary = summarise(rows)
    by_style = style_summary(rows)
    leads, gaps = compare.press_leads(rows), compare.style_gaps(rows)
    files = {
        "rows_jsonl": write_rows_jsonl(rows, d / "rows.jsonl"),
        "rows_csv": write_csv(rows, d / "rows.csv"),
        "summary_json": write_summary_json(summary, d / "summary.json"),
        "summary_md": write_markdown(summary, d / "summary.md", commands, by_style,
                                     compare.compare_markdown(leads, gaps)),
        "retention_png": plot_retention(summary, d / "retention.png"),
    }
    if by_style:
        files["by_style_json"] = write_summary_json(by_style, d / "summary_by_style.json")
    if leads or gaps:
        p = d / "compare.json"
        p.write_text(json.dumps({"press_leads": leads, "style_gaps": gaps}, indent=1) + "\n")
        files["compare_json"] = p
    if speed_rows:
        files["speed_png"] = plot_speed(speed_rows, d / "speed.png")
    return files
