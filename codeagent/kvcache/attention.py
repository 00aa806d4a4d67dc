"""The registered attention function: log(n) bias for merged slots and per-slot statistics.

Registered as ``"codeagent"`` in transformers' ``AttentionInterface`` together with the matching
``AttentionMaskInterface`` entry (the SDPA mask builder), so chunks fed after a cached prefix get
a correct causal mask. The engine passes an :class:`AttentionContext` through the model's kwargs;
without one the function behaves exactly like SDPA attention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

NAME = "codeagent"


@dataclass
class AttentionContext:
    """Per-forward inputs and outputs of the attention hook.

    ``log_count`` is ``log(n)`` per physical slot (covering the new tokens too), or None when no
    slot is merged. ``mass[layer]`` receives the attention each slot drew from the last ``window``
    queries, summed over those queries: a ``[heads, slots]`` tensor.
    """

    log_count: torch.Tensor | None
    window: int
    collect: bool = True
    mass: dict[int, torch.Tensor] = field(default_factory=dict)
    queries: int = 0  # observed queries per head in this forward


def _causal_bool(q: int, t: int, device: torch.device) -> torch.Tensor:
    """Bottom-right aligned causal mask [q, t]: query i sees keys 0..t-q+i."""
    rows = torch.arange(q, device=device).unsqueeze(1) + (t - q)
    cols = torch.arange(t, device=device).unsqueeze(0)
    return cols <= rows


def _float_mask(mask: torch.Tensor | None, q: int, t: int, bias: torch.Tensor | None, dtype, device) -> torch.Tensor | None:
    """Additive [1|B, 1, q, t] mask combining causality (given or built) with the log(n) bias."""
    if mask is None and bias is None:
        return None
    if mask is None:
        allowed = _causal_bool(q, t, device) if q > 1 else torch.ones(1, t, dtype=torch.bool, device=device)
        mask = allowed[None, None]
    if mask.dtype == torch.bool:
        out = torch.zeros(mask.shape, dtype=dtype, device=device).masked_fill_(~mask, torch.finfo(dtype).min)
    else:
        out = mask.to(dtype)
    if bias is not None:
        out = out + bias.to(dtype)[None, None, None, :]
    return out


def codeagent_attention(
    module: torch.nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs,
) -> tuple[torch.Tensor, None]:
    """SDPA attention plus the merged-slot bias and the observation-window statistics."""
    ctx: AttentionContext | None = kwargs.get("codeagent")
    b, hq, q, d = query.shape
    t = key.shape[2]
    scale = scaling if scaling is not None else 1.0 / math.sqrt(d)
    bias = ctx.log_count if ctx is not None else None
    gqa = hq != key.shape[1]

    if bias is None:
        # nothing merged: exactly transformers' SDPA path (same kernels, same rounding)
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        out, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scale,
                                        **{k: v for k, v in kwargs.items() if k != "codeagent"})
    else:
        fmask = _float_mask(attention_mask, q, t, bias, query.dtype, query.device)
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=fmask, scale=scale, enable_gqa=gqa)
        out = out.transpose(1, 2).contiguous()

    if ctx is not None and ctx.collect:
        w = min(ctx.window, q)
        hkv = key.shape[1]
        groups = hq // hkv
        # grouped heads share a key head: score them against it without copying the keys
        qs = query[:, :, q - w :, :].reshape(b, hkv, groups * w, d)
        scores = torch.matmul(qs, key.transpose(-1, -2)).view(b, hq, w, t) * scale  # [b, hq, w, t]
        allowed = _causal_bool(q, t, query.device)[q - w :]  # [w, t]
        scores = scores.masked_fill(~allowed, float("-inf"))
        if bias is not None:
            scores = scores + bias.to(scores.dtype)
        probs = torch.softmax(scores.float(), dim=-1)
        ctx.mass[module.layer_idx] = probs.sum(dim=2)[0]  # [hq, t]
        ctx.queries = w
    return out, None


_registered = False


def register() -> str:
    """Register the attention function and its mask builder once; returns the implementation name."""
    global _registered
    if not _registered:
        from transformers import AttentionInterface
        from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

        AttentionInterface.register(NAME, codeagent_attention)
        AttentionMaskInterface.register(NAME, sdpa_mask)
        _registered = True
    return NAME
