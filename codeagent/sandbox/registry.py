"""The registry of sandbox kinds."""

from __future__ import annotations

from codeagent.protocols import Sandbox
from codeagent.registry import Registry

SANDBOXES: Registry[Sandbox] = Registry("sandbox")
