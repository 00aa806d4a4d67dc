"""What people see: a rich live view of a run (or plain lines when output is not a terminal) and the report."""

from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from codeagent.agent.listener import Listener
from codeagent.agent.trajectory import ResultRecord
from codeagent.protocols import KVStats, Observation

PHASES = ("reproduce", "localize", "repair", "debug", "verify")
"""The phases of solve in order: the display's "step k of n"."""

STATE_STYLE = {"pinned": "magenta", "active": "green", "staged": "yellow", "committed": "blue",
               "evictable": "red"}


def kv_gauge(stats: KVStats, width: int = 40) -> Text:
    """A bar of the cache's slots by lifecycle state against the budget, then the numbers."""
    total = stats.budget_slots or max(stats.physical_slots, 1)
    bar = Text()
    used = 0
    for state, style in STATE_STYLE.items():
        n = stats.by_state.get(state, 0)
        cells = round(width * n / total) if total else 0
        cells = min(cells, width - used)
        bar.append("█" * cells, style=style)
        used += cells
    bar.append("░" * max(width - used, 0), style="dim")
    mb = stats.kv_bytes / 1e6
    per = stats.kv_bytes / max(stats.physical_slots, 1)
    budget = f"/{stats.budget_slots}" if stats.budget_slots else ""
    budget_mb = f" / {per * stats.budget_slots / 1e6:.0f} MB" if stats.budget_slots else ""
    bar.append(f" {stats.physical_slots}{budget} slots · {mb:.1f} MB{budget_mb} · logical {stats.logical_tokens}"
               f" · commits {stats.commits} merges {stats.merges} drops {stats.drops}")
    return bar


def obs_line(obs: Observation) -> str:
    """``"ok: first line"`` or ``"error: first line"`` of a tool's result, the word "error" said once."""
    first = obs.text.strip().splitlines()[0][:100] if obs.text.strip() else ""
    flag = "ok" if obs.ok else "error"
    while first.lower().startswith(f"{flag}:"):
        first = first[len(flag) + 1:].lstrip()
    return f"{flag}: {first}" if first else flag


def kv_legend() -> Text:
    """Which colour is which lifecycle state."""
    t = Text("  ")
    for state, style in STATE_STYLE.items():
        t.append("█ ", style=style)
        t.append(f"{state}  ", style="dim")
    return t


class LiveDisplay(Listener):
    """Phase, plan, tool calls, streaming output and a KV gauge; plain lines when ``live`` is false."""

    def __init__(self, console: Console | None = None, live: bool | None = None, title: str = "codeagent") -> None:
        self.con = console or Console(stderr=True)
        self.live_mode = self.con.is_terminal if live is None else live
        self.title = title
        self.phase_text = "starting"
        self.steps: list[str] = []
        self.step = 0
        self.ended: dict[int, str] = {}
        self.calls: list[str] = []
        self.stream = ""
        self.stats: KVStats | None = None
        self.notes: list[str] = []
        self.t0 = time.monotonic()
        self.label = ""
        self.gen_tokens = 0
        self.gen_t0 = self.gen_last = 0.0
        self.total_tokens = 0
        self._live: Live | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> LiveDisplay:
        if self.live_mode:
            # get_renderable: the refresh thread renders afresh 4 times a second, so the clock ticks between events
            self._live = Live(console=self.con, refresh_per_second=4, transient=False, get_renderable=self._render)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(None, None, None)
            self._live = None

    def _refresh(self) -> None:
        if self._live is not None:
            self._live.update(self._render())

    def _line(self, text: str, style: str = "") -> None:
        if not self.live_mode:
            self.con.print(text, style=style or None, markup=False, highlight=False, soft_wrap=True)

    def rate(self) -> float:
        """Tokens per second of the latest reply, up to its latest token (0 before its first)."""
        took = self.gen_last - self.gen_t0
        return self.gen_tokens / took if self.gen_tokens and took > 0 else 0.0

    def status_line(self, now: float | None = None) -> str:
        """``"1m05s · candidate 2: 57 tokens, 2.3 tok/s · 140 tokens in all"``: clock, the reply, the run's total."""
        from codeagent.agent.batch_progress import clock

        now = now if now is not None else time.monotonic()
        parts = [clock(now - self.t0)]
        if self.label:
            parts.append(f"{self.label}: {self.gen_tokens} tokens, {self.rate():.1f} tok/s")
        parts.append(f"{self.total_tokens} tokens in all")
        return " · ".join(parts)

    def _render(self) -> Group:
        head = Table.grid(padding=(0, 1))
        head.add_column(no_wrap=True)
        head.add_column(overflow="fold")
        head.add_row(Text("phase", style="dim"), Text(self.phase_text, style="bold cyan"))
        head.add_row(Text("time", style="dim"), Text(self.status_line(), style="dim"))
        plan = Text()
        for i, s in enumerate(self.steps, 1):
            mark = {"done": "✓", "given_up": "✗"}.get(self.ended.get(i, ""), "▶" if i == self.step else "·")
            plan.append(f"{mark} {i}. {s}\n", style="bold" if i == self.step else "")
        calls = Text("\n".join(self.calls[-8:]) or "(none yet)")
        tail = "\n".join(self.stream.splitlines()[-10:])
        parts = [Panel(Group(head, plan), title=self.title), Panel(calls, title="tool calls"),
                 Panel(Text(tail), title="model output")]
        if self.stats is not None:
            parts.append(Panel(Group(kv_gauge(self.stats), kv_legend()), title="KV cache"))
        if self.notes:
            parts.append(Text("\n".join(self.notes[-3:]), style="yellow"))
        return Group(*parts)

    # ------------------------------------------------------------------ hooks
    def phase(self, phase: str, step: int, total: int, text: str) -> None:
        self.step = step
        k = PHASES.index(phase) + 1 if phase in PHASES else 0
        where = f"step {k} of {len(PHASES)}: {phase}" if k else phase
        rounds = f" round {step}/{total}" if step and total else ""
        self.phase_text = f"{where}{rounds} · {text}" if text else f"{where}{rounds}"
        self._line(f"[{self.phase_text}]", "bold")
        self._refresh()

    def generating(self, label: str) -> None:
        self.stream = ""
        self.label, self.gen_tokens, self.gen_t0 = label, 0, time.monotonic()
        self.gen_last = self.gen_t0
        self._refresh()

    def token(self, delta: str) -> None:
        self.gen_tokens += 1
        self.total_tokens += 1
        self.gen_last = time.monotonic()
        self.stream += delta
        if len(self.stream) > 4000:
            self.stream = self.stream[-2000:]
        self._refresh()

    def plan(self, steps: list[str]) -> None:
        self.steps = list(steps)
        self.step = 1
        for i, s in enumerate(steps, 1):
            self._line(f"  plan {i}. {s}")
        self._refresh()

    def action(self, brief: str) -> None:
        self.calls.append(f"→ {brief}")
        self._line(f"  → {brief}")
        self._refresh()

    def observation(self, brief: str, obs: Observation) -> None:
        line = obs_line(obs)
        self.calls.append(f"  ← {line}")
        self._line(f"  ← {line}")
        self._refresh()

    def step_end(self, step: int, status: str, reason: str) -> None:
        self.ended[step] = status
        self._refresh()

    def kv(self, stats: KVStats) -> None:
        self.stats = stats
        if not self.live_mode:
            states = " ".join(f"{k}={v}" for k, v in stats.by_state.items() if v)
            budget = f"/{stats.budget_slots}" if stats.budget_slots else ""
            self._line(f"  kv {stats.physical_slots}{budget} slots ({states}), {stats.kv_bytes / 1e6:.1f} MB, "
                       f"commits {stats.commits} merges {stats.merges} drops {stats.drops}", "dim")
            self._line(f"  {self.status_line()}", "dim")
        self._refresh()

    def note(self, text: str) -> None:
        self.notes.append(text)
        self._line(f"  ! {text}", "yellow")
        self._refresh()


