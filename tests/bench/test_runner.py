"""The grid runner: a tiny grid with the real model end to end through the CLI, resume, bad input."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from codeagent.bench.runner import GridSpec, commit_points, prefill_policy, select_tasks, trim_like
from codeagent.bench.tasks import Probe, Segment, Task, dump_tasks
from codeagent.errors import InputError

REPORT_FILES = ("rows.jsonl", "rows.csv", "summary.json", "summary.md", "retention.png", "commands.txt")

MODULE = '''import json
import time
from pathlib import Path


def fetch_with_retry(url, retries=3, backoff=0.5, timeout=10.0):
    """Fetch a URL, retrying with exponential backoff."""
    delay = backoff
    for attempt in range(retries):
        try:
            return _get(url, timeout=timeout)
        except OSError:
            time.sleep(delay)
            delay *= 2
    raise RuntimeError(f"giving up on {url}")


def load_config(path: Path) -> dict:
    """Read a JSON config file."""
    with path.open() as fh:
        return json.load(fh)
'''
NUMBERED = "\n".join(f"{i:>6}\t{line}" for i, line in enumerate(MODULE.splitlines(), start=1))
LOG = """============================= test session starts ==============================
collected 3 items

tests/test_net.py ..F                                                    [100%]

=================================== FAILURES ===================================
___________________________ test_retry_gives_up ________________________________
E   RuntimeError: giving up on http://example.invalid
FAILED tests/test_net.py::test_retry_gives_up - RuntimeError: giving up on http://example.invalid
========================= 1 failed, 2 passed in 0.12s ========================="""


def tiny_tasks() -> list[Task]:
    """Two hand-made tasks of about 300 tokens in the TASKS.md format."""
    sig = Task(
        id="tiny-sig", family="signature_recall",
        segments=[
            Segment(role="system", kind="text", text="You are a coding agent. Keep signatures stable."),
            Segment(role="user", kind="text", text="Add a cached variant of fetch_with_retry in net/util.py."),
            Segment(role="assistant", kind="plan", text="1. Read net/util.py\n2. Add the wrapper\n3. Run the tests"),
            Segment(role="assistant", kind="tool_call", subtask="s1", text="view net/util.py"),
            Segment(role="tool", kind="tool_output", subtask="s1", text=NUMBERED),
            Segment(role="assistant", kind="tool_call", subtask="s2", text="run_tests tests/test_net.py"),
            Segment(role="tool", kind="tool_output", subtask="s2", text=LOG),
        ],
        commits=["s1"],
        probe=Probe(prompt="I'll add the wrapper with the same signature:\n```python\ndef fetch_with_retry(",
                    target="url, retries=3, backoff=0.5, timeout=10.0):"),
    )
    nxt = Task(
        id="tiny-next", family="next_line",
        segments=[
            Segment(role="system", kind="text", text="You are a coding agent."),
            Segment(role="user", kind="text", text="Continue net/util.py."),
            Segment(role="assistant", kind="tool_call", subtask="s1", text="view net/util.py"),
            Segment(role="tool", kind="tool_output", subtask="s1", text=NUMBERED),
        ],
        probe=Probe(prompt="```python\ndef load_config(path: Path) -> dict:\n",
                    target='    """Read a JSON config file."""'),
    )
    return [sig, nxt]


@pytest.fixture
def task_file(tmp_path: Path) -> Path:
    return dump_tasks(tiny_tasks(), tmp_path / "tiny.jsonl")


def invoke(args: list[str]):
    from codeagent.cli import app

    return CliRunner().invoke(app, args, catch_exceptions=False)


# --- without the model ------------------------------------------------------------------------


def test_grid_cells_full_once_then_every_budget():
    spec = GridSpec(("full", "window", "default"), (0.5, 0.25), ("snapkv",))
    assert spec.methods() == [("full", 1.0), ("window", 0.5), ("window", 0.25), ("default", 0.5),
                              ("default", 0.25), ("kvpress:snapkv", 0.5), ("kvpress:snapkv", 0.25)]
    spec.validate()


@pytest.mark.parametrize("spec, needle", [
    (GridSpec(("nope",), (0.5,)), "nope"),
    (GridSpec(("full",), (0.5,), ("nope",)), "unknown peer"),
    (GridSpec(("window",), (1.5,)), "budget"),
    (GridSpec((), ()), "nothing to run"),
])
def test_grid_validation(spec, needle):
    with pytest.raises(InputError, match=needle):
        spec.validate()


def test_commit_points_after_last_segment_of_each_subtask():
    sig = tiny_tasks()[0]
    assert commit_points(sig) == {4: ["s1"]}
    orphan = sig.model_copy(update={"commits": ["s1", "ghost"]})
    assert commit_points(orphan) == {4: ["s1"], 6: ["ghost"]}


def test_shared_prefill_collects_the_statistics_its_cells_read():
    # full and window read no attention statistics; h2o does, so a group holding it prefills as h2o
    assert prefill_policy([("full", 1.0), ("window", 0.5)], None) == "full"
    assert prefill_policy([("full", 1.0), ("window", 0.5), ("h2o", 0.5), ("snapkv", 0.5)], None) == "h2o"
    assert prefill_policy([("full", 1.0)], "default") == "default"


def test_trim_like_keeps_as_many_lines_as_the_target():
    assert trim_like("a, b):\n    return 1", "a, b):") == "a, b):"
    assert trim_like("x\ny\nz", "x\ny") == "x\ny"


def test_select_tasks_by_family_and_limit():
    tasks = tiny_tasks() + [tiny_tasks()[0].model_copy(update={"id": "tiny-sig-2"})]
    assert [t.id for t in select_tasks(tasks, limit=1)] == ["tiny-sig", "tiny-next"]
    assert [t.id for t in select_tasks(tasks, ["next_line"])] == ["tiny-next"]
    with pytest.raises(InputError, match="session"):
        select_tasks(tasks, ["session"])


def test_malformed_task_file_is_one_line_error_with_line_number(tmp_path: Path, task_file: Path):
    bad = tmp_path / "bad.jsonl"
    good = task_file.read_text().splitlines()[0]
    bad.write_text(good + "\n" + json.dumps({"id": "x", "family": "f", "segments": []}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "codeagent.cli", "bench", "run", "--tasks", str(bad),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:2:" in lines[0] and "segments" in lines[0]
    assert not (tmp_path / "out" / "rows.jsonl").exists()


# --- with the real model ----------------------------------------------------------------------


@pytest.mark.model
def test_context_ids_match_the_engine(make_engine):
    from codeagent.bench.runner import bench_kv_config, context_ids, prefill_context

    engine = make_engine(**bench_kv_config("full").model_dump())
    task = tiny_tasks()[0]
    prefill_context(engine, task, lifecycle=False)
    assert engine.table["token"].tolist() == context_ids(engine, task)


@pytest.mark.model
def test_snapshot_restore_gives_identical_probes(make_engine):
    from codeagent.bench.runner import bench_kv_config, prefill_context, run_probe

    engine = make_engine(**bench_kv_config("full").model_dump())
    task = tiny_tasks()[0]
    prefill_context(engine, task, lifecycle=False)
    snap = engine.snapshot()
    first = run_probe(engine, task)
    engine.manager.enforce(engine.state, budget=64)
    engine.restore(snap)
    assert len(engine.table) == snap.logical == engine.logical
    again = run_probe(engine, task)
    assert (again.mean_logprob, again.top1, again.generated) == (first.mean_logprob, first.top1, first.generated)


@pytest.mark.model
def test_variant_rows_restore_the_prefill_for_every_cell(make_engine):
    """The measurement scripts' cells: each starts from the same default prefill, so a ``full`` cell after a
    compressed one reads the whole context again, and a ``default`` cell is the grid's ``default`` cell."""
    from codeagent.bench.runner import bench_kv_config, prefill_context, run_probe, variant_rows
    from codeagent.kvcache.manager import KVManager

    task = tiny_tasks()[0]
    engine = make_engine(**bench_kv_config("default").model_dump())

    def apply(variant: str, budget: float, snap) -> None:
        if variant != "full":
            engine.manager.enforce(engine.state, budget=math.ceil(budget * snap.logical), why="bench")

    rows = variant_rows(engine, task, [("full", 1.0), ("default", 0.25), ("full", 1.0)], apply)
    assert [(r["task_id"], r["variant"], r["budget"], r["style"]) for r in rows] == [
        ("tiny-sig", "full", 1.0, "own"), ("tiny-sig", "default", 0.25, "own"), ("tiny-sig", "full", 1.0, "own")]
    assert (rows[0]["top1"], rows[0]["mean_logprob"]) == (rows[2]["top1"], rows[2]["mean_logprob"])
    assert rows[1]["mean_logprob"] != rows[0]["mean_logprob"]  # a quarter of ~300 tokens loses something

    fresh = make_engine(**bench_kv_config("default").model_dump())
    fresh.manager = KVManager(bench_kv_config("default"))
    prefill_context(fresh, task, lifecycle=True)
    fresh.manager.enforce(fresh.state, budget=math.ceil(0.25 * fresh.logical), why="bench")
    res = run_probe(fresh, task)
    assert (res.top1, res.mean_logprob) == pytest.approx((rows[1]["top1"], rows[1]["mean_logprob"]))


