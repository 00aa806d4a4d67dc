"""A deterministic engine that replays scripted replies: the ModelEngine protocol without a model.

It keeps a simulated cache (one slot per ~4 characters, compressed to the budget by dropping) and
records every call that matters to the KV manager (appends with their tags, retags, commits,
debug rounds) in ``calls``, so control-flow tests can check what reached it and in which order.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeagent.errors import InputError
from codeagent.kvcache.tags import SpanInfo
from codeagent.protocols import Generation, KVStats, TokenCallback, TokenScore

CHARS_PER_TOKEN = 4
SCAFFOLD = 5  # template tokens around a message


@dataclass(frozen=True)
class ScriptMark:
    """Where to roll the simulated cache back to."""

    slots: int
    logical: int
    calls: int


@dataclass(frozen=True)
class ScriptSnapshot:
    """The simulated cache at one moment."""

    slots: int
    logical: int
    peak: int
    drops: int
    commits: int
    committed: list[str]
    debug: str | None


class ScriptedEngine:
    """Replies come from ``replies`` in order: strings, or ``{"text": ..., "finish_reason": ...}``.

    A reply that starts with the text appended right before ``generate`` (a primer such as an
    opening fence) continues it: that opening is not repeated. ``prefer`` maps a word or operator to the
    other token the model would write in its place, as ``score_text`` reports it (elsewhere there is none).
    """

    def __init__(self, replies: list[Any], budget_tokens: int | None = 3072, max_context: int = 8192,
                 prefer: dict[str, str] | None = None) -> None:
        self.replies = list(replies)
        self.prefer = dict(prefer or {})
        self.budget_tokens = budget_tokens
        self.max_context = max_context
        self.calls: list[tuple] = []
        self.next_reply = 0
        self.reset()

    @classmethod
    def from_file(cls, path: Path, budget_tokens: int | None = 3072) -> ScriptedEngine:
        """Replies from a JSON file: a list, or ``{"replies": [...]}``."""
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read engine script {path}: {exc}") from None
        replies = data.get("replies") if isinstance(data, dict) else data
        if not isinstance(replies, list):
            raise InputError(f"engine script {path} must hold a list of replies")
        return cls(replies, budget_tokens=budget_tokens)

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Empty the simulated cache (the script position is kept)."""
        self.logical = 0
        self.physical = 0
        self.peak = 0
        self.drops = 0
        self.commits = 0
        self.committed: list[str] = []
        self.debug: str | None = None
        self._primed = ""
        self.calls.append(("reset",))

    def _add(self, n: int) -> int:
        if self.logical + n > self.max_context:
            raise InputError(f"context past the model limit: {self.logical + n} tokens > {self.max_context} positions")
        self.logical += n
        self.physical += n
        if self.budget_tokens is not None and self.physical > self.budget_tokens:
            self.drops += self.physical - self.budget_tokens
            self.physical = self.budget_tokens
        self.peak = max(self.peak, self.physical)
        return n

    @staticmethod
    def _tokens(text: str) -> int:
        return math.ceil(len(text) / CHARS_PER_TOKEN)

    # ------------------------------------------------------------------ protocol
    def append_message(self, role: str, content: str, info: SpanInfo | None = None) -> int:
        info = info or SpanInfo()
        self.calls.append(("message", role, info.kind.name.lower(), info.subtask, content))
        return self._add(self._tokens(content) + SCAFFOLD)

    def append(self, text: str, info: SpanInfo | None = None) -> int:
        info = info or SpanInfo()
        self.calls.append(("append", info.kind.name.lower(), info.subtask, text))
        self._primed = text
        return self._add(self._tokens(text))

    def start_assistant(self, info: SpanInfo | None = None) -> int:
        self._primed = ""
        return self._add(3)

    def end_assistant(self, info: SpanInfo | None = None) -> int:
        return self._add(2)

    def generate(self, max_new_tokens: int = 256, *, stop: list[str] | None = None, temperature: float = 0.0,
                 top_p: float = 1.0, seed: int | None = None, on_token: TokenCallback | None = None,
                 info: SpanInfo | None = None) -> Generation:
        info = info or SpanInfo()
        if self.next_reply < len(self.replies):
            item = self.replies[self.next_reply]
        else:
            item = {"text": "", "finish_reason": "eos"}
        self.next_reply += 1
        text, reason = (item, None) if isinstance(item, str) else (item.get("text", ""), item.get("finish_reason"))
        if self._primed and text.startswith(self._primed):  # the reply was primed with its own opening
            text = text[len(self._primed):]
        self._primed = ""
        hits = [text.find(s) + len(s) for s in (stop or []) if s and s in text]
        if hits and reason is None:
            text, reason = text[: min(hits)], "stop"
        limit = max_new_tokens * CHARS_PER_TOKEN
        if len(text) > limit:
            text, reason = text[:limit], "length"
        reason = reason or "eos"
        start = self.logical
        n = self._tokens(text)
        self._add(n)
        if on_token:
            for i in range(0, len(text), 16):
                on_token(text[i:i + 16])
        self.calls.append(("generate", info.kind.name.lower(), info.subtask, text))
        return Generation(text=text, token_ids=list(range(n)), finish_reason=reason, start_position=start)

    def retag(self, gen: Generation, spans: list[tuple[int, int, SpanInfo]]) -> int:
        for s, e, info in spans:
            self.calls.append(("retag", info.kind.name.lower(), info.subtask, info.language, gen.text[s:e]))
        return sum(self._tokens(gen.text[s:e]) for s, e, _ in spans)

    def commit(self, subtask: str) -> int:
        self.commits += 1
        self.committed.append(subtask)
        self.calls.append(("commit", subtask))
        return 1

    def set_debug(self, subtask: str | None) -> None:
        self.debug = subtask
        self.calls.append(("debug", subtask))

    def interrupt(self) -> None:
        """Nothing runs in the background here."""

    def score_text(self, text: str, info: SpanInfo | None = None) -> list[TokenScore]:
        """One token per word or run of symbols (with its leading space), each at log-prob -0.1; ``prefer`` names
        its alternative (at -0.5), else there is none."""
        out = []
        for m in re.finditer(r"\s*(?:\w+|[^\w\s]+)|\s+", text):
            token = m.group(0)
            core = token.strip()
            alts = ((token.replace(core, self.prefer[core]), -0.5),) if core and core in self.prefer else ()
            out.append(TokenScore(m.start(), m.end(), -0.1, alts))
        self.calls.append(("score", text))
        self._add(len(out))
        return out

    def mark(self) -> ScriptMark:
        return ScriptMark(self.physical, self.logical, len(self.calls))

    def rollback(self, mark: ScriptMark) -> None:
        self.physical, self.logical = mark.slots, mark.logical
        self.calls.append(("rollback", mark.logical))

    def snapshot(self) -> ScriptSnapshot:
        """The simulated cache's counters (the script position is not part of the cache)."""
        self.calls.append(("snapshot", self.logical))
        return ScriptSnapshot(self.physical, self.logical, self.peak, self.drops, self.commits, list(self.committed),
                              self.debug)

    def restore(self, snap: ScriptSnapshot, manager=None) -> None:
        self.physical, self.logical, self.peak = snap.slots, snap.logical, max(self.peak, snap.peak)
        self.drops, self.commits, self.committed, self.debug = snap.drops, snap.commits, list(snap.committed), snap.debug
        self.calls.append(("restore", snap.logical))

    def stats(self) -> KVStats:
        return KVStats(physical_slots=self.physical, logical_tokens=self.logical, kv_bytes=self.physical * 46080,
                       budget_slots=self.budget_tokens, by_state={"active": self.physical}, drops=self.drops,
                       commits=self.commits, peak_slots=self.peak)
