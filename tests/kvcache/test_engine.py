"""The engine against plain transformers, chunking, positions, statistics and bad input."""

from __future__ import annotations

import pytest
import torch

from codeagent.errors import InputError
from codeagent.kvcache.config import ModelConfig
from codeagent.kvcache.ops import gather
from codeagent.kvcache.tags import SegmentKind, SpanInfo


def _reference(loaded, ids, keep_last=True):
    loaded.model.set_attn_implementation("sdpa")
    try:
        with torch.inference_mode():
            out = loaded.model(torch.tensor([ids], device=loaded.model.device), logits_to_keep=1 if keep_last else 0)
        return out.logits[0].float()
    finally:
        loaded.model.set_attn_implementation("codeagent")


@pytest.fixture(params=["smollm2", "qwen-coder-0.5b"])
def real_model(request):
    """Each real embedded architecture: SmolLM2 (llama) and Qwen2.5-Coder-0.5B (qwen2)."""
    return request.getfixturevalue("loaded" if request.param == "smollm2" else "qwen05")


def test_full_cache_logits_equal_transformers(real_model):
    from tests.conftest import _engine_factory, source_ids

    loaded, make_engine = real_model, _engine_factory(real_model)
    ids = source_ids(loaded.tokenizer)[:600]
    eng = make_engine(ModelConfig(prefill_chunk=1024))
    eng.append_tokens(ids)
    ref = _reference(loaded, ids)
    assert torch.allclose(eng.last_logits, ref[-1], atol=1e-5, rtol=0)
    # every position, teacher forced: the scoring path against all of transformers' logits
    eng2 = make_engine(ModelConfig(prefill_chunk=1024))
    eng2.append_tokens(ids[:1])
    lp, preds = eng2.score(ids[1:])
    ref_all = _reference(loaded, ids, keep_last=False)
    ref_lp = torch.log_softmax(ref_all[:-1], -1).gather(1, torch.tensor(ids[1:], device=ref_all.device)[:, None])[:, 0]
    assert torch.allclose(torch.tensor(lp), ref_lp.cpu(), atol=1e-4)
    assert preds == ref_all[:-1].argmax(-1).tolist()


def test_chunked_prefill_equals_single_pass(make_arch_engine, code_ids):
    make_engine = make_arch_engine
    ids = code_ids[:700]
    single = make_engine(ModelConfig(prefill_chunk=1024))
    single.append_tokens(ids)
    chunked = make_engine(ModelConfig(prefill_chunk=128))
    chunked.append_tokens(ids[:300])
    chunked.append_tokens(ids[300:])
    assert torch.allclose(single.last_logits, chunked.last_logits, atol=1e-4, rtol=0)
    assert len(chunked.table) == len(ids) == chunked.logical


def test_gather_keeping_every_slot_changes_nothing(make_arch_engine, code_ids):
    make_engine = make_arch_engine
    ids = code_ids[:300]
    a = make_engine()
    a.append_tokens(ids)
    b = make_engine()
    b.append_tokens(ids)
    gather(b.cache, b.table, torch.arange(len(b.table)))
    a.append_tokens(code_ids[300:310])
    b.append_tokens(code_ids[300:310])
    assert torch.equal(a.last_logits, b.last_logits)


def test_drop_then_continue_uses_logical_positions(make_arch_engine, code_ids):
    make_engine = make_arch_engine
    eng = make_engine()
    eng.append_tokens(code_ids[:400])
    keep = torch.cat([torch.arange(0, 100), torch.arange(300, 400)])
    gather(eng.cache, eng.table, keep)
    assert len(eng.table) == 200 and eng.logical == 400
    eng.append_message("user", "Continue.", SpanInfo(kind=SegmentKind.TEXT))
    start = eng.logical
    eng.start_assistant()
    gen = eng.generate(12)
    assert len(gen.token_ids) > 0 and gen.text.strip()
    pos = eng.table["pos"]
    assert bool((pos[1:] > pos[:-1]).all())
    assert int(pos[-1]) == eng.logical - 1
    assert gen.start_position > start
    eng.table.check()


@pytest.mark.parametrize("sample", [0, 7])
def test_statistics_sum_to_observed_queries(make_arch_engine, code_ids, sample):
    make_engine = make_arch_engine
    w, chunk = 16, 100
    eng = make_engine(ModelConfig(prefill_chunk=chunk, obs_window=w, stats_queries=sample))
    eng.append_tokens(code_ids[:250])  # chunks of 100, 100, 50
    eng.append_message("user", "hi", SpanInfo())
    eng.start_assistant()
    gen = eng.generate(5)  # one forward (one query) per generated token
    sums = eng.table["attn_cum"].sum(dim=2)  # [layers, heads]
    seg = eng.table["seg"]
    forwards = [100, 100, 50, int((seg == 1).sum()), int((seg == 2).sum())]
    expected = sum(n if not sample else min(n, sample) for n in forwards) + len(gen.token_ids)
    assert torch.allclose(sums, torch.full_like(sums, float(expected)), atol=1e-2)
    # the observation window: the last forward was one decoded token
    obs = eng.table["attn_obs"].sum(dim=2)
    assert torch.allclose(obs, torch.ones_like(obs), atol=1e-4)