@pytest.mark.model
def test_variant_rows_prefill_with_the_settings_given(make_engine):
    """A knob read while the context is read (here ``pin_signatures``) needs its own prefill: ``prefill=`` reads
    the task with those settings, and every cell restores that prefill, not the default's."""
    from codeagent.bench.runner import bench_kv_config, variant_rows
    from codeagent.kvcache.tags import BlockType, State

    task = tiny_tasks()[0]
    engine = make_engine(**bench_kv_config("default").model_dump())
    pinned: dict[str, int] = {}

    def apply(variant: str, budget: float, snap) -> None:
        t = engine.state.table
        sig = t["block_type"] == int(BlockType.FUNCTION_SIGNATURE)
        pinned[variant] = int((sig & (t["state"] == int(State.PINNED))).sum())

    variant_rows(engine, task, [("default", 1.0)], apply)
    variant_rows(engine, task, [("nopin", 1.0)], apply,
                 prefill=bench_kv_config("default").model_copy(update={"pin_signatures": False}))
    assert pinned["nopin"] < pinned["default"]  # the headers the issue names stay pinned (pin_named)


@pytest.mark.model
@pytest.mark.slow
def test_tiny_grid_end_to_end_and_resume(tmp_path: Path, task_file: Path):
    out = tmp_path / "out"
    args = ["bench", "run", "--tasks", str(task_file), "--policies", "full,window,default", "--budgets", "0.5",
            "--out", str(out)]
    res = invoke(args)
    assert res.exit_code == 0, res.output
    for name in REPORT_FILES:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert sorted((r["task_id"], r["method"], r["budget"]) for r in rows) == sorted(
        (t, m, b) for t in ("tiny-sig", "tiny-next") for m, b in (("full", 1.0), ("window", 0.5), ("default", 0.5)))
    for r in rows:
        assert r["error"] is None, r
        assert 200 <= r["n_context_tokens"] <= 500
        assert r["top1"] is not None and r["exact"] in (0.0, 1.0) and 0.0 <= r["edit_sim"] <= 1.0
        limit = r["n_context_tokens"] if r["method"] == "full" else math.ceil(0.5 * r["n_context_tokens"])
        assert r["kv_slots"] <= limit and r["kv_bytes"] > 0
    full = {r["task_id"]: r for r in rows if r["method"] == "full"}
    assert all(full[r["task_id"]]["kv_slots"] == r["n_context_tokens"] for r in rows if r["method"] == "full")
    summary = json.loads((out / "summary.json").read_text())
    assert {s["method"] for s in summary} == {"full", "window", "default"}
    assert "codeagent bench run" in (out / "summary.md").read_text()

    # resume: nothing left to do, rows kept, the model is not even loaded
    again = invoke(args)
    assert again.exit_code == 0
    assert "6 already done" in again.output
    assert len((out / "rows.jsonl").read_text().splitlines()) == 6

    # a lost row is the only one run again
    kept = [line for line in (out / "rows.jsonl").read_text().splitlines()
            if not ('"tiny-next"' in line and '"window"' in line)]
    (out / "rows.jsonl").write_text("\n".join(kept) + "\n")
    third = invoke(args)
    assert third.exit_code == 0 and "5 already done" in third.output
    rows = [json.loads(line) for line in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["error"] is None for r in rows)


