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

__all__ = ["SANDBOXES", "SandboxConfig", "open_sandbox", "resolve_kind", "sweep_leftovers"]


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


def sweep_leftovers(docker: bool = True) -> list[str]:
    """Remove what dead codeagent processes left: cgroups, sandbox homes and (``docker``) containers."""
    from codeagent.sandbox import cgroup, local

    removed = [str(p) for p in cgroup.sweep()] + [str(p) for p in local.sweep_homes()]
    if docker:
        from codeagent.sandbox.docker_box import sweep

        removed += sweep()
    return removed


def open_sandbox(cfg: SandboxConfig, workspace: Path, ro_paths: Sequence[Path] = ()) -> Sandbox:
    """A ready sandbox for ``workspace``; ``ro_paths`` are extra read-only mounts for docker.

    Leftovers of dead runs are swept first. ``auto`` uses docker when a daemon answers and the
    image starts, else local; the local sandbox's ``isolation`` then says why docker was not used.
    """
    from codeagent.errors import CodeagentError
    from codeagent.sandbox import docker_box, local

    kind, why = resolve_kind(cfg)
    sweep_leftovers(docker=kind == "docker")
    if kind == "docker":
        try:
            return docker_box.DockerSandbox(cfg, workspace, ro_paths=ro_paths)
        except CodeagentError as e:
            if cfg.kind != "auto":
                raise
            why = f"docker could not run ({e})"
    box = local.LocalSandbox(cfg, workspace)
    if cfg.kind == "auto":
        box.isolation = f"{box.isolation}; auto chose local: {why}"
    return box
