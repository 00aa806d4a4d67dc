"""The transcript: every message goes to the engine (tagged) and into the trajectory, in one place.

Replaying a trajectory's messages and events into a fresh cache rebuilds the state a run had.
"""

from __future__ import annotations

from codeagent.agent.trajectory import EventRecord, MessageRecord, SpanRecord, Trajectory
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Generation


def _record(role: str, content: str, info: SpanInfo) -> MessageRecord:
    return MessageRecord(role=role, content=content, kind=info.kind.name.lower(), subtask=info.subtask,
                         language=info.language, pinned=info.pinned, protect=[list(r) for r in info.protect])


def _span(s: int, e: int, info: SpanInfo) -> SpanRecord:
    return SpanRecord(start=s, end=e, kind=info.kind.name.lower(), subtask=info.subtask, language=info.language,
                      pinned=info.pinned)


def _info(span: SpanRecord) -> SpanInfo:
    return SpanInfo(kind=SegmentKind[span.kind.upper()], subtask=span.subtask, language=span.language,
                    pinned=span.pinned)


class Transcript:
    """Appends messages to ``engine`` and records them in ``traj``."""

    def __init__(self, engine, traj: Trajectory) -> None:
        self.engine = engine
        self.traj = traj

    def say(self, role: str, content: str, info: SpanInfo) -> int:
        """Append a whole message (system or user); returns tokens added."""
        n = self.engine.append_message(role, content, info)
        self.traj.messages.append(_record(role, content, info))
        return n

    def reply(self, gen: Generation, info: SpanInfo, prefix: str = "") -> MessageRecord:
        """Record a generated assistant message, after the ``prefix`` it was primed with (the engine holds both)."""
        rec = _record("assistant", prefix + gen.text, info)
        self.traj.messages.append(rec)
        return rec

    def retag(self, gen: Generation, spans: list[tuple[int, int, SpanInfo]], offset: int = 0) -> int:
        """Re-tag the last reply's spans (offsets in prefix + text) in the cache and remember them for replay."""
        spans = [(s, e, i) for s, e, i in spans if e > s]
        if not spans:
            return 0
        in_gen = [(max(s - offset, 0), e - offset, i) for s, e, i in spans if e - offset > 0]
        changed = self.engine.retag(gen, in_gen) if in_gen else 0
        self.traj.messages[-1].spans = [_span(s, e, i) for s, e, i in spans]
        return changed

    def event(self, type_: str, subtask: str) -> None:
        """Record a commit or debug event after the last message (the caller calls the engine)."""
        self.traj.events.append(EventRecord(type=type_, subtask=subtask, after_message=len(self.traj.messages) - 1))

    def replay(self, upto: int | None = None) -> None:
        """Empty the engine's cache and prefill the first ``upto`` messages (all by default) with their events."""
        eng = self.engine
        eng.reset()
        msgs = self.traj.messages if upto is None else self.traj.messages[:upto]
        events: dict[int, list[EventRecord]] = {}
        for ev in self.traj.events:
            events.setdefault(ev.after_message, []).append(ev)
        for i, msg in enumerate(msgs):
            if msg.role == "assistant":
                base = msg.info()
                eng.start_assistant(base)
                for s, e, info in pieces(msg.content, base, [(sp.start, sp.end, _info(sp)) for sp in msg.spans]):
                    eng.append(msg.content[s:e], info)
                eng.end_assistant(base)
            else:
                eng.append_message(msg.role, msg.content, msg.info())
            for ev in events.get(i, []):
                if ev.type == "commit":
                    eng.commit(ev.subtask)
                else:
                    eng.set_debug(ev.subtask if ev.type == "debug_open" else None)

    def truncate(self, n_messages: int) -> None:
        """Forget messages (and their events) from index ``n_messages`` on; the caller replays or rolls back."""
        del self.traj.messages[n_messages:]
        self.traj.events = [ev for ev in self.traj.events if ev.after_message < n_messages]


def pieces(text: str, base: SpanInfo, spans: list[tuple[int, int, SpanInfo]]) -> list[tuple[int, int, SpanInfo]]:
    """``text`` cut into contiguous runs by tag: ``base`` where no span applies, later spans winning."""
    if not text:
        return []
    owner: list[int] = [-1] * len(text)
    for k, (s, e, _) in enumerate(spans):
        for c in range(max(s, 0), min(e, len(text))):
            owner[c] = k
    out: list[tuple[int, int, SpanInfo]] = []
    start = 0
    for c in range(1, len(text) + 1):
        if c == len(text) or owner[c] != owner[start]:
            out.append((start, c, base if owner[start] < 0 else spans[owner[start]][2]))
            start = c
    return out
