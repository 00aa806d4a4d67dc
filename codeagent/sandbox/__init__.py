"""Where commands run: ``local`` (bubblewrap/unshare + rlimits) or ``docker`` (a container per run)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from codeagent.protocols import Sandbox
from codeagent.sandbox import docker_box, local  # noqa: F401 - registers the kinds
from codeagent.sandbox.config import SandboxConfig
from codeagent.sandbox.docker_box import docker_unavailable
from codeagent.sandbox.registry import SANDBOXES

__all__ = ["SANDBOXES", "SandboxConfig", "open_sandbox", "resolve_kind"]


def resolve_kind(cfg: SandboxConfig) -> tuple[str, str]:
    """The kind to use and why: ``auto`` becomes docker when a daemon answers quickly, else local."""
    if cfg.kind != "auto":
        return cfg.kind, "asked for"
    reason = docker_unavailable(timeout=2.0)
    return ("local", f"no docker daemon: {reason}") if reason else ("docker", "docker daemon answers")


def open_sandbox(cfg: SandboxConfig, workspace: Path, ro_paths: Sequence[Path] = ()) -> Sandbox:
    """A ready sandbox for ``workspace``; ``ro_paths`` are extra read-only mounts for docker."""
    kind, _ = resolve_kind(cfg)
    if kind == "docker":
        return SANDBOXES.get("docker")(cfg, workspace, ro_paths=ro_paths)  # type: ignore[call-arg]
    return SANDBOXES.get(kind)(cfg, workspace)  # type: ignore[call-arg]
