"""Where commands run: ``local`` (bubblewrap/unshare + rlimits) or ``docker`` (a container per run).

Imports are lazy so that ``codeagent sandbox ...`` and the CLI start fast.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codeagent.protocols import Sandbox
    from codeagent.sandbox.config import SandboxConfig

__all__ = ["SANDBOXES", "SandboxConfig", "open_sandbox", "resolve_kind"]


def __getattr__(name: str) -> Any:
    if name == "SandboxConfig":
        from codeagent.sandbox.config import SandboxConfig

        return SandboxConfig
    if name == "SANDBOXES":
        from codeagent.sandbox import docker_box, local  # noqa: F401 - registers the kinds
        from codeagent.sandbox.registry import SANDBOXES

        return SANDBOXES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def resolve_kind(cfg: SandboxConfig) -> tuple[str, str]:
    """The kind to use and why: ``auto`` becomes docker when a daemon answers quickly, else local."""
    from codeagent.sandbox.docker_box import docker_unavailable

    if cfg.kind != "auto":
        return cfg.kind, "asked for"
    reason = docker_unavailable(timeout=2.0)
    return ("local", f"no docker daemon: {reason}") if reason else ("docker", "docker daemon answers")


def open_sandbox(cfg: SandboxConfig, workspace: Path, ro_paths: Sequence[Path] = ()) -> Sandbox:
    """A ready sandbox for ``workspace``; ``ro_paths`` are extra read-only mounts for docker."""
    from codeagent.sandbox import docker_box, local

    kind, _ = resolve_kind(cfg)
    if kind == "docker":
        return docker_box.DockerSandbox(cfg, workspace, ro_paths=ro_paths)
    return local.LocalSandbox(cfg, workspace)
