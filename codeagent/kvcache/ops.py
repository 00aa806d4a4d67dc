"""The two tensor ops on the managed cache: gather (keep a subset) and merge (weighted average).

Both are applied to every layer's keys and values and to the slot table in one call, so the
tensors and the table cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from codeagent.kvcache.slots import SlotTable
from codeagent.protocols import CompressionPlan


@dataclass
class ApplyResult:
    """What applying a plan did."""

    before: int
    after: int
    dropped: int  # slots removed without a trace
    merged: int  # slots folded into merged slots (a group of k slots counts k)
    groups: int  # merged slots created


def _layers(cache) -> list:
    return list(cache.layers)


def gather(cache, table: SlotTable, idx: torch.Tensor) -> None:
    """Keep slots ``idx`` (ascending) in every layer and in the table."""
    for layer in _layers(cache):
        on = idx.to(layer.keys.device)
        layer.keys = layer.keys.index_select(2, on)
        layer.values = layer.values.index_select(2, on)
    table.gather(idx)


def apply_plan(cache, table: SlotTable, plan: CompressionPlan) -> ApplyResult:
    """Apply ``plan``: keep its slots, merge each group into one slot, drop the rest.

    Merged keys/values are the weighted average of the members (weights normalised per group);
    the merged slot takes the logical position of the group's last member and a count equal to
    the sum of the members' counts. Rows end sorted by logical position.
    """
    n = len(table)
    keep = torch.as_tensor(sorted(set(int(i) for i in plan.keep)), dtype=torch.long)
    groups = [(list(map(int, m)), list(map(float, w))) for m, w in plan.merge if len(m) > 0]
    seen = torch.zeros(n, dtype=torch.bool)
    if keep.numel():
        if int(keep.min()) < 0 or int(keep.max()) >= n:
            raise ValueError("plan keeps a slot outside the cache")
        seen[keep] = True
    members_l: list[int] = []
    group_l: list[int] = []
    weight_l: list[float] = []
    for g, (members, weights) in enumerate(groups):
        if len(weights) != len(members):
            raise ValueError("merge group with mismatched weights")
        total = sum(max(w, 0.0) for w in weights) or float(len(members))
        for m, w in zip(members, weights):
            if m < 0 or m >= n or seen[m]:
                raise ValueError(f"slot {m} is kept or merged twice, or outside the cache")
            seen[m] = True
            members_l.append(m)
            group_l.append(g)
            weight_l.append((max(w, 0.0) if total else 1.0) / total)
    if not groups:
        if keep.numel() == n:
            return ApplyResult(n, n, 0, 0, 0)
        gather(cache, table, keep)
        return ApplyResult(n, len(table), n - keep.numel(), 0, 0)

    members = torch.tensor(members_l, dtype=torch.long)
    group = torch.tensor(group_l, dtype=torch.long)
    weight = torch.tensor(weight_l, dtype=torch.float32)
    n_groups = len(groups)
    pos = table["pos"]
    # representative: highest-weight member; last: member with the highest logical position
    rep = torch.empty(n_groups, dtype=torch.long)
    last = torch.empty(n_groups, dtype=torch.long)
    for g, (ms, ws) in enumerate(groups):
        rep[g] = ms[max(range(len(ms)), key=lambda i: ws[i])]
        last[g] = max(ms, key=lambda m: int(pos[m]))
    merged_rows = table.merged_rows(members, group, rep, last, n_groups)
    new_pos = torch.cat([pos.index_select(0, keep), merged_rows["pos"]])
    order = torch.argsort(new_pos)
    for layer in _layers(cache):
        for attr in ("keys", "values"):
            t = getattr(layer, attr)
            w = weight.to(t.dtype)[None, None, :, None]
            m = torch.zeros(t.shape[0], t.shape[1], n_groups, t.shape[3], dtype=t.dtype, device=t.device)
            m.index_add_(2, group.to(t.device), t.index_select(2, members.to(t.device)) * w.to(t.device))
            setattr(layer, attr, torch.cat([t.index_select(2, keep.to(t.device)), m], dim=2).index_select(2, order.to(t.device)))
    table.replace(keep, merged_rows, order)
    return ApplyResult(n, len(table), n - keep.numel() - members.numel(), members.numel(), n_groups)
