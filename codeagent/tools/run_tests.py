"""run_tests: run the repository's test suite in the sandbox and report pass/fail with counts."""

from __future__ import annotations

from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError
from codeagent.tools.bash import render_result
from codeagent.tools.testrun import detect, parse_counts, with_args


@TOOLS.register("run_tests")
class RunTests(BaseTool):
    """Detects pytest, npm, go, cargo or make (``ctx.test_command`` overrides); data has passed, exit_code, counts."""

    description = "Run the project's tests (optionally only some); reports pass/fail, counts and the log."
    args = (Arg("args", "test path or runner options, e.g. 'tests/test_x.py -k name'", required=False),)

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        extra = args.get("args") or ""
        if not isinstance(extra, str):
            raise ToolError("args must be text")
        if ctx.test_command:
            runner, command = "custom", ctx.test_command
        else:
            found = detect(ctx.workspace)
            if found is None:
                raise ToolError("no test set-up found (pytest, package.json test script, go.mod, Cargo.toml, "
                                "make test); run a command with bash instead")
            runner, command = found
        command = with_args(runner, command, extra.strip())
        result = ctx.sandbox.run(command, timeout=ctx.command_timeout)
        counts = parse_counts(result.output)
        passed = result.exit_code == 0 and not result.timed_out
        summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no counts found"
        head = f"$ {command}\n" + ("TESTS PASSED" if passed else "TESTS FAILED") + f" ({summary})\n"
        return Observation(
            text=head + render_result(result, ctx.max_output_chars), info=SpanInfo(kind=SegmentKind.TEST_LOG),
            ok=True,
            data={"passed": passed, "exit_code": result.exit_code, "counts": counts, "command": command,
                  "runner": runner, "timed_out": result.timed_out},
        )
