"""Speed measurements: tiny lengths in fresh processes write every file; sessions are real code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeagent.bench.speed import SpeedRow, session_messages, speed_command, write_speed


@pytest.mark.model
def test_session_messages_fit_the_length(make_engine):
    engine = make_engine()
    msgs = session_messages(engine, 1500)
    total = sum(len(engine.encode_message(r, t, i == 0).ids) for i, (r, t, _) in enumerate(msgs))
    assert 1400 <= total <= 1500
    assert msgs[1][1].startswith("view Lib/argparse.py 1-") and msgs[2][1].startswith("     1\t")
    assert {s for _, _, s in msgs[1:]} == {"s1", "s2"}


def test_write_speed_keeps_failed_rows_out_of_the_plot(tmp_path: Path):
    rows = [SpeedRow(policy="full", length=512, context_tokens=500, kv_bytes=500 * 46080, decode_tps=20.0,
                     prefill_tps=600.0, peak_rss=10**9, compress_share=0.0),
            SpeedRow(policy="default", length=512, error="boom")]
    files = write_speed(rows, tmp_path, ["codeagent bench speed"])
    data = json.loads(files["speed_json"].read_text())
    assert data["commands"] == ["codeagent bench speed"] and len(data["rows"]) == 2
    assert files["speed_png"].stat().st_size > 0
    assert "boom" in files["speed_csv"].read_text()


@pytest.mark.model
@pytest.mark.slow
def test_speed_tiny_lengths_in_subprocesses(tmp_path: Path):
    rows = speed_command(tmp_path, [384, 640], ["full", "default"], budget=256, decode_tokens=4)
    for name in ("speed.json", "speed.csv", "speed.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert all(r.error is None for r in rows), [r.error for r in rows]
    by = {(r.policy, r.length): r for r in rows}
    assert by[("full", 640)].kv_bytes > by[("full", 384)].kv_bytes
    assert by[("default", 384)].kv_slots <= 256 and by[("default", 640)].kv_slots <= 256
    for r in rows:
        assert r.decode_tokens == 4 and r.decode_tps > 0 and r.prefill_tps > 0 and r.peak_rss > 10**8
        assert 0.0 <= r.compress_share <= 1.0 and r.context_tokens <= r.length
