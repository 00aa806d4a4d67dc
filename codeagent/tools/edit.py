"""edit: replace one exact occurrence of a text in a file."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from codeagent.kvcache.languages import language_for_path
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools import beneath
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError, resolve_path

CONTEXT = 3


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _no_match_hint(text: str, search: str) -> str:
    """Where the search text nearly matches: whitespace-insensitive hit, else the closest line."""
    lines = text.splitlines()
    wanted = [s.strip() for s in search.splitlines() if s.strip()]
    if not wanted:
        return ""
    stripped = [s.strip() for s in lines]
    for i in range(len(lines) - len(wanted) + 1):
        if stripped[i : i + len(wanted)] == wanted:
            return f"; it matches at line {i + 1} if indentation is ignored: copy the lines exactly (view the file)"
    best = difflib.get_close_matches(wanted[0], stripped, n=1, cutoff=0.5)
    if best:
        i = stripped.index(best[0])
        return f"; closest line is {i + 1}: {lines[i].strip()[:160]!r}"
    return "; view the file to copy the exact text"


@TOOLS.register("edit")
class Edit(BaseTool):
    """Replaces exactly one occurrence of ``search``; none or several is an error with a hint."""

    description = "Replace one exact occurrence of a text in a file (the search text must match exactly once)."
    args = (
        Arg("path", "file to change, relative to the repository root"),
        Arg("search", "exact text to find, including indentation; must occur exactly once"),
        Arg("replace", "text to put in its place (may be empty to delete)", required=False),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        path = resolve_path(ctx, args["path"], write=True)
        search, replace = args["search"], args.get("replace") or ""
        if not isinstance(search, str) or not isinstance(replace, str):
            raise ToolError("search and replace must be text")
        found = beneath.probe(ctx.workspace, path)
        if found is None:
            raise ToolError(f"no such file: {args['path']} (use create for a new file)")
        text = beneath.read_bytes(ctx.workspace, path).decode()
        count = text.count(search)
        if count == 0:
            raise ToolError(f"search text not found in {path}{_no_match_hint(text, search)}")
        if count > 1:
            where, i = [], text.find(search)
            while i >= 0 and len(where) < 10:
                where.append(str(_line_of(text, i)))
                i = text.find(search, i + 1)
            raise ToolError(
                f"search text occurs {count} times in {path} (lines {', '.join(where)}); "
                "include more surrounding lines so it matches once"
            )
        i = text.index(search)
        new = text[:i] + replace + text[i + len(search):]
        beneath.write_bytes(ctx.workspace, path, new.encode())
        first = _line_of(new, i)
        last = first + replace.count("\n")
        lines = new.splitlines()
        lo, hi = max(1, first - CONTEXT), min(len(lines), last + CONTEXT)
        snippet = "\n".join(f"{n:>6}\t{lines[n - 1]}" for n in range(lo, hi + 1))
        return Observation(
            text=f"edited {path} (lines {first}-{last} now):\n{snippet}",
            info=SpanInfo(kind=SegmentKind.FILE_VIEW, language=language_for_path(Path(path))),
            data={"path": path, "first_line": first, "last_line": last},
        )
