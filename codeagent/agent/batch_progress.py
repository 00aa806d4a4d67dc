"""Overall progress of a batch: tasks done of the tasks to run, elapsed time and an ETA from the pace so far."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rich.console import Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text


def clock(seconds: float) -> str:
    """``75`` -> ``"1m15s"``, ``3700`` -> ``"1h01m"``."""
    s = int(max(seconds, 0))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


@dataclass
class BatchProgress:
    """Counts finished tasks; the ETA is the remaining tasks at the pace of those finished in this session."""

    total: int
    done: int = 0
    started: float = field(default_factory=time.monotonic)

    def finish_one(self) -> None:
        """A task ended (whatever its result)."""
        self.done += 1

    def elapsed(self, now: float | None = None) -> float:
        """Seconds since the batch started."""
        return (now if now is not None else time.monotonic()) - self.started

    def eta(self, now: float | None = None) -> float | None:
        """Seconds until every task has ended at the pace so far; None before the first one ends."""
        if self.done == 0:
            return None
        return self.elapsed(now) / self.done * (self.total - self.done)

    def line(self, now: float | None = None) -> str:
        """``"3/10 tasks · 4m10s elapsed · ETA 9m43s"``."""
        eta = self.eta(now)
        return (f"{self.done}/{self.total} tasks · {clock(self.elapsed(now))} elapsed · "
                f"ETA {clock(eta) if eta is not None else '-'}")

    def renderable(self, table: Table) -> Group:
        """``table`` with a progress bar and :meth:`line` under it (for a live terminal view)."""
        bar = Table.grid(padding=(0, 1))
        bar.add_row(ProgressBar(total=max(self.total, 1), completed=self.done, width=40), Text(self.line()))
        return Group(table, bar)
