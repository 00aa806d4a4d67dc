"""Protocols for the swappable parts: model engine, KV policy, tool and sandbox.

Concrete classes register under a short name (see ``codeagent.registry``); callers depend
only on these protocols.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from codeagent.kvcache.tags import SpanInfo


# ----------------------------------------------------------------------------------- engine
@dataclass
class Generation:
    """Result of one ``generate`` call."""

    text: str
    token_ids: list[int]
    finish_reason: str  # "stop" (stop string), "eos", "length", "interrupted"
    prefill_s: float = 0.0
    decode_s: float = 0.0
    start_position: int = 0  # logical position of the first generated token


@dataclass(frozen=True)
class TokenScore:
    """One token of a teacher-forced text: its characters, its log-prob, and what else the model would write there."""

    start: int  # character offsets of the token in the scored text
    end: int
    logprob: float
    alternatives: tuple[tuple[str, float], ...]  # the likeliest other tokens at this step and their log-probs


@dataclass
class KVStats:
    """Accounting of the managed cache at one moment."""

    physical_slots: int
    logical_tokens: int
    kv_bytes: int
    budget_slots: int | None
    by_state: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, int] = field(default_factory=dict)
    merged_slots: int = 0  # slots standing for more than one token
    merges: int = 0  # merge operations so far (tokens folded into others)
    drops: int = 0  # tokens dropped so far
    commits: int = 0  # commit transitions so far
    compressions: int = 0  # enforcement passes that changed the cache
    peak_slots: int = 0
    peak_rss_bytes: int = 0
    compress_s: float = 0.0  # wall time spent deciding and applying compression

    def as_dict(self) -> dict[str, Any]:
        """Plain-JSON form, for trajectories and reports."""
        return dict(self.__dict__)


TokenCallback = Callable[[str], None]


@runtime_checkable
class ModelEngine(Protocol):
    """A model with a managed KV cache and its own decode loop."""

    def append_message(self, role: str, content: str, info: SpanInfo) -> int:
        """Render one chat message with the model's template, prefill it tagged; returns tokens added."""
        ...

    def append(self, text: str, info: SpanInfo) -> int:
        """Prefill raw text (no template) tagged with ``info``; returns tokens added."""
        ...

    def generate(
        self,
        max_new_tokens: int = 256,
        *,
        stop: list[str] | None = None,
        temperature: float = 0.0,
        top_p: float = 1.0,
        seed: int | None = None,
        on_token: TokenCallback | None = None,
        info: SpanInfo | None = None,
    ) -> Generation:
        """Continue from the cache; generated tokens stay in the cache tagged with ``info``."""
        ...

    def retag(self, gen: Generation, spans: list[tuple[int, int, SpanInfo]]) -> int:
        """Re-tag the cached tokens of ``gen`` whose text lies in each (start, end, info) char span;
        returns how many slots changed."""
        ...

    def commit(self, subtask: str) -> int:
        """Move the spans of ``subtask`` to committed and compress them; returns slots affected."""
        ...

    def set_debug(self, subtask: str | None) -> None:
        """Open a debug round (error lines pinned) for ``subtask``, or close it with None."""
        ...

    def stats(self) -> KVStats:
        """Current accounting of the cache."""
        ...

    def reset(self) -> None:
        """Empty the cache."""
        ...

    def start_assistant(self, info: SpanInfo | None = None) -> int:
        """Open an assistant message (its template head); returns tokens added."""
        ...

    def end_assistant(self, info: SpanInfo | None = None) -> int:
        """Close the assistant message; returns tokens added."""
        ...

    def snapshot(self) -> Any:
        """A copy of the whole cache state (``restore`` returns to it, any number of times, without prefill)."""
        ...

    def restore(self, snap: Any, manager: Any = None) -> None:
        """Return to ``snap``."""
        ...

    def score_text(self, text: str, info: SpanInfo | None = None) -> list[TokenScore]:
        """Teacher-force ``text`` after the cache: per token its log-prob and the likeliest other tokens there (the
        tokens stay appended: ``restore`` or ``rollback`` after)."""
        ...

    def mark(self) -> Any:
        """The current end of the cache (for ``rollback`` while nothing was compressed)."""
        ...

    def rollback(self, mark: Any) -> None:
        """Drop everything appended after ``mark``."""
        ...


# ----------------------------------------------------------------------------------- policy
@dataclass
class CompressionPlan:
    """What a policy wants done, in physical slot indices of the current cache.

    ``keep`` slots stay as they are; each group in ``merge`` (with its weights) becomes one
    slot placed at the position of the group's last member; every other slot is dropped.
    """

    keep: list[int]
    merge: list[tuple[list[int], list[float]]] = field(default_factory=list)
    note: str = ""


class Policy(Protocol):
    """Decides which slots to keep, merge and drop under a budget (what ``KVManager`` calls).

    Policies are dataclasses owning their knobs, registered by short name as a builder from the
    ``kv`` settings (``codeagent.kvcache.registry``); ``Lifecycle(base)`` wraps one with commits and pins.
    """

    needs_attention: bool
    """Whether the engine must collect attention statistics for it."""
    compresses: bool
    """False for a policy that keeps everything (no budget applies)."""
    uses_lifecycle: bool
    """Whether it reads commits."""

    def scores(self, view: Any) -> Any:
        """Importance of every slot (higher is kept)."""
        ...

    def plan(self, view: Any, budget: int) -> CompressionPlan:
        """A plan leaving at most ``budget`` slots, from a read-only view of slot table and stats."""
        ...

    def make_room(self, state: Any, budget: int, apply: Callable[[CompressionPlan, str], None]) -> None:
        """Steps before ``plan`` when the cache ``state`` is over ``budget`` (e.g. fold commits)."""
        ...

    def on_commit(self, state: Any, subtask: int, name: str, apply: Callable[[CompressionPlan, str], None]) -> None:
        """Subtask ``name`` (index ``subtask``) was committed."""
        ...


# ----------------------------------------------------------------------------------- sandbox
@dataclass
class CommandResult:
    """What a command run in a sandbox produced."""

    exit_code: int
    output: str  # stdout and stderr interleaved, already cut to the output limit
    timed_out: bool = False
    truncated_bytes: int = 0
    duration_s: float = 0.0


class Sandbox(Protocol):
    """Where commands run, confined to one workspace."""

    name: str
    workspace: Path

    def run(self, command: str, timeout: float | None = None) -> CommandResult:
        """Run ``command`` with bash inside the workspace; never raises for a failing command."""
        ...

    def close(self) -> None:
        """Release the sandbox (stop containers, kill leftover processes)."""
        ...


# ----------------------------------------------------------------------------------- tools
@dataclass
class Observation:
    """What a tool returns to the agent: text for the model plus how to tag it."""

    text: str
    info: SpanInfo
    ok: bool = True
    done: bool = False  # the finish tool sets this
    data: dict[str, Any] = field(default_factory=dict)


class Tool(Protocol):
    """Something the model may call from a fenced action block."""

    name: str
    description: str

    def run(self, args: dict[str, Any], ctx: Any) -> Observation:
        """Act inside ``ctx.workspace`` / ``ctx.sandbox``; errors come back as ``ok=False``."""
        ...
