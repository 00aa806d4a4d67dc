"""kvpress adapter: one prefill prunes like kvpress's own hooks, and the engine decodes from it."""

from __future__ import annotations

import math

import pytest

from codeagent.bench.peers import unavailable_reason

pytestmark = [pytest.mark.model,
              pytest.mark.skipif(unavailable_reason() is not None, reason=unavailable_reason() or "")]


@pytest.fixture(scope="module")
def ids(loaded) -> list[int]:
    import inspect
    import json.decoder

    return loaded.tokenizer(inspect.getsource(json.decoder), add_special_tokens=False)["input_ids"][:256]


def same_entries(a, b, tol: float = 1e-4) -> bool:
    """Whether two pruned key tensors ``[1, heads, n, d]`` hold the same entries (in any order)."""
    import torch

    if a.shape != b.shape:
        return False
    d = torch.cdist(a[0].float(), b[0].float(), compute_mode="donot_use_mm_for_euclid_dist")
    return bool((d.min(dim=-1).values <= tol).all())


def test_one_prefill_prunes_like_kvpress_own_hooks(loaded, make_engine, ids):
    import torch
    from transformers import DynamicCache

    from codeagent.bench import peers

    make_engine()  # registers our attention function, as in a bench run
    model = loaded.model
    specs = [(p, 0.5) for p in peers.PRESSES] + [("snapkv", 0.25)]
    pf = peers.prefill_with_presses(model, ids, specs)
    assert pf.context_tokens == len(ids) and pf.prefill_s > 0
    for peer, budget in specs:
        pressed = pf.caches[(peer, budget)]
        assert pressed.error is None, (peer, pressed.error)
        assert pressed.slots == int(len(ids) * budget)
        ref = DynamicCache(config=model.config)
        eager = peer in peers.NEEDS_ATTENTION
        if eager:
            model.set_attn_implementation("eager")
        try:
            with torch.inference_mode(), peers.make_press(peer, budget)(model):
                model.model(input_ids=torch.tensor([ids]), past_key_values=ref)
        finally:
            model.set_attn_implementation("codeagent")
        # SDPA presses see the very same tensors; the observed-attention sums differ only by rounding
        tol = 1e-4 if eager else 0.0
        for layer, (k, v) in enumerate(zip(pressed.keys, pressed.values)):
            assert same_entries(k, ref.layers[layer].keys, tol), (peer, layer)
            assert same_entries(v, ref.layers[layer].values, tol), (peer, layer)


def test_pruned_cache_decodes_in_the_engine_from_the_original_length(make_engine):
    from codeagent.bench.peers import load_into_engine, prefill_with_presses
    from codeagent.bench.runner import bench_kv_config, context_ids, run_probe

    from tests.bench.test_runner import tiny_tasks

    engine = make_engine(**bench_kv_config("full").model_dump())
    task = tiny_tasks()[0]
    ctx = context_ids(engine, task)
    pf = prefill_with_presses(engine.model, ctx, [("knorm", 0.5), ("streaming_llm", 0.25)])
    load_into_engine(engine, pf.caches[("knorm", 0.5)], pf.context_tokens, len(task.segments))
    assert engine.logical == len(ctx) and len(engine.table) == len(ctx) // 2
    assert engine.kv_bytes() == len(engine.table) * engine.bytes_per_slot()
    start = len(engine.table)
    res = run_probe(engine, task)
    assert engine.table["pos"][start].item() == len(ctx)  # the probe continues from the original length
    assert math.isfinite(res.mean_logprob) and 0.0 <= res.top1 <= 1.0 and res.generated


def test_runner_rows_for_presses(make_engine):
    from codeagent.bench.runner import GridSpec, TaskRunner, bench_kv_config

    from tests.bench.test_runner import tiny_tasks

    engine = make_engine(**bench_kv_config("full").model_dump())
    task = tiny_tasks()[1]
    runner = TaskRunner(engine, GridSpec((), (0.5,), ("streaming_llm", "tova")))
    rows = list(runner.run(task, [("kvpress:streaming_llm", 0.5), ("kvpress:tova", 0.5)]))
    assert [r.method for r in rows] == ["kvpress:streaming_llm", "kvpress:tova"]
    for r in rows:
        assert r.error is None, r.error
        assert r.kv_slots == int(r.n_context_tokens * 0.5) and r.top1 is not None and r.compress_s is not None
    # the engine's own attention still works after kvpress was imported
    engine.reset()
    engine.append_message("user", "still fine?")
    assert engine.logical > 0
