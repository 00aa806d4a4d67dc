"""kvpress as the peer: its presses compress a context at prefill, then our engine decodes the probe.

kvpress's pipeline prefills the whole context in one forward pass with a forward hook on every
attention layer; the hook (``BasePress.forward_hook``) prunes that layer's cached keys and values
right after the layer ran, so a layer's compression never changes what later layers see. That
makes one prefill enough for every (press, budget): :func:`prefill_with_presses` runs the context
once and, on each layer, hands the press's own ``forward_hook`` a private cache per (press,
budget) holding that layer's full keys and values, which the hook prunes exactly as it would in
kvpress's pipeline (``compression_ratio = 1 - budget``).

``ObservedAttentionPress`` scores keys by the attention weights of the eager implementation,
summed over queries: a ``[heads, T, T]`` matrix per layer (2.4 GB at 8K tokens). Instead, the
per-key column sums are computed here in query chunks from the layer's own queries, keys, scaling
and causal mask (what eager attention computes), and passed as a ``[batch, heads, 1, T]`` tensor:
the press sums over the query axis, so its scores are the same while peak memory stays at one
chunk. A test checks this against kvpress run with eager attention.

:func:`load_into_engine` puts a pruned cache into our engine: one slot-table row per kept entry
with increasing stand-in positions (kvpress prunes per head, so a slot has no single position),
and ``engine.logical`` = the original context length, so the probe's positions continue from the
uncompressed length as in kvpress's ``generate_answer``.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

PRESSES: dict[str, str] = {
    "streaming_llm": "StreamingLLMPress",
    "snapkv": "SnapKVPress",
    "tova": "TOVAPress",
    "knorm": "KnormPress",
    "expected_attention": "ExpectedAttentionPress",
    "observed_attention": "ObservedAttentionPress",
}
"""Peer name -> kvpress press class."""
NEEDS_ATTENTION = frozenset({"observed_attention"})
"""Presses that score from the eager attention weights (``output[1]`` of the attention layer)."""
PREFIX = "kvpress:"
ATTN_CHUNK = 512
"""Queries per chunk when summing attention weights for ObservedAttentionPress."""


def method_name(peer: str) -> str:
    """Row method name of a peer press (``kvpress:snapkv``)."""
    return PREFIX + peer


def unavailable_reason() -> str | None:
    """Why kvpress cannot be used here (None when it can)."""
    if importlib.util.find_spec("kvpress") is None:
        return "kvpress is not installed (pip install 'codeagent[peers]', i.e. kvpress==0.5.5)"
    return None


def import_kvpress() -> Any:
    """Import kvpress and undo its wrapping of our attention function.

    Importing kvpress wraps every attention function registered so far (for head-wise masking,
    which none of our presses uses); the wrapper passes ``dropout`` positionally, which our
    function does not accept, so the wrapped copy of ours is removed again.
    """
    reason = unavailable_reason()
    if reason:
        from codeagent.errors import InputError

        raise InputError(reason)
    import kvpress
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    from codeagent.kvcache.attention import NAME

    if NAME in getattr(ALL_ATTENTION_FUNCTIONS, "_local_mapping", {}):
        del ALL_ATTENTION_FUNCTIONS[NAME]
    return kvpress


def make_press(peer: str, budget: float) -> Any:
    """The kvpress press for ``peer`` keeping ``budget`` of the context (its default settings)."""
    if peer not in PRESSES:
        from codeagent.errors import InputError

        raise InputError(f"unknown peer {peer!r} (known: {', '.join(PRESSES)})")
    if not 0.0 < budget <= 1.0:
        from codeagent.errors import InputError

        raise InputError(f"budget must be in (0, 1], got {budget}")
    kvpress = import_kvpress()
    return getattr(kvpress, PRESSES[peer])(compression_ratio=1.0 - budget)


@dataclass
class PressedCache:
    """One press's pruned cache of one context: per-layer keys and values ``[1, kv_heads, n, d]``."""

    keys: list[torch.Tensor] = field(default_factory=list)
    values: list[torch.Tensor] = field(default_factory=list)
    compress_s: float = 0.0
    error: str | None = None

    @property
    def slots(self) -> int:
        """Entries kept per head."""
        return int(self.keys[0].shape[2]) if self.keys else 0

    def nbytes(self) -> int:
        """Bytes of the kept keys and values over all layers."""
        return sum(t.numel() * t.element_size() for t in (*self.keys, *self.values))


@dataclass
class PeerPrefill:
    """The result of one context prefill under every requested (press, budget)."""

    context_tokens: int
    prefill_s: float
    caches: dict[tuple[str, float], PressedCache]


def _language_model(model) -> Any:
    return model.model.language_model if hasattr(model.model, "language_model") else model.model