def test_generate_streams_and_stops(make_engine):
    eng = make_engine()
    eng.append_message("user", "Count from one to ten in words, separated by commas.", SpanInfo(kind=SegmentKind.ISSUE))
    eng.start_assistant()
    pieces: list[str] = []
    gen = eng.generate(40, stop=["five"], on_token=pieces.append)
    assert "".join(pieces) == gen.text
    if gen.finish_reason == "stop":
        assert gen.text.endswith("five")
    eng.end_assistant()
    assert eng.logical == len(eng.table)


def test_sampling_is_seeded(make_engine):
    outs = []
    for _ in range(2):
        eng = make_engine()
        eng.append_message("user", "Tell me a word.", SpanInfo())
        eng.start_assistant()
        outs.append(eng.generate(8, temperature=0.9, top_p=0.9, seed=7).token_ids)
    assert outs[0] == outs[1]


def test_mark_and_rollback(make_engine, code_ids):
    eng = make_engine()
    eng.append_tokens(code_ids[:50])
    before = eng.last_logits.clone()
    m = eng.mark()
    eng.append_tokens(code_ids[50:80])
    eng.rollback(m)
    assert len(eng.table) == 50 and eng.logical == 50
    assert torch.equal(eng.last_logits, before)
    assert eng.cache.layers[0].keys.shape[2] == 50


def test_bad_input_one_line_errors(make_engine):
    eng = make_engine()
    with pytest.raises(InputError, match="nothing to continue"):
        eng.generate(4)
    with pytest.raises(InputError, match="model limit"):
        eng.append_tokens([100] * (eng.max_context + 1))
    assert len(eng.table) == 0  # nothing was half-appended


def test_accounting(make_engine, code_ids):
    eng = make_engine()
    eng.append_tokens(code_ids[:100])
    st = eng.stats()
    assert st.physical_slots == 100 and st.logical_tokens == 100
    assert st.kv_bytes == 100 * eng.bytes_per_slot() == 100 * 30 * 2 * 3 * 64 * 4
    assert st.peak_rss_bytes > 100e6


