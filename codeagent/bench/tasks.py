"""Benchmark tasks: the JSONL format described in ``docs/formats.md``, loading, saving, span kinds.

A task is a rendered agent context (segments, one chat message each), the subtasks committed
before the probe, and a probe: a prompt that starts an assistant message and the target text the
model should produce next. Unknown fields (``meta``...) are ignored, never rejected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codeagent.errors import InputError
from codeagent.kvcache.languages import language_for_fence
from codeagent.kvcache.tagger_calls import call_language, call_paths, looks_like_test_log, looks_like_tool_call
from codeagent.kvcache.tagger_content import (
    CODE,
    COMMENT_OPENER,
    MARKUP_LINE,
    TRIPLE_QUOTE,
    carried_strings,
    code_regions,
    line_label,
    numbered_rows,
)
from codeagent.kvcache.tags import SegmentKind, SpanInfo

Role = Literal["system", "user", "assistant", "tool"]
Kind = Literal["text", "plan", "code", "tool_call", "tool_output"]


class Segment(BaseModel):
    """One message of the context."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True, frozen=True)

    role: Role
    """Chat role: system, user, assistant or tool."""
    kind: Kind
    """What the message is: text, plan, code, tool_call or tool_output."""
    subtask: str | None = None
    """The plan step the segment belongs to, or None."""
    text: str
    """The message text, without chat-template scaffolding."""


class Probe(BaseModel):
    """What follows the context: an assistant prompt and the expected continuation."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True, frozen=True)

    prompt: str
    """Start of an assistant message, appended after the context and never compressed."""
    target: str = Field(min_length=1)
    """The text the model should produce next."""


class Task(BaseModel):
    """One benchmark task: a context, the commits made in it, and a probe."""

    model_config = ConfigDict(extra="ignore", use_attribute_docstrings=True)

    id: str = Field(min_length=1)
    """Unique id within a task file."""
    family: str = Field(min_length=1)
    """Task family (signature_recall, next_line, session, or any name a foreign file uses)."""
    segments: list[Segment] = Field(min_length=1)
    """The context, one chat message per segment, in order."""
    commits: list[str] = Field(default_factory=list)
    """Subtasks finished before the probe, in order."""
    n_context_tokens: int | None = Field(default=None, ge=0)
    """Informational context length in tokens; runners recount with their own tokenizer."""
    probe: Probe
    """The probe prompt and target."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form notes on the task (where it came from); ``meta.style`` names the rendering style
    that reports break results down by."""

    @property
    def style(self) -> str | None:
        """The rendering style named in ``meta`` (one of ``styles.STYLES``), or None."""
        value = self.meta.get("style")
        return str(value) if value is not None else None


def _first_error(exc: ValidationError) -> str:
    """One-line rendering of a pydantic error: ``loc: message`` (+ how many more)."""
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "task"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{loc}: {first['msg']}{more}"


def parse_task_line(line: str, where: str) -> Task:
    """Parse one JSONL line into a Task; ``where`` (``file:line``) prefixes any error message."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: a task must be a JSON object, got {type(data).__name__}")
    try:
        return Task.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{where}: invalid task: {_first_error(exc)}") from None


