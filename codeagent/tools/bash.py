"""bash: run a shell command in the sandbox."""

from __future__ import annotations

import re
from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import CommandResult, Observation
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError, cut_middle

TEST_RUN = re.compile(
    r"\b(pytest|py\.test|unittest|nose2|tox|nox|npm (run )?test|yarn test|pnpm test|jest|vitest|mocha"
    r"|go test|cargo test|make (check|test)|ctest|mvn test|gradle test|rspec)\b"
)


def looks_like_test_run(command: str) -> bool:
    """Whether a shell command runs a test suite (its output is then tagged TEST_LOG)."""
    return bool(TEST_RUN.search(command))


def render_result(result: CommandResult, max_chars: int) -> str:
    """Command output cut to ``max_chars``, then a line with the exit code (and the timeout)."""
    body = cut_middle(result.output.rstrip("\n"), max_chars)
    status = f"[exit code {result.exit_code}" + (", timed out" if result.timed_out else "") + "]"
    return f"{body}\n{status}" if body else status


@TOOLS.register("bash")
class Bash(BaseTool):
    """A command through ``ctx.sandbox``; long output cut to head and tail."""

    description = "Run a bash command in the repository (sandboxed, no network); shows output and exit code."
    args = (
        Arg("command", "the bash command line to run"),
        Arg("timeout", "seconds before the command is killed", required=False),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        command = args["command"]
        if not isinstance(command, str):
            raise ToolError("command must be text")
        timeout = args.get("timeout")
        try:
            seconds = float(timeout) if timeout not in (None, "") else ctx.command_timeout
        except (TypeError, ValueError):
            raise ToolError(f"timeout must be a number of seconds, got {timeout!r}") from None
        seconds = max(1.0, min(seconds, ctx.command_timeout))
        result = ctx.sandbox.run(command, timeout=seconds)
        kind = SegmentKind.TEST_LOG if looks_like_test_run(command) else SegmentKind.TOOL_OUTPUT
        return Observation(
            text=render_result(result, ctx.max_output_chars), info=SpanInfo(kind=kind),
            ok=result.exit_code == 0 and not result.timed_out,
            data={"exit_code": result.exit_code, "timed_out": result.timed_out, "duration_s": result.duration_s},
        )
