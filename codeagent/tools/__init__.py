"""What the model may call: view, create, edit, replace, search, bash, run_tests, diff, finish."""

from __future__ import annotations

from codeagent.tools import bash, create, diff, edit, finish, replace, run_tests, search, view  # noqa: F401 - registers
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError

__all__ = ["TOOLS", "Arg", "BaseTool", "ToolContext", "ToolError", "make_tools"]


def make_tools(names: list[str] | None = None) -> dict[str, BaseTool]:
    """Instances of the named tools (all registered ones by default), keyed by name."""
    return {n: TOOLS.get(n)() for n in (names or TOOLS.names())}  # type: ignore[misc]
