"""Reports from synthetic rows: every file written, retention right, resumable store."""

from __future__ import annotations

import csv
import json
import math

import pytest
from rich.console import Console

from codeagent.bench.metrics import Row
from codeagent.bench.report import (
    RowStore,
    plot_speed,
    rich_table,
    summarise,
    variant_table,
    write_markdown,
    write_reports,
)
from codeagent.errors import InputError


def row(task: str, method: str, budget: float, family: str = "signature_recall", **m) -> Row:
    base = dict(n_context_tokens=2000, kv_slots=int(2000 * budget), kv_bytes=int(2000 * budget) * 46080,
                prefill_s=1.0, decode_s=0.5, compress_s=0.01, generated="x")
    base.update(m)
    return Row(task_id=task, family=family, method=method, budget=budget, **base)


@pytest.fixture
def rows() -> list[Row]:
    return [
        row("a", "full", 1.0, top1=1.0, exact=1.0, edit_sim=1.0, mean_logprob=-0.5),
        row("b", "full", 1.0, top1=0.5, exact=0.0, edit_sim=0.5, mean_logprob=-1.5),
        row("a", "window", 0.5, top1=0.5, exact=0.0, edit_sim=0.5, mean_logprob=-1.5),
        row("b", "window", 0.5, top1=0.25, exact=0.0, edit_sim=0.25, mean_logprob=-2.5),
        row("a", "window", 0.25, top1=0.0, exact=0.0, edit_sim=0.0, mean_logprob=-3.0),
        row("b", "window", 0.25, error="RuntimeError: boom"),
        row("c", "full", 1.0, family="next_line", top1=0.8, exact=1.0, edit_sim=0.9, mean_logprob=-0.2),
        row("c", "codecomp", 0.5, family="next_line", top1=0.8, exact=1.0, edit_sim=0.9, mean_logprob=-0.2),
    ]


def pick(summary, family, method, budget):
    [s] = [s for s in summary if (s["family"], s["method"], s["budget"]) == (family, method, budget)]
    return s


def test_summary_means_and_retention(rows):
    summary = summarise(rows)
    assert [(s["family"], s["method"], s["budget"]) for s in summary] == [
        ("signature_recall", "full", 1.0), ("signature_recall", "window", 0.5), ("signature_recall", "window", 0.25),
        ("next_line", "full", 1.0), ("next_line", "codecomp", 0.5),
        ("all", "full", 1.0), ("all", "window", 0.5), ("all", "window", 0.25), ("all", "codecomp", 0.5),
    ]
    w = pick(summary, "signature_recall", "window", 0.5)
    assert w["n"] == 2 and w["top1"] == pytest.approx(0.375)
    assert w["ret_top1"] == pytest.approx(0.375 / 0.75)
    assert w["ret_edit_sim"] == pytest.approx(0.375 / 0.75)
    assert w["ret_exact"] == 0.0  # full exact mean is 0.5 on a and b
    assert w["ret_mean_logprob"] == pytest.approx(math.exp(-2.0 - -1.0))
    # errors are counted, not averaged; retention uses only the tasks the method has (a)
    w4 = pick(summary, "signature_recall", "window", 0.25)
    assert (w4["n"], w4["n_errors"]) == (1, 1)
    assert w4["ret_exact"] == 0.0 and w4["ret_top1"] == 0.0
    assert w4["ret_mean_logprob"] == pytest.approx(math.exp(-3.0 - -0.5))
    assert pick(summary, "signature_recall", "full", 1.0)["ret_top1"] == 1.0
    assert pick(summary, "next_line", "codecomp", 0.5)["ret_exact"] == 1.0
    allw = pick(summary, "all", "window", 0.5)
    assert allw["ret_top1"] == w["ret_top1"]
    assert pick(summary, "all", "full", 1.0)["top1"] == pytest.approx((1.0 + 0.5 + 0.8) / 3)


def test_retention_undefined_when_full_is_zero():
    rows = [row("a", "full", 1.0, exact=0.0, top1=0.0), row("a", "h2o", 0.5, exact=0.0, top1=0.0)]
    s = pick(summarise(rows), "signature_recall", "h2o", 0.5)
    assert s["ret_exact"] is None and s["ret_top1"] is None and s["ret_mean_logprob"] is None


def test_write_reports_writes_every_file(tmp_path, rows):
    speed = [{"policy": p, "context_tokens": n, "kv_bytes": n * 46080 * f, "decode_tps": 26 - n / 400,
              "prefill_tps": 600.0, "peak_rss": 2e9, "compress_share": 0.1}
             for p, f in (("full", 1.0), ("codecomp", 0.25)) for n in (512, 1024, 2048, 4096)]
    files = write_reports(rows, tmp_path / "out", ["codeagent bench run --tasks t.jsonl --out out"], speed)
    assert set(files) == {"rows_jsonl", "rows_csv", "summary_json", "summary_md", "retention_png", "speed_png"}
    for p in files.values():
        assert p.is_file() and p.stat().st_size > 0
    assert files["retention_png"].read_bytes()[:4] == b"\x89PNG" == files["speed_png"].read_bytes()[:4]
    assert [Row.model_validate_json(ln) for ln in files["rows_jsonl"].read_text().splitlines()] == rows
    with files["rows_csv"].open() as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(rows) and table[5]["error"] == "RuntimeError: boom" and table[5]["top1"] == ""
    md = files["summary_md"].read_text()
    assert md.index("## signature_recall") < md.index("## next_line") < md.index("## all") < md.index("## Reproduce")
    assert "codeagent bench run --tasks t.jsonl --out out" in md
    assert "| window | 0.500 | 2 | 0.375 |" in md
    assert len(json.loads(files["summary_json"].read_text())) == 9