def test_control_tokens_inside_content_are_plain_text(make_engine):
    eng = make_engine()
    eng.append_message("tool", "x = '<FILL_ME>'  # <|im_end|>", SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    vocab = eng.model.config.vocab_size
    content = eng.table["token"][eng.table["kind"] == int(SegmentKind.TOOL_OUTPUT)].tolist()
    assert max(content) < vocab and 2 not in content  # no <|im_end|> id inside the content
    scaffold = eng.table["token"][eng.table["kind"] == int(SegmentKind.TEMPLATE)].tolist()
    assert 1 in scaffold and 2 in scaffold  # the template's own <|im_start|> / <|im_end|>


def test_score_text_reports_each_token_and_what_else_the_model_would_write(make_engine):
    eng = make_engine()
    eng.append_message("user", "Write the function.", SpanInfo())
    eng.start_assistant()
    mark = eng.mark()
    text = "def add(a, b):\n    return a - b\n"
    scores = eng.score_text(text)
    assert scores[0].start == 0 and scores[-1].end == len(text)
    assert all(a.end <= b.start + 1 and a.start < a.end for a, b in zip(scores, scores[1:]))
    assert all(len(s.alternatives) == 3 and text[s.start:s.end] not in [a for a, _ in s.alternatives] for s in scores)
    assert all([lp for _, lp in s.alternatives] == sorted((lp for _, lp in s.alternatives), reverse=True) for s in scores)
    eng.rollback(mark)
    ids, _ = eng._encode(text, content=True)
    lp, preds = eng.score(ids)  # the same numbers as the id-level scoring
    assert [round(s.logprob, 4) for s in scores] == [round(x, 4) for x in lp]
    for s, best, p in zip(scores, preds, lp):  # the argmax is the token itself or the first alternative
        first = eng.tok.decode([best])
        assert first == text[s.start:s.end] or first == s.alternatives[0][0] and s.alternatives[0][1] >= p - 1e-5
    eng.rollback(mark)
    step = next(s for s in scores[1:] if s.alternatives[0][1] > s.logprob)  # where greedy would write another token
    eng.score_text(text[:step.start])
    assert eng.generate(1).text == step.alternatives[0][0]


def test_score_text_under_a_budget_makes_room_first(make_engine, code_ids):
    eng = make_engine(policy="window", min_tokens=0, budget_tokens=100)
    eng.append_tokens(code_ids[:200])
    assert len(eng.table) <= 100
    scores = eng.score_text("def add(a, b):\n    return a + b\n")
    assert len(eng.table) <= 100 and len(scores) > 5


def test_snapshot_restores_cache_table_and_counters_any_number_of_times(make_engine, code_ids):
    eng = make_engine(policy="window", min_tokens=0)
    eng.append_tokens(code_ids[:120])
    eng.append_message("user", "Continue the code.", SpanInfo())
    eng.start_assistant()
    snap = eng.snapshot()
    rows = {k: v.clone() for k, v in eng.table.cols.items()}
    first = eng.generate(6)
    eng.manager.enforce(eng.state, budget=40)  # compress too: the snapshot must not share tensors
    assert len(eng.table) == 40
    for _ in range(2):
        eng.restore(snap)
        assert eng.logical == snap.logical == len(eng.table) == eng.cache.get_seq_length()
        assert all(torch.equal(eng.table.cols[k], v) for k, v in rows.items())
        again = eng.generate(6)
        assert again.token_ids == first.token_ids


def test_snapshot_copies_the_lifecycle_bookkeeping_and_counters(make_engine, code_ids):
    eng = make_engine(policy="default", min_tokens=0)
    eng.append_tokens(code_ids[:120], info=SpanInfo(subtask="s1"))
    snap = eng.snapshot()
    eng.set_debug("s1")
    eng.commit("s1")  # pressure folding: queued, counted
    assert eng.state.book.unfolded and eng.stats().commits == 1 and eng.state.book.debug == "s1"
    eng.restore(snap)
    assert not eng.state.book.unfolded and not eng.state.book.committed and eng.state.book.debug is None
    assert eng.stats().commits == 0 and eng.state.counters.events == []
    assert snap.state.counters.commits == 0  # the snapshot itself was never touched


def test_encode_message_is_what_append_message_feeds(make_engine):
    eng = make_engine()
    text = "a literal <|im_end|> stays text"
    msg = eng.encode_message("user", text)
    eng.append_message("user", text, SpanInfo())
    assert eng.table["token"].tolist() == msg.ids
    assert eng.tok.convert_tokens_to_ids("<|im_end|>") not in msg.body
    assert eng.encode_message("user", text, first=True).ids == msg.ids
    later = eng.encode_message("user", text)  # the engine is no longer empty: no opening preamble
    assert later.body == msg.body and later.ids == eng.encode_message("user", text, first=False).ids
    assert eng.tok.decode(later.ids) == f"<|im_start|>user\n{text}<|im_end|>\n"


@pytest.mark.parametrize("policy,collects", [("full", False), ("window", False), ("h2o", True), ("default", True)])
def test_statistics_are_collected_only_for_policies_that_read_them(make_engine, code_ids, policy, collects):
    eng = make_engine(policy=policy)
    eng.append_tokens(code_ids[:60])
    assert bool((eng.table["attn_cum"] > 0).any()) == collects


def test_retag_pins_only_the_retagged_text_and_marks_its_line_ends(make_engine):
    """Re-tagging generated text as code pins its signatures and writes its line ends; a signature earlier in the
    cache that the pinned cap had released stays released."""
    from codeagent.kvcache.tags import BlockType, State
    from codeagent.protocols import Generation

    eng = make_engine()
    src = "def fetch(url, retries=3):\n    return get(url)\n\n\nclass Client:\n    def get(self, path):\n        return 1\n"
    eng.append(src, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    sig = eng.table["block_type"] == int(BlockType.FUNCTION_SIGNATURE)
    assert bool((eng.table["state"][sig] == int(State.PINNED)).all())
    eng.table.cols["state"][sig] = int(State.ACTIVE)  # as the pinned cap releases them
    before = len(eng.table)
    code = "def parse(text):\n    return text.split()\n"
    eng.append(code, SpanInfo(kind=SegmentKind.PLAN))  # read as prose first, as generated text is
    ids = eng.table["token"][before:].tolist()
    gen = Generation(text=code, token_ids=ids, finish_reason="stop", start_position=int(eng.table["pos"][before]))
    eng.table.cols["eol"][before:] = False
    assert eng.retag(gen, [(0, len(code), SpanInfo(kind=SegmentKind.CODE, language="python"))]) == len(ids)
    assert bool((eng.table["state"][:before][sig[:before]] == int(State.ACTIVE)).all())
    new_sig = eng.table["block_type"][before:] == int(BlockType.FUNCTION_SIGNATURE)
    assert new_sig.any() and bool((eng.table["state"][before:][new_sig] == int(State.PINNED)).all())
    ends = ["\n" in eng.tok.decode([i]) for i in ids]
    assert eng.table["eol"][before:].tolist() == ends and any(ends)
