"""diff: the patch of the workspace against the run's starting point."""

from __future__ import annotations

from typing import Any

from codeagent.kvcache.languages import language_for_fence
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools.base import TOOLS, BaseTool, ToolContext, ToolError, cut_middle
from codeagent.tools.gitdiff import GitError, diff_worktree


@TOOLS.register("diff")
class Diff(BaseTool):
    """``git diff`` against ``ctx.base_ref`` (HEAD when unset), new files included."""

    description = "Show the patch of all changes made so far (including new files)."
    args = ()

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        try:
            patch = diff_worktree(ctx.workspace, ctx.base_ref)
        except GitError as e:
            raise ToolError(f"git diff failed: {e}") from None
        files = sum(1 for line in patch.splitlines() if line.startswith("diff --git "))
        text = cut_middle(patch, ctx.max_output_chars) if patch else "no changes yet"
        return Observation(
            text=text, info=SpanInfo(kind=SegmentKind.TOOL_OUTPUT, language=language_for_fence("diff")),
            data={"files_changed": files, "patch_chars": len(patch)},
        )