def test_markdown_and_table_handle_missing_values(tmp_path):
    summary = summarise([row("a", "tova", 0.5, error="x")])
    p = write_markdown(summary, tmp_path / "s.md", [])
    assert "| tova | 0.500 | 0 | – |" in p.read_text()
    console = Console(width=200, record=True)
    console.print(rich_table(summarise([row("a", "full", 1.0, top1=1.0), row("a", "tova", 0.5, top1=0.5)])))
    text = console.export_text()
    assert "tova" in text and "0.500" in text and "signature_recall" in text
    assert plot_speed([], tmp_path / "empty.png").is_file()


def test_rowstore_resumes_and_survives_a_truncated_line(tmp_path):
    path = tmp_path / "runs" / "rows.jsonl"
    store = RowStore(path)
    assert not store.done("a", "full", 1.0)
    store.append(row("a", "full", 1.0, top1=1.0))
    store.append(row("a", "window", 0.5, error="boom"))
    with path.open("a") as fh:
        fh.write('{"task_id": "b", "family": "signature_rec')  # interrupted write
    again = RowStore(path)
    assert again.keys == {("a", "full", 1.0), ("a", "window", 0.5)}
    assert again.done("a", "full", 1) and not again.done("b", "full", 1.0)
    again.append(row("b", "full", 1.0, top1=0.5))
    third = RowStore(path)
    assert [r.task_id for r in third.rows] == ["a", "a", "b"]
    assert RowStore(path, retry_errors=True).keys == {("a", "full", 1.0), ("b", "full", 1.0)}
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(ln) for ln in lines)


def test_rowstore_last_line_without_newline_and_bad_middle_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(row("a", "full", 1.0).model_dump_json())  # complete, no trailing newline
    store = RowStore(path)
    store.append(row("b", "full", 1.0))
    assert [r.task_id for r in RowStore(path).rows] == ["a", "b"]
    path.write_text(row("a", "full", 1.0).model_dump_json() + "\n{oops\n" + row("b", "full", 1.0).model_dump_json() + "\n")
    with pytest.raises(InputError, match=r"rows\.jsonl:2: bad result row"):
        RowStore(path)


def test_per_style_breakdown(tmp_path):
    rows = []
    for style, top in (("own", 1.0), ("raw", 0.5)):
        for t in ("a", "b"):
            tid = f"{t}-{style}"
            rows.append(row(tid, "full", 1.0, style=style, top1=1.0, mean_logprob=-0.5))
            rows.append(row(tid, "default", 0.25, style=style, top1=top, mean_logprob=-0.5))
    files = write_reports(rows, tmp_path, ["codeagent bench run ..."])
    by_style = json.loads(files["by_style_json"].read_text())
    ret = {(s["style"], s["family"], s["method"]): s["ret_top1"] for s in by_style}
    assert ret[("own", "signature_recall", "default")] == pytest.approx(1.0)
    assert ret[("raw", "signature_recall", "default")] == pytest.approx(0.5)
    md = files["summary_md"].read_text()
    assert "## By style" in md and "| method | budget | own (2) | raw (2) |" in md
    assert "| default | 0.25 | 1.00 / 1.00 | 0.50 / 1.00 |" in md
    # one style only: no breakdown
    files = write_reports([r for r in rows if r.style == "own"], tmp_path / "one", [])
    assert "by_style_json" not in files and "## By style" not in files["summary_md"].read_text()


def test_variant_table_retention_per_group_and_over_all():
    rows = [
        {"task_id": "a", "style": "own", "variant": "full", "budget": 1.0, "top1": 0.8, "mean_logprob": -1.0},
        {"task_id": "b", "style": "raw", "variant": "full", "budget": 1.0, "top1": 0.4, "mean_logprob": -2.0},
        {"task_id": "a", "style": "own", "variant": "x", "budget": 0.25, "top1": 0.4, "mean_logprob": -2.0},
        {"task_id": "b", "style": "raw", "variant": "x", "budget": 0.25, "top1": 0.4, "mean_logprob": -2.0},
        {"task_id": "c", "style": "raw", "variant": "x", "budget": 0.25, "top1": 1.0, "mean_logprob": 0.0},  # no full row
    ]
    lines = variant_table(rows, ("variant", "budget", "style"), total="style")
    assert lines[0] == "| variant | budget | style | n | top-1 ret | log-prob ret |"
    assert lines[2:] == [
        "| x | 0.25 | own | 1 | 0.500 | 0.368 |",  # 0.4 / 0.8, exp(-2 - -1)
        "| x | 0.25 | raw | 1 | 1.000 | 1.000 |",
        "| x | 0.25 | all | 2 | 0.667 | 0.607 |",  # 0.4 / 0.6, exp(-2 - -1.5)
    ]
