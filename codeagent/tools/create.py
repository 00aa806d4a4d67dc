"""create: write a whole file (creating or overwriting it)."""

from __future__ import annotations

from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools import beneath
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError, resolve_path


@TOOLS.register("create")
class Create(BaseTool):
    """Creates or overwrites a file; says which."""

    description = "Write a file with the given content (creates it, or overwrites it if it exists)."
    args = (
        Arg("path", "file to write, relative to the repository root"),
        Arg("content", "the complete new content of the file"),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        path = resolve_path(ctx, args["path"], write=True)
        content = args["content"]
        if not isinstance(content, str):
            raise ToolError("content must be text")
        existed = beneath.write_bytes(ctx.workspace, path, content.encode())
        n = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "overwrote" if existed else "created"
        return Observation(
            text=f"{verb} {path} ({n} lines)", info=SpanInfo(kind=SegmentKind.TOOL_OUTPUT),
            data={"path": path, "created": not existed},
        )
