"""What every tool gets to act with, the registry of tools by short name, and shared helpers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation, Sandbox, Tool
from codeagent.registry import Registry
from codeagent.tools import beneath

TOOLS: Registry[Tool] = Registry("tool")

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".tox", "target", "dist", "build"})


@dataclass
class ToolContext:
    """The run's workspace and sandbox, plus limits, handed to every tool call."""

    workspace: Path
    sandbox: Sandbox
    max_output_chars: int = 8000
    command_timeout: float = 120.0
    test_command: str | None = None
    base_ref: str | None = None  # commit the run started from (diff base); None: HEAD
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Arg:
    """One argument of a tool, as the action-format spec shows it."""

    name: str
    meaning: str
    required: bool = True


class ToolError(Exception):
    """A mistake the model made (bad path, no match...): reported back as ``ok=False``."""


def error(text: str) -> Observation:
    """An error observation for the model."""
    return Observation(text=f"error: {text}", info=SpanInfo(kind=SegmentKind.ERROR), ok=False)


class BaseTool:
    """Turns :class:`ToolError` and OS errors into error observations; subclasses implement ``call``."""

    name: str = ""
    description: str = ""
    args: tuple[Arg, ...] = ()

    def run(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        """Run the tool; never raises for the model's mistakes."""
        try:
            known = {a.name for a in self.args}
            unknown = sorted(set(args) - known)
            if unknown:
                raise ToolError(f"{self.name} takes {', '.join(sorted(known)) or 'no arguments'}; got {', '.join(unknown)}")
            for a in self.args:
                if a.required and args.get(a.name) in (None, ""):
                    raise ToolError(f"{self.name} needs argument {a.name!r} ({a.meaning})")
            return self.call(args, ctx)
        except (ToolError, beneath.PathRefused) as e:
            return error(str(e))
        except (OSError, UnicodeError, ValueError) as e:
            return error(f"{self.name}: {e}")
        except Exception as e:  # noqa: BLE001 - whatever the workspace holds, the run goes on with one line
            return error(f"{self.name} failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        """The tool's work; raise :class:`ToolError` for the model's mistakes."""
        raise ToolError(f"{self.name} does nothing")


def resolve_path(ctx: ToolContext, raw: Any, *, write: bool = False) -> str:
    """``raw`` as a normalised path relative to the workspace; absolute paths outside it and ``..`` are refused.

    Only the spelling is checked here: the file itself is opened beneath the workspace by
    :mod:`codeagent.tools.beneath`, which refuses symlinks leading outside at open time.
    """
    try:
        path = beneath.relative(ctx.workspace, raw)
    except beneath.PathRefused as e:
        raise ToolError(str(e)) from None
    if write and ".git" in path.split("/"):
        raise ToolError(f"path {raw!r} is inside .git; edit the project's files only")
    return path


def rel(ctx: ToolContext, path: Path) -> str:
    """``path`` relative to the workspace, for messages."""
    try:
        return str(path.relative_to(ctx.workspace.resolve())) or "."
    except ValueError:
        return str(path)


def int_arg(args: dict[str, Any], name: str) -> int | None:
    """An optional integer argument (accepts digit strings)."""
    value = args.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ToolError(f"{name} must be an integer, got {value!r}") from None


def cut_middle(text: str, max_chars: int) -> str:
    """``text`` cut to about ``max_chars``: whole head and tail lines kept, one line says what was cut."""
    if len(text) <= max_chars:
        return text
    lines = text.splitlines(keepends=True)
    head: list[str] = []
    tail: list[str] = []
    budget = max_chars // 2
    used = 0
    for line in lines:
        if used + len(line) > budget:
            break
        head.append(line)
        used += len(line)
    used = 0
    for line in reversed(lines[len(head):]):
        if used + len(line) > budget:
            break
        tail.append(line)
        used += len(line)
    tail.reverse()
    if not head and not tail:  # one enormous line
        return text[:budget] + f"\n[... {len(text) - 2 * budget} chars cut ...]\n" + text[-budget:]
    cut_lines = len(lines) - len(head) - len(tail)
    cut_chars = len(text) - sum(map(len, head)) - sum(map(len, tail))
    sep = "" if not head or head[-1].endswith("\n") else "\n"
    return "".join(head) + f"{sep}[... {cut_lines} lines ({cut_chars} chars) cut ...]\n" + "".join(tail)


def is_binary(data: bytes) -> bool:
    """Whether file content looks binary (a NUL byte in its first 8 KB)."""
    return b"\0" in data[:8192]
