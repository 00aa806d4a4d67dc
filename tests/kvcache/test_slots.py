"""The slot table's deferred attention statistics equal folding every forward eagerly."""

from __future__ import annotations

import torch

from codeagent.kvcache.slots import SlotTable


def _eager(stats, hits, last, mass, obs, queries, obs_q, decay, step):
    """The per-forward update as the engine used to apply it on the host."""
    stats["attn_cum"] += mass
    stats["attn_dec"].mul_(decay).add_(mass)
    stats["attn_obs"] = obs / max(obs_q, 1)
    per_slot = mass.mean(dim=(0, 1)) / max(queries, 1)
    hot = per_slot > 1.0 / per_slot.shape[-1]
    hits.mul_(decay).add_(hot.float())
    last[hot] = step


def test_deferred_statistics_equal_eager_updates_across_appends_and_reads():
    torch.manual_seed(0)
    L, H, decay = 3, 2, 0.9
    table = SlotTable(L, H)
    stats = {k: torch.zeros(L, H, 0) for k in ("attn_cum", "attn_dec", "attn_obs")}
    hits, last = torch.zeros(0), torch.zeros(0, dtype=torch.long)
    step = 0
    for rows, reads in [(5, False), (1, False), (1, True), (4, False), (1, False), (1, True), (2, True)]:
        table.extend(rows, pos=torch.arange(len(table), len(table) + rows))
        for k in stats:
            stats[k] = torch.cat([stats[k], torch.zeros(L, H, rows)], dim=2)
        hits, last = torch.cat([hits, torch.zeros(rows)]), torch.cat([last, torch.zeros(rows, dtype=torch.long)])
        n = len(table)
        q = rows
        mass = torch.rand(L, H, n) * q
        obs = torch.rand(L, H, n)
        step += 1
        table.accumulate(mass, obs, q, 2, decay, step)
        _eager(stats, hits, last, mass, obs, q, 2, decay, step)
        if reads:  # a policy reads between forwards: fold, then keep accumulating
            for k in stats:
                assert torch.allclose(table[k], stats[k], atol=1e-5), k
    table.extend(2, pos=torch.arange(len(table), len(table) + 2))  # rows with no forward yet read as zero
    for k in stats:
        assert torch.allclose(table[k][:, :, :-2], stats[k], atol=1e-5), k
        assert not table[k][:, :, -2:].any()
    assert torch.allclose(table["hits"][:-2], hits, atol=1e-5)
    assert torch.equal(table["last_access"][:-2], last)


def test_gather_folds_pending_statistics_first():
    table = SlotTable(1, 1)
    table.extend(4, pos=torch.arange(4))
    mass = torch.tensor([[[1.0, 2.0, 3.0, 4.0]]])
    table.accumulate(mass, mass, 1, 1, 0.5, 1)
    table.gather(torch.tensor([1, 3]))
    assert torch.equal(table["attn_cum"], torch.tensor([[[2.0, 4.0]]]))
    assert len(table) == 2