def attention_column_sums(module, hidden_states: torch.Tensor, keys: torch.Tensor, position_embeddings,
                          chunk: int = ATTN_CHUNK) -> torch.Tensor:
    """Eager causal attention weights of a full prefill summed over queries: ``[b, heads, 1, T]``.

    Same math as transformers' eager attention (``softmax(q k^T * scaling + causal mask)`` in
    float32) over chunks of ``chunk`` queries, so no ``[heads, T, T]`` matrix exists at once.
    """
    from kvpress.utils import get_prerope_query_states
    from transformers.models.llama.modeling_llama import repeat_kv, rotate_half

    b, kvh, t, d = keys.shape
    heads = module.config.num_attention_heads
    cos, sin = position_embeddings
    k = repeat_kv(keys, heads // kvh)
    out = torch.zeros(b, heads, t, dtype=torch.float32, device=keys.device)
    for s in range(0, t, chunk):
        e = min(s + chunk, t)
        q = get_prerope_query_states(module, hidden_states[:, s:e])
        c, si = cos[:, s:e].unsqueeze(1), sin[:, s:e].unsqueeze(1)
        q = q * c + rotate_half(q) * si
        w = torch.matmul(q, k[:, :, :e].transpose(2, 3)) * module.scaling
        rows = torch.arange(s, e, device=keys.device)[:, None]
        cols = torch.arange(e, device=keys.device)[None, :]
        w = w.masked_fill(cols > rows, torch.finfo(w.dtype).min)
        p = torch.softmax(w, dim=-1, dtype=torch.float32)
        out[:, :, :e] += p.sum(dim=2)
    return out[:, :, None, :].to(keys.dtype)


def prefill_with_presses(model, context_ids: Sequence[int], specs: Sequence[tuple[str, float]],
                         attn_chunk: int = ATTN_CHUNK) -> PeerPrefill:
    """One single-pass prefill of ``context_ids``; every (peer, budget) in ``specs`` gets its own
    pruned cache from the press's own forward hook. A press that fails records its error."""
    import_kvpress()
    from transformers import DynamicCache

    lm = _language_model(model)
    presses = {spec: make_press(*spec) for spec in specs}
    caches = {spec: PressedCache() for spec in specs}
    scratch = {spec: DynamicCache(config=model.config) for spec in specs}
    for press in presses.values():
        press.post_init_from_model(model)
    for layer in lm.layers:
        layer.self_attn.rotary_emb = lm.rotary_emb  # what BasePress.__call__ sets up
    want_attn = any(peer in NEEDS_ATTENTION for peer, _ in specs)

    def hook(module, args, kwargs, output):
        idx = module.layer_idx
        cache = kwargs["past_key_values"]
        keys, values = cache.layers[idx].keys, cache.layers[idx].values
        colsum = None
        if want_attn:
            t0 = time.perf_counter()
            colsum = attention_column_sums(module, kwargs["hidden_states"], keys, kwargs["position_embeddings"],
                                           attn_chunk)
            share = (time.perf_counter() - t0) / sum(1 for p, _ in specs if p in NEEDS_ATTENTION)
            for spec in specs:
                if spec[0] in NEEDS_ATTENTION:
                    caches[spec].compress_s += share
        for spec, press in presses.items():
            pc = caches[spec]
            if pc.error:
                continue
            sc = scratch[spec]
            layer = sc.layers[idx]
            layer.keys, layer.values = keys, values
            layer.dtype, layer.device, layer.is_initialized = keys.dtype, keys.device, True
            out = (output[0], colsum) if spec[0] in NEEDS_ATTENTION else output
            t0 = time.perf_counter()
            try:
                press.forward_hook(module, args, {**kwargs, "past_key_values": sc}, out)
            except Exception as exc:  # one press failing must not stop the others
                pc.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]
                continue
            pc.compress_s += time.perf_counter() - t0
            pc.keys.append(layer.keys)
            pc.values.append(layer.values)
            layer.keys = layer.values = None
        return output

    handles = [layer.self_attn.register_forward_hook(hook, with_kwargs=True) for layer in lm.layers]
    ids = torch.tensor([list(context_ids)], dtype=torch.long, device=model.device)
    t0 = time.perf_counter()
    try:
        with torch.inference_mode():
            lm(input_ids=ids, past_key_values=DynamicCache(config=model.config), use_cache=True)
    finally:
        for h in handles:
            h.remove()
    total = time.perf_counter() - t0
    spent = sum(pc.compress_s for pc in caches.values())
    return PeerPrefill(context_tokens=len(context_ids), prefill_s=max(total - spent, 0.0), caches=caches)


def load_into_engine(engine, pressed: PressedCache, context_tokens: int, segments: int) -> None:
    """Make ``pressed`` the engine's cache: stand-in slot rows, logical length = ``context_tokens``."""
    if pressed.error:
        raise RuntimeError(pressed.error)
    if len(pressed.keys) != engine.n_layers:
        raise RuntimeError(f"pruned cache has {len(pressed.keys)} layers, the model {engine.n_layers}")
    engine.reset()
    for layer, k, v in zip(engine.cache.layers, pressed.keys, pressed.values):
        layer.keys, layer.values = k, v
        layer.dtype, layer.device, layer.is_initialized = k.dtype, k.device, True
    n = pressed.slots
    engine.table.extend(n, pos=torch.arange(n), seg=0)
    engine.logical = context_tokens
    engine.segments = segments
    engine.peak_slots = n