def report(con: Console, result: ResultRecord, trajectory: str, extra: list[str] | None = None) -> None:
    """The end-of-run report: result, where the patch and trajectory are, KV statistics and the budget check."""
    kv = result.kv
    style = {"resolved": "bold green", "interrupted": "yellow"}.get(result.status, "red")
    t = Table.grid(padding=(0, 2))
    t.add_column(no_wrap=True)
    t.add_column(overflow="fold")  # paths and the --resume line fold onto the next line, never cut with "…"
    t.add_row("result", Text(f"{result.status}: {result.reason}", style=style))
    tests = {True: "pass", False: "fail", None: "not run"}[result.tests_passed]
    t.add_row("tests after", tests)
    t.add_row("summary", result.summary or "-")
    if result.tests_before:
        before = sum(o in ("failed", "error") for o in result.tests_before.values())
        t.add_row("tests before", f"{before} of {len(result.tests_before)} failing")
    if result.fail_to_pass or result.broken:
        t.add_row("fixed", ", ".join(result.fail_to_pass[:6]) or "-")
        if result.broken:
            t.add_row("broken", Text(", ".join(result.broken[:6]), style="red"))
    if result.candidates:
        t.add_row("candidates", f"{result.candidates} tried, {result.gen_tokens} tokens generated, "
                  f"{result.prefill_saved_tokens} prefill tokens saved by snapshots")
    t.add_row("patch", f"{result.patch_path} ({result.files_changed} file(s) changed)")
    t.add_row("trajectory", trajectory)
    budget = result.budget_slots
    t.add_row("kv slots", f"peak {result.kv_peak or kv.get('peak_slots', 0)}, max per step {result.max_physical_slots}, final "
              f"{kv.get('physical_slots', 0)}" + (f" (budget {budget})" if budget else " (no budget)"))
    t.add_row("kv budget", Text("within budget" if result.within_budget else "OVER BUDGET",
                                style="green" if result.within_budget else "bold red"))
    t.add_row("kv events", f"commits {kv.get('commits', 0)}, merges {kv.get('merges', 0)}, drops {kv.get('drops', 0)},"
              f" compressions {kv.get('compressions', 0)}, logical {kv.get('logical_tokens', 0)} tokens, "
              f"{kv.get('kv_bytes', 0) / 1e6:.1f} MB")
    by_state = kv.get("by_state") or {}
    if by_state:
        t.add_row("kv states", ", ".join(f"{k} {v}" for k, v in by_state.items() if v))
    for line in extra or []:
        t.add_row("", line)
    con.print(Panel(t, title="codeagent report"))
