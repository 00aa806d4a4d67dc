"""What every tool gets to act with, and the registry of tools by short name."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from codeagent.protocols import Sandbox, Tool
from codeagent.registry import Registry

TOOLS: Registry[Tool] = Registry("tool")


@dataclass
class ToolContext:
    """The run's workspace and sandbox, plus limits, handed to every tool call."""

    workspace: Path
    sandbox: Sandbox
    max_output_chars: int = 8000
    command_timeout: float = 120.0
    test_command: str | None = None
    extra: dict = field(default_factory=dict)
