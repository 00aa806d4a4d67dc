"""finish: end the run with a summary."""

from __future__ import annotations

from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError


@TOOLS.register("finish")
class Finish(BaseTool):
    """Marks the run done (``Observation.done``)."""

    description = "Stop: the task is done (or cannot be done); give a short summary of what changed."
    args = (Arg("summary", "what was changed and why, in a few sentences"),)

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        summary = args["summary"]
        if not isinstance(summary, str):
            raise ToolError("summary must be text")
        return Observation(text=f"finished: {summary.strip()}", info=SpanInfo(kind=SegmentKind.TEXT), done=True,
                           data={"summary": summary.strip()})
