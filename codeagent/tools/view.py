"""view: show a file with numbered lines, or list a directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codeagent.kvcache.languages import language_for_path
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools import beneath
from codeagent.tools.base import SKIP_DIRS, TOOLS, Arg, BaseTool, ToolContext, ToolError, int_arg, is_binary, resolve_path


@TOOLS.register("view")
class View(BaseTool):
    """Numbered lines of a file (``f"{lineno:>6}\\t{line}"``), optionally a line range."""

    description = ("Show a file with line numbers (or list a directory), optionally only lines start..end; "
                   "PATH::NAME shows one definition (function, Class.method).")
    args = (
        Arg("path", "file or directory, relative to the repository root"),
        Arg("start", "first line to show, 1-based", required=False),
        Arg("end", "last line to show, inclusive", required=False),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        if "::" in str(args["path"]):  # PATH::NAME: one definition, found by its tree-sitter node
            args = {**args, **self._symbol_range(str(args["path"]), ctx)}
        path = resolve_path(ctx, args["path"])
        found = beneath.probe(ctx.workspace, path)
        if found is None:
            raise ToolError(f"no such file: {args['path']}")
        if found.kind == "dir":
            return self._listing(path, ctx)
        data = beneath.read_bytes(ctx.workspace, path)
        if is_binary(data):
            raise ToolError(f"{args['path']} is a binary file ({len(data)} bytes)")
        lines = data.decode("utf-8", errors="replace").splitlines()
        start = int_arg(args, "start") or 1
        end = int_arg(args, "end") or len(lines)
        if start < 1 or end < start:
            raise ToolError(f"bad line range {start}..{end}")
        if lines and start > len(lines):
            raise ToolError(f"{args['path']} has only {len(lines)} lines")
        end = min(end, len(lines))
        out: list[str] = []
        used = 0
        shown_to = start - 1
        for lineno in range(start, end + 1):
            row = f"{lineno:>6}\t{lines[lineno - 1]}"
            if used + len(row) + 1 > ctx.max_output_chars and out:
                break
            out.append(row)
            used += len(row) + 1
            shown_to = lineno
        if shown_to < end:
            out.append(f"[... lines {shown_to + 1}-{end} not shown (output limit); view them with start={shown_to + 1}]")
        text = "\n".join(out) if out else f"[{path} is empty]"
        info = SpanInfo(kind=SegmentKind.FILE_VIEW, language=language_for_path(Path(path)))
        return Observation(text=text, info=info, data={"path": path, "start": start, "end": shown_to, "lines": len(lines)})

    @staticmethod
    def _symbol_range(ref: str, ctx: ToolContext) -> dict[str, Any]:
        from codeagent.agent.symbols import SymbolIndex

        raw, _, name = ref.partition("::")
        path = resolve_path(ctx, raw)
        index = ctx.extra.get("index") or SymbolIndex(ctx.workspace)
        index.refresh()
        sym = index.find(path, name)
        if sym is None:
            known = ", ".join(s.name for s in index.files.get(path, (0, 0, []))[2][:12]) or "none"
            raise ToolError(f"no definition {name!r} in {path} (definitions: {known})")
        return {"path": path, "start": sym.start_line, "end": sym.end_line}

    def _listing(self, path: str, ctx: ToolContext) -> Observation:
        rows: list[str] = []
        for name, is_dir in beneath.list_dir(ctx.workspace, path):
            if name in SKIP_DIRS:
                continue
            rows.append((name if path == "." else f"{path}/{name}") + ("/" if is_dir else ""))
            if len(rows) >= 500:
                rows.append("[... more entries not shown]")
                break
        text = "\n".join(rows) or f"[{path} is empty]"
        return Observation(text=text, info=SpanInfo(kind=SegmentKind.TOOL_OUTPUT), data={"path": path})
