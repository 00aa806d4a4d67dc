"""The top-level command line through the real entry point: chat with a real model, model settings
precedence (defaults < YAML < --set < --model), and one-line usage errors with exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}


def codeagent(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True,
                          env=ENV, timeout=timeout)


def _one_error(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith("codeagent: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("args,expect", [
    (["nosuch"], "No such command 'nosuch'"),
    (["models", "pull", "--bogus"], "No such option: --bogus"),
    (["models", "pull", "smollm2", "--all"], "give model names or --all"),
    (["solve", "x.md", "--budget", "3"], "--budget"),
    (["chat", "hi", "--max-tokens", "0"], "--max-tokens"),
    (["solve", "x.md", "--bogus"], "No such option: --bogus"),
    (["solve", "x.md", "--budget", "0"], "--budget"),
    (["solve", "x.md", "--max-steps", "0"], "--max-steps"),
    (["solve", "x.md", "--sandbox", "vm"], "--sandbox must be auto, docker or local"),
    (["batch", "t.jsonl", "--workers", "0"], "--workers"),
    (["runs", "nosuch"], "No such command 'nosuch'"),
    (["config", "show", "--doc", "--set", "kv.policy=window"], "--doc prints the reference of defaults"),
])
def test_usage_errors_are_one_line_and_exit_2(args, expect):
    assert expect in _one_error(codeagent(*args))


def test_model_setting_from_yaml_and_set_reaches_the_engine(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("model:\n  model: yaml-model-xyz\n")
    assert "'yaml-model-xyz'" in _one_error(codeagent("chat", "hi", "--config", str(cfg)))
    assert "'set-model-xyz'" in _one_error(codeagent("chat", "hi", "--config", str(cfg), "--set",
                                                     "model.model=set-model-xyz"))
    assert "'flag-model-xyz'" in _one_error(codeagent("chat", "hi", "--set", "model.model=set-model-xyz",
                                                      "--model", "flag-model-xyz"))


def test_bad_weight_format_is_one_line():
    assert "bad setting model.weights" in _one_error(codeagent("chat", "hi", "--set", "model.weights=int3"))


@pytest.mark.model
def test_chat_streams_a_reply_from_a_real_model():
    from codeagent.kvcache import models

    if not models.is_ready("smollm2"):
        pytest.skip("smollm2 not pulled")
    r = codeagent("chat", "Say hello.", "--model", "smollm2", "-n", "8")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() and "tok/s" in r.stderr and "finish=" in r.stderr


@pytest.mark.model
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_chat_answers_with_the_default_coder_model():
    """The default model (Qwen2.5-Coder-1.5B) writes code: greedy, a few dozen tokens."""
    from codeagent.kvcache import catalog, models

    if not models.is_ready(catalog.DEFAULT_MODEL):
        pytest.skip(f"{catalog.DEFAULT_MODEL} not pulled (`make test` pulls it)")
    r = codeagent("chat", "Write a Python function that reverses a string. Only the code.", "-n", "40", timeout=880)
    assert r.returncode == 0, r.stderr
    assert "def " in r.stdout and "return" in r.stdout, r.stdout


def test_version():
    r = codeagent("--version")
    assert r.returncode == 0 and r.stdout.startswith("codeagent ")


def test_models_list_folds_instead_of_cutting_at_60_columns():
    from codeagent.kvcache import catalog

    r = subprocess.run([sys.executable, "-m", "codeagent.cli", "models", "list"], capture_output=True, text=True,
                       env={**ENV, "COLUMNS": "60"}, timeout=120)
    assert r.returncode == 0, r.stderr
    first_column = "".join(ln.split("│")[1].strip() for ln in r.stdout.splitlines() if ln.startswith("│"))
    assert "…" not in r.stdout and f"{catalog.DEFAULT_MODEL}(default)" in first_column
    assert all(name in first_column for name in catalog.MODELS)
