"""A rich rendering of the cache map: where along the sequence slots survive, by kind and state."""

from __future__ import annotations

import torch
from rich.console import Group
from rich.table import Table
from rich.text import Text

from codeagent.kvcache.tags import SegmentKind, State

KIND_COLOURS = {
    SegmentKind.SYSTEM: "grey62", SegmentKind.ISSUE: "bright_magenta", SegmentKind.PLAN: "yellow",
    SegmentKind.CODE: "green", SegmentKind.TOOL_CALL: "cyan", SegmentKind.TOOL_OUTPUT: "blue",
    SegmentKind.FILE_VIEW: "bright_green", SegmentKind.TEST_LOG: "bright_blue", SegmentKind.ERROR: "red",
    SegmentKind.TEXT: "white", SegmentKind.TEMPLATE: "grey42",
}
STATE_GLYPHS = {State.PINNED: "█", State.ACTIVE: "▆", State.STAGED: "▄", State.COMMITTED: "▂", State.EVICTABLE: "▁"}
MERGED_GLYPH = "◆"
GONE_GLYPH = "·"


def cache_map(engine, width: int = 96) -> Text:
    """One character per stretch of logical positions: glyph = dominant state of the surviving
    slots (``·`` = everything there was dropped, ``◆`` = mostly merged slots), colour = their kind."""
    t = engine.table
    logical = max(engine.logical, 1)
    width = max(min(width, logical), 1)
    bucket = (t["pos"] * width // logical).clamp(max=width - 1)
    out = Text()
    for b in range(width):
        sel = bucket == b
        if not bool(sel.any()):
            out.append(GONE_GLYPH, style="grey30")
            continue
        kind = SegmentKind(int(torch.mode(t["kind"][sel].long()).values))
        if float((t["count"][sel] > 1).float().mean()) > 0.5:
            glyph = MERGED_GLYPH
        else:
            glyph = STATE_GLYPHS[State(int(torch.mode(t["state"][sel].long()).values))]
        out.append(glyph, style=KIND_COLOURS.get(kind, "white"))
    return out


def kv_gauge(stats, width: int = 30) -> Text:
    """``slots/budget`` bar with bytes."""
    budget = stats.budget_slots
    frac = stats.physical_slots / budget if budget else 1.0
    filled = min(int(round(frac * width)), width)
    style = "green" if frac < 0.8 else "yellow" if frac <= 1.0 else "red"
    text = Text("[")
    text.append("■" * filled, style=style)
    text.append(" " * (width - filled))
    text.append("] ")
    text.append(f"{stats.physical_slots}/{budget if budget else '∞'} slots, {stats.kv_bytes / 1e6:.1f} MB")
    return text


def render_cache(engine, width: int = 96) -> Group:
    """Map, legend, counts (kept/merged/dropped/pinned by state and kind) and the budget gauge."""
    st = engine.stats()
    legend = Text("states: ")
    for s, g in STATE_GLYPHS.items():
        legend.append(f"{g} {s.name.lower()}  ")
    legend.append(f"{MERGED_GLYPH} merged  {GONE_GLYPH} dropped   kinds: ")
    for k, c in KIND_COLOURS.items():
        if st.by_kind.get(k.name.lower()):
            legend.append(f"{k.name.lower()} ", style=c)
    counts = Table(box=None, show_header=True, pad_edge=False)
    for col in ("logical", "slots", "pinned", "merged slots", "tokens merged", "tokens dropped", "commits",
                "compressions"):
        counts.add_column(col, justify="right")
    counts.add_row(str(st.logical_tokens), str(st.physical_slots), str(st.by_state.get("pinned", 0)),
                   str(st.merged_slots), str(st.merges), str(st.drops), str(st.commits), str(st.compressions))
    states = Text("by state: " + ", ".join(f"{k} {v}" for k, v in st.by_state.items() if v))
    kinds = Text("by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(st.by_kind.items(), key=lambda kv: -kv[1])))
    return Group(cache_map(engine, width), legend, counts, states, kinds, kv_gauge(st))
