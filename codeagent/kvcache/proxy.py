"""The learned semantic proxy (CodeComp's "代理网络"): a small MLP over per-slot features.

It predicts, from what the slot table already holds (structure tags, lifecycle state, age and the attention
statistics), how much attention a slot will draw from the tokens that come next. It is trained offline on the
bench's design sessions (``scripts/train_proxy.py``): the label is the attention the probe's target draws under
the full cache. The weights ship as a small JSON file next to this module.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import torch

from codeagent.kvcache.scoring import observed, rank01
from codeagent.kvcache.slots import line_numbers
from codeagent.kvcache.tags import BlockType, SegmentKind, State
from codeagent.kvcache.view import CacheView

WEIGHTS = Path(__file__).with_name("proxy_weights.json")
"""The shipped weights (written by ``scripts/train_proxy.py``)."""

_STATS = ("dec", "cum", "obs", "obs_pool", "obs_line", "obs_headmax", "hits")
FEATURES: tuple[str, ...] = (
    *(f"block_{b.name.lower()}" for b in BlockType),
    *(f"kind_{k.name.lower()}" for k in SegmentKind),
    *(f"state_{s.name.lower()}" for s in State),
    "depth", "boundary", "eol", "protect", "defines", "merged", "age", "log_age",
    *(f"rank_{s}" for s in _STATS),
)
"""Feature names, in column order."""


def _onehot(col: torch.Tensor, size: int) -> torch.Tensor:
    return torch.nn.functional.one_hot(col.long().clamp(0, size - 1), size).float()


def _line_max(values: torch.Tensor, eol: torch.Tensor) -> torch.Tensor:
    """Per slot, the largest value on its line (lines end at ``eol`` slots)."""
    line = line_numbers(eol)
    out = torch.zeros(int(line[-1]) + 1 if len(line) else 0).scatter_reduce(0, line, values, "amax",
                                                                            include_self=False)
    return out[line]


def features(view: CacheView) -> torch.Tensor:
    """``[slots, len(FEATURES)]`` features of every slot in ``view``."""
    t = view.table
    n = len(view)
    if n == 0:
        return torch.zeros(0, len(FEATURES))
    age = (view.logical - t["pos"]).float().clamp(min=0)
    obs = t["attn_obs"].mean(dim=0)  # [heads, slots]
    obs_mean = obs.mean(dim=0)
    stats = {
        "dec": view.attention("attn_dec"),
        "cum": view.attention("attn_cum"),
        "obs": obs_mean,
        "obs_pool": observed(view, 7),
        "obs_line": _line_max(obs_mean, t["eol"]),
        "obs_headmax": obs.max(dim=0).values,
        "hits": t["hits"],
    }
    cols = [
        _onehot(t["block_type"], len(BlockType)),
        _onehot(t["kind"], len(SegmentKind)),
        _onehot(t["state"], len(State)),
        torch.stack([
            (t["depth"].float().clamp(min=0) / 8).clamp(max=1),
            t["boundary"].float(),
            t["eol"].float(),
            (t["protect"] | t["named"]).float(),  # trained when a named definition was a protected span
            (t["name"] >= 0).float(),
            (t["count"] > 1).float(),
            age / max(view.logical, 1),
            torch.log1p(age) / torch.log1p(torch.tensor(float(max(view.logical, 1)))),
        ], dim=1),
        torch.stack([rank01(stats[s], stable=True) for s in _STATS], dim=1),
    ]
    return torch.cat(cols, dim=1)


@dataclass
class Proxy:
    """A two-layer MLP: features -> hidden (ReLU) -> one score."""

    w1: torch.Tensor
    b1: torch.Tensor
    w2: torch.Tensor
    b2: torch.Tensor
    names: tuple[str, ...]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2

    def predict(self, view: CacheView) -> torch.Tensor:
        """Predicted attention rank of every slot, ``[slots]``."""
        if self.names != FEATURES:
            raise ValueError("proxy weights were trained on other features: retrain with scripts/train_proxy.py")
        return self(features(view))

    def to_json(self) -> dict:
        r = lambda x: [round(v, 5) for v in x.flatten().tolist()]  # noqa: E731
        return {"features": list(self.names), "hidden": int(self.b1.numel()),
                "w1": r(self.w1), "b1": r(self.b1), "w2": r(self.w2), "b2": r(self.b2)}

    @classmethod
    def from_json(cls, d: dict) -> "Proxy":
        f, h = len(d["features"]), int(d["hidden"])
        return cls(torch.tensor(d["w1"]).view(f, h), torch.tensor(d["b1"]), torch.tensor(d["w2"]).view(h),
                   torch.tensor(d["b2"]).view(()), tuple(d["features"]))


@lru_cache(maxsize=1)
def shipped() -> Proxy:
    """The shipped proxy (loaded once)."""
    try:
        return Proxy.from_json(json.loads(WEIGHTS.read_text()))
    except (OSError, ValueError, KeyError) as exc:
        raise RuntimeError(f"cannot read the semantic proxy's weights {WEIGHTS}: {exc}") from exc