def load_tasks(path: str | Path) -> list[Task]:
    """Read a JSONL task file; blank lines are skipped.

    Raises InputError with a one-line ``file:line: ...`` message for a missing or unreadable file,
    bad JSON, a schema error, a duplicate id, or a file holding no task.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"task file not found: {p}")
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read task file {p}: {exc}") from None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        task = parse_task_line(line, f"{p}:{no}")
        if task.id in seen:
            raise InputError(f"{p}:{no}: duplicate task id {task.id!r} (first on line {seen[task.id]})")
        seen[task.id] = no
        tasks.append(task)
    if not tasks:
        raise InputError(f"task file is empty: {p}")
    return tasks


def dump_tasks(tasks: Iterable[Task], path: str | Path) -> Path:
    """Write tasks as JSONL, one per line, with every field the models hold (a subclass's ``meta`` too)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("w", encoding="utf-8") as fh:
        for task in tasks:
            fh.write(json.dumps(task.model_dump(mode="json"), ensure_ascii=False) + "\n")
    return p


# --- span kinds -------------------------------------------------------------------------------

_FENCE = re.compile(r"^```([^\n`]*)$", re.MULTILINE)
CODE_SHARE = 0.5
"""A tool result whose code regions cover at least this share of its text is a file view."""


def fence_language(text: str) -> str | None:
    """Language named by the first Markdown fence in ``text`` (``python``, ``ts``...), or None."""
    m = _FENCE.search(text)
    return language_for_fence(m.group(1)) if m and m.group(1).strip() else None


def viewed_path(call_text: str) -> str | None:
    """The last file path a tool call names, in any syntax (``view X``, ``cat X``, ``sed -n '1,9p' X``,
    ``view_file(path="X")``, ``{"path": "X"}``), or None."""
    paths = call_paths(call_text)
    return paths[-1] if paths else None


def looks_like_file_view(text: str) -> bool:
    """True for a file's content: line-numbered, or mostly code by content."""
    if numbered_rows(text) is not None:
        return True
    body = text.strip()
    if not body:
        return False
    covered = sum(e - s for s, e in code_regions(text, 0, len(text)))
    return covered >= CODE_SHARE * len(body)


_PLAN_ITEM = re.compile(r"^(?:\w[\w ]{0,24}:\s+)?(?:(\d+)[.)]|[-*+\u2022](?:\s\[[ xX]\])?)\s+\S")


def looks_like_plan(text: str) -> bool:
    """True for an assistant message that is mostly a list of steps: two or more items (numbered 1, 2, 3... or
    bullets, checkboxes), at least half of its lines, after an optional label (``THOUGHT:``, ``<thinking>``,
    ``Here is how I will approach this:``). Agents write their plan as plain text; nothing declares it."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    items = [m for m in map(_PLAN_ITEM.match, lines) if m]
    if len(items) < 2 or 2 * len(items) < len(lines):
        return False
    numbers = [int(m.group(1)) for m in items if m.group(1)]
    return numbers == list(range(1, len(numbers) + 1))


def _code_or_comments(text: str) -> bool:
    """Two or more lines, every one a comment, a line of code or part of a triple-quoted string (a file's licence
    header viewed alone, with maybe its docstring or ``__all__``), an output's wrapping elements (``<output>``) aside:
    no prose or log line, where ``code_regions`` needs two lines of code."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not MARKUP_LINE.match(ln)]
    quoted = False
    for line in lines:
        triples = len(TRIPLE_QUOTE.findall(line))
        if not (quoted or triples or COMMENT_OPENER.match(line) or line_label(line) == CODE):
            return False
        quoted ^= triples % 2 == 1
    return len(lines) >= 2


def _pasted(text: str) -> bool:
    """A user message that pastes a file (aider: ``path`` + fence) or a test run's output."""
    if looks_like_test_log(text):
        return True
    fenced = sum(len(m.group(0)) for m in _FENCED.finditer(text))
    return fenced >= CODE_SHARE * len(text.strip()) > 0


_FENCED = re.compile(r"^```[^\n]*\n.*?^```", re.MULTILINE | re.DOTALL)


def _pasted_language(text: str) -> str | None:
    """Language of the largest fenced block of a pasted message: its fence's info string, else the
    path named just before the fence (aider writes ``path`` then the fence); never a path that only
    appears inside the pasted code."""
    block = max(_FENCED.finditer(text), key=lambda m: len(m.group(0)))
    named = language_for_fence(block.group(0).split("\n", 1)[0][3:])
    return named or call_language(text[max(0, block.start() - 300):block.start()])


def _is_call(seg: Segment) -> bool:
    return seg.kind == "tool_call" or (seg.role == "assistant" and seg.kind == "text" and looks_like_tool_call(seg.text))


def _output_span(seg: Segment, call: str | None) -> tuple[SegmentKind, str | None]:
    """Kind and language of a tool result (or an observation sent as a user message)."""
    language = call_language(call) if call else None
    if looks_like_test_log(seg.text, call):
        return SegmentKind.TEST_LOG, None
    strings = carried_strings(seg.text)
    text = max((js.value for js in strings), key=len) if strings else seg.text
    fenced = [m.group(0) for m in _FENCED.finditer(text)]
    if fenced and _pasted(text):
        return SegmentKind.FILE_VIEW, language or _pasted_language(text)
    if looks_like_file_view(text) or (language is not None and numbered_rows(text) is None
                                      and (code_regions(text, 0, len(text)) or _code_or_comments(text))):
        return SegmentKind.FILE_VIEW, language or call_language(seg.text[:400])
    return SegmentKind.TOOL_OUTPUT, None


def segment_kind_to_span(seg: Segment, prev: Segment | None = None, first_user: bool = False) -> SpanInfo:
    """Map a task segment to the SpanInfo the engine appends it with, by content as much as by
    its declared kind: a tool call may be written in any syntax, a tool result may come back as a
    user message (mini-swe-agent), a file may be raw, numbered, fenced or a JSON string.

    ``prev`` is the segment just before (a tool call tells what its output is);
    ``first_user`` marks the first user text, which is the issue statement.
    """
    kind: SegmentKind
    language: str | None = None
    call = prev.text if prev is not None and _is_call(prev) else None
    if seg.kind == "text":
        if seg.role == "system":
            kind = SegmentKind.SYSTEM
        elif seg.role == "user" and first_user:
            kind = SegmentKind.ISSUE
        elif seg.role in ("user", "tool") and (call is not None or _pasted(seg.text)):
            kind, language = _output_span(seg, call)
        elif seg.role == "assistant" and looks_like_tool_call(seg.text):
            kind = SegmentKind.TOOL_CALL
        elif seg.role == "assistant" and looks_like_plan(seg.text):
            kind = SegmentKind.PLAN
        else:
            kind = SegmentKind.TEXT
    elif seg.kind == "plan":
        kind = SegmentKind.PLAN
    elif seg.kind == "code":
        kind, language = SegmentKind.CODE, fence_language(seg.text)
    elif seg.kind == "tool_call":
        kind = SegmentKind.TOOL_CALL
    else:
        kind, language = _output_span(seg, call)
    return SpanInfo(kind=kind, subtask=seg.subtask, language=language)


def task_spans(task: Task) -> list[SpanInfo]:
    """SpanInfo for every segment of a task, in order."""
    spans: list[SpanInfo] = []
    seen_user = False
    prev: Segment | None = None
    for seg in task.segments:
        first_user = seg.role == "user" and seg.kind == "text" and not seen_user
        seen_user = seen_user or first_user
        spans.append(segment_kind_to_span(seg, prev, first_user))
        prev = seg
    return spans


def render_chatml(segments: Iterable[Segment]) -> str:
    """The context as the embedded model's ChatML template renders it (one message per segment)."""
    return "".join(f"<|im_start|>{s.role}\n{s.text}<|im_end|>\n" for s in segments)
