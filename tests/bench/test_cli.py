"""The bench CLI's argument helpers."""

from __future__ import annotations

from codeagent.bench.cli import _policies
from codeagent.kvcache.registry import POLICIES, load_policies


def test_all_policies_come_from_the_registry():
    load_policies()
    names = _policies("all")
    assert names[0] == "full" and sorted(names) == POLICIES.names()
    assert _policies("full, default") == ["full", "default"]


def test_bench_run_model_follows_flag_then_set_then_yaml_then_smollm2(tmp_path):
    """`bench run` keeps its fast default (smollm2) but no longer overrides model.model from --set or YAML."""
    from codeagent.bench.cli import _bench_model

    cfg = tmp_path / "c.yaml"
    cfg.write_text("model:\n  model: qwen-coder-0.5b\n")
    assert _bench_model(None, None, []) == "smollm2"
    assert _bench_model(None, cfg, []) == "qwen-coder-0.5b"
    assert _bench_model(None, cfg, ["model.model=/models/mine"]) == "/models/mine"
    assert _bench_model("qwen-coder-1.5b", cfg, ["model.model=/models/mine"]) == "qwen-coder-1.5b"