@pytest.mark.model
def test_bench_variants_leaves_out_a_task_past_the_model_and_goes_on(tmp_path: Path):
    """``scripts/bench_variants.py`` on a task longer than SmolLM2's 8,192 positions: one line saying it is left out,
    and the run goes on to the next task, whose rows are written (before, the traceback ended the run)."""
    huge = Task(id="huge", family="next_line",
                segments=[Segment(role="user", kind="text", text="Continue big.py."),
                          Segment(role="tool", kind="tool_output", text="value = compute(1, 2, 3)\n" * 1500)],
                probe=Probe(prompt="```python\n", target="value = compute(1, 2, 3)"))
    tasks = dump_tasks([huge, tiny_tasks()[1]], tmp_path / "t.jsonl")
    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "rows.json"
    proc = subprocess.run([sys.executable, str(root / "scripts" / "bench_variants.py"), "--tasks", str(tasks),
                           "--variant", "base:", "--budgets", "0.5", "--out", str(out)], cwd=root,
                          capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    left = [line for line in proc.stdout.splitlines() if line.startswith("huge:")]
    assert len(left) == 1 and "left out: context past the model limit" in left[0]
    assert "Traceback" not in proc.stderr
    rows = json.loads(out.read_text())
    assert {(r["task_id"], r["variant"]) for r in rows} == {("tiny-next", "full"), ("tiny-next", "base")}


@pytest.mark.model
def test_kept_map_brackets_what_the_budget_keeps_and_names_a_bad_setting(tmp_path: Path):
    """``scripts/kept_map.py``: the context with kept slots in ``[[...]]`` and pinned ones in ``{{...}}`` (the
    signatures of the viewed file are pinned, and at half the context some of it is dropped), one row per
    target token, a summary whose counts match the budget; a bad ``--kv`` value or a missing task file is one line,
    no traceback."""
    tasks = dump_tasks(tiny_tasks(), tmp_path / "t.jsonl")
    root = Path(__file__).resolve().parents[2]

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(root / "scripts" / "kept_map.py"), "--tasks", str(tasks),
                               "--task", "tiny-next", "--budget", "0.5", "--threads", "1", *extra], cwd=root,
                              capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(root)})

    proc = run("--kv", "pinned_cap=0.9")
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = proc.stdout
    assert "{{def fetch_with_retry(url, retries=3, backoff=0.5, timeout=10.0):}}" in text and "[[" in text
    body = text[:text.index("\ntarget ")]
    assert body.rstrip().endswith("<|im_end|>\n]]".rstrip())  # the context only, its recent window kept
    outside = re.sub(r"\[\[.*?\]\]|\{\{.*?\}\}", "", body, flags=re.S)
    assert "return _get(url, timeout=timeout)" in outside  # a body line the budget dropped
    rows = text[text.index("token | full | compressed"):].splitlines()[1:-1]
    assert len(rows) >= 3 and all(row.count(" | ") == 2 for row in rows)
    kept, total = map(int, re.search(r"kept (\d+) of (\d+) slots", text.splitlines()[-1]).groups())
    assert kept == math.ceil(0.5 * total)
    bad = run("--kv", "release_by=often")
    assert bad.returncode != 0 and bad.stderr.strip().startswith("kept_map: release_by:")
    missing = subprocess.run([sys.executable, str(root / "scripts" / "kept_map.py"), "--tasks",
                              str(tmp_path / "no.jsonl"), "--task", "tiny-next"], cwd=root, capture_output=True,
                             text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(root)})
    assert missing.returncode != 0 and missing.stderr.strip().startswith("kept_map: task file not found")
    assert "Traceback" not in bad.stderr + missing.stderr
