"""What the loop reports as it goes; displays and batch workers implement the parts they need."""

from __future__ import annotations

from codeagent.protocols import KVStats, Observation


class Listener:
    """No-op base: override any of the hooks."""

    def phase(self, phase: str, step: int, total: int, text: str) -> None:
        """The loop entered ``phase`` of plan step ``step`` (1-based; 0 before the plan exists)."""

    def generating(self, label: str) -> None:
        """The model starts a reply."""

    def token(self, delta: str) -> None:
        """Streamed model output."""

    def action(self, brief: str) -> None:
        """A parsed action is about to run."""

    def observation(self, brief: str, obs: Observation) -> None:
        """A tool returned."""

    def plan(self, steps: list[str]) -> None:
        """The plan the model wrote."""

    def step_end(self, step: int, status: str, reason: str) -> None:
        """Plan step ``step`` (1-based) ended as ``status`` (done, given_up) for ``reason``; it was committed."""

    def kv(self, stats: KVStats) -> None:
        """Cache accounting after a turn."""

    def note(self, text: str) -> None:
        """Anything else worth a line (warnings, commits, format errors)."""
