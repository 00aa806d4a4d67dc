"""Rich progress bars for ``models pull``: bytes with rate and ETA, then tensors converted."""

from __future__ import annotations

from typing import Callable

from rich.console import Console
from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn, TransferSpeedColumn)


class RichProgress:
    """A ``pull.Progress`` drawing one bar per phase on stderr; use as a context manager (or call ``close``)."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self._bar: Progress | None = None

    def phase(self, label: str, total: float | None, unit: str) -> Callable[[float], None]:
        self._finish()
        if unit == "bytes":
            cols = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TextColumn("eta"), TimeRemainingColumn())
        else:
            cols = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                    TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
        self._bar = Progress(*cols, console=self.console, transient=False)
        self._bar.start()
        task = self._bar.add_task(label, total=total)
        bar = self._bar
        return lambda n: bar.advance(task, n)

    def note(self, message: str) -> None:
        self._finish()
        self.console.print(f"[dim]{message}[/]", highlight=False, soft_wrap=True)

    def _finish(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def close(self) -> None:
        """Stop the bar that is running, if any."""
        self._finish()

    def __enter__(self) -> "RichProgress":
        return self

    def __exit__(self, *exc) -> None:
        self._finish()
