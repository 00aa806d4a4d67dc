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
    slot is merged. ``mass[layer]`` receives the attention each slot drew from the sampled queries
    (``sample`` of them spread evenly over the forward, all when 0 or more than there are), summed
    over them; ``obs[layer]`` the same from the last ``window`` queries (SnapKV's observation
    window). Both are ``[heads, slots]``.
    """

    log_count: torch.Tensor | None
    window: int
    sample: int = 0
    collect: bool = True
    mass: dict[int, torch.Tensor] = field(default_factory=dict)
    obs: dict[int, torch.Tensor] = field(default_factory=dict)
    queries: int = 0  # sampled queries per head in this forward
    obs_queries: int = 0  # observation-window queries per head in this forward
    _rows: dict[int, tuple[torch.Tensor, torch.Tensor]] = field(default_factory=dict, repr=False)

    def rows(self, q: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Query rows to score for a forward of ``q`` queries, and which of them are sampled
        (computed once per forward, shared by every layer)."""
        if q not in self._rows:
            w = min(self.window, q)
            n = q if self.sample <= 0 else min(self.sample, q)
            sampled = torch.unique(torch.linspace(q - 1, 0, n).round().long()) if n < q else torch.arange(q)
            rows = torch.unique(torch.cat([sampled, torch.arange(q - w, q)]))
            self._rows[q] = (rows, torch.isin(rows, sampled))
        return self._rows[q]


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


STATS_BLOCK = 128
"""Queries scored at a time for the statistics, so memory stays ``[heads, STATS_BLOCK, slots]``."""


def _slot_mass(query: torch.Tensor, key: torch.Tensor, ctx: AttentionContext, scale: float,
               bias: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Attention each key slot draws, summed over the sampled and over the window queries: ``[heads, slots]`` each."""
    b, hq, q, d = query.shape
    t = key.shape[2]
    hkv = key.shape[1]
    groups = hq // hkv
    keys_t = key.transpose(-1, -2)
    rows, is_sampled = ctx.rows(q)
    every = bool(is_sampled.all())
    first_obs = rows.numel() - min(ctx.window, q)  # window rows are the last ones (rows are sorted)
    mass = torch.zeros(hq, t, dtype=torch.float32, device=query.device)
    obs = torch.zeros(hq, t, dtype=torch.float32, device=query.device)
    new_cols = torch.arange(t - q, t, device=query.device)  # only the chunk's own keys can lie in the future
    for lo in range(0, rows.numel(), STATS_BLOCK):
        r = rows[lo:lo + STATS_BLOCK].to(query.device)
        n = r.numel()
        # grouped heads share a key head: score them against it without copying the keys
        qs = (query[:, :, lo:lo + n, :] if every else query[:, :, r, :]).reshape(b, hkv, groups * n, d) * scale
        scores = torch.matmul(qs, keys_t).view(hq, n, t)
        scores[:, :, t - q:].masked_fill_(new_cols[None, :] > (r + (t - q))[:, None], float("-inf"))
        if bias is not None:
            scores += bias.to(scores.dtype)
        probs = torch.softmax(scores.float(), dim=-1)  # [hq, n, t]
        mass += probs.sum(dim=1) if every else probs[:, is_sampled[lo:lo + n].to(query.device)].sum(dim=1)
        if lo + n > first_obs:
            obs += probs[:, max(first_obs - lo, 0):].sum(dim=1)
    return mass, obs, int(is_sampled.sum()), rows.numel() - first_obs


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
    if bias is not None and bias.device != query.device:
        bias = bias.to(query.device)
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
        mass, obs, ctx.queries, ctx.obs_queries = _slot_mass(query, key, ctx, scale, bias)
        ctx.mass[module.layer_idx] = mass
        ctx.obs[module.layer_idx] = obs
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
