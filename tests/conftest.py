"""Shared fixtures: the real embedded models, loaded once per test session, and a tiny random Qwen2.

The exactness tests run on both architectures the engine ships with: llama (SmolLM2) and qwen2
(Qwen2.5-Coder: q/k/v biases, 2 KV heads, rope theta 1e6).
"""

from __future__ import annotations

import os

import pytest

ARCHS = ("llama", "qwen2")
DEVICE = os.environ.get("CODEAGENT_TEST_DEVICE", "cpu")
"""Where the model fixtures live: cpu here; scripts/gpu_check.sh sets cuda."""


@pytest.fixture(scope="session")
def loaded():
    """The embedded SmolLM2-135M-Instruct (llama; pulled and converted on first use)."""
    from codeagent.kvcache import models

    return models.load("smollm2", weights="fp32", device=DEVICE)


@pytest.fixture(scope="session")
def qwen05():
    """The real Qwen2.5-Coder-0.5B-Instruct (qwen2), or a skip when it is not pulled (`make test` pulls it)."""
    from codeagent.kvcache import models

    if not models.is_ready("qwen-coder-0.5b"):
        pytest.skip("qwen-coder-0.5b not pulled (run `codeagent models pull qwen-coder-0.5b`; `make test` does)")
    return models.load("qwen-coder-0.5b", weights="fp32", device=DEVICE)


@pytest.fixture(scope="session")
def tiny_qwen2(loaded):
    """A random Qwen2 with the real model's shape features (biases, GQA 6:1 over 2 KV heads, rope 1e6),
    small enough for property tests, sharing SmolLM2's ChatML tokenizer."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from codeagent.kvcache.models import LoadedModel

    torch.manual_seed(0)
    tok = loaded.tokenizer
    cfg = Qwen2Config(vocab_size=loaded.model.config.vocab_size, hidden_size=96, intermediate_size=192,
                      num_hidden_layers=3, num_attention_heads=6, num_key_value_heads=2, rope_theta=1e6,
                      max_position_embeddings=8192, tie_word_embeddings=True, use_sliding_window=False,
                      eos_token_id=tok.convert_tokens_to_ids("<|im_end|>"), bos_token_id=None)
    model = Qwen2ForCausalLM(cfg).eval().to(DEVICE)
    with torch.no_grad():  # visible biases, so a path that drops them shows up
        for layer in model.model.layers:
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj):
                proj.bias.normal_(0.0, 0.5)
    return LoadedModel(model=model, tokenizer=tok, source="tiny-qwen2")


@pytest.fixture(scope="session", params=ARCHS)
def arch_loaded(request):
    """Each architecture in turn: SmolLM2 (llama) and the tiny random Qwen2."""
    return request.getfixturevalue("loaded" if request.param == "llama" else "tiny_qwen2")


def _engine_factory(loaded_model):
    from codeagent.kvcache.config import KVConfig, ModelConfig
    from codeagent.kvcache.engine import Engine

    def make(model_cfg: ModelConfig | None = None, **kv) -> Engine:
        return Engine(loaded_model, model_cfg or ModelConfig(), KVConfig(**kv))

    return make


@pytest.fixture
def make_engine(loaded):
    """Factory for fresh engines sharing the loaded SmolLM2."""
    return _engine_factory(loaded)


@pytest.fixture
def make_arch_engine(arch_loaded):
    """Factory for fresh engines on each architecture in turn."""
    return _engine_factory(arch_loaded)


def source_ids(tokenizer) -> list[int]:
    """Token ids of real Python source (the stdlib's json.decoder and argparse)."""
    import argparse
    import inspect
    import json.decoder

    src = inspect.getsource(json.decoder) + inspect.getsource(argparse)
    return tokenizer(src, add_special_tokens=False)["input_ids"]


@pytest.fixture(scope="session")
def code_ids(loaded) -> list[int]:
    """Token ids of real Python source in SmolLM2's (and the tiny Qwen2's) vocabulary."""
    return source_ids(loaded.tokenizer)
