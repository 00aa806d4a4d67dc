"""Shared fixtures: the real embedded model, loaded once per test session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def loaded():
    """The embedded SmolLM2-135M-Instruct (pulled and converted on first use)."""
    from codeagent.kvcache import models

    return models.load("smollm2")


@pytest.fixture
def make_engine(loaded):
    """Factory for fresh engines sharing the loaded model."""
    from codeagent.kvcache.config import KVConfig, ModelConfig
    from codeagent.kvcache.engine import Engine

    def make(model_cfg: ModelConfig | None = None, **kv) -> Engine:
        return Engine(loaded, model_cfg or ModelConfig(), KVConfig(**kv))

    return make


@pytest.fixture(scope="session")
def code_ids(loaded) -> list[int]:
    """Token ids of real Python source (the stdlib's json.decoder and argparse)."""
    import argparse
    import inspect
    import json.decoder

    src = inspect.getsource(json.decoder) + inspect.getsource(argparse)
    return loaded.tokenizer(src, add_special_tokens=False)["input_ids"]
