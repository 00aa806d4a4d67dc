"""Settings of the sandbox that commands run in."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SandboxConfig(BaseModel):
    """Where and under which limits the agent's commands run."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["auto", "docker", "local"] = "auto"
    """``docker`` (a container per run), ``local`` (bubblewrap + cgroup + rlimits) or ``auto``:
    docker when a daemon answers and the image starts, else local (with a note saying why)."""

    allow_weak: bool = False
    """Let the local sandbox fall back to ``unshare`` (or nothing) where bubblewrap cannot run. Those
    protect no file outside the workspace and no host socket; the run's report says so."""

    image: str = "codeagent-sandbox:bookworm"
    """Docker image the container runs (build it with ``codeagent sandbox build``)."""

    timeout_s: float = Field(120.0, gt=0)
    """Default wall-clock limit of one command, in seconds; the whole process tree is killed then."""

    memory_bytes: int = Field(4 * 1024**3, gt=0)
    """Memory limit of the whole sandbox: the container's limit for docker, a memory cgroup for local
    (where none can be made, only the per-process address-space rlimit)."""

    cpus: float = Field(1.0, gt=0)
    """CPU share for docker (cores); local turns it into a CPU-seconds rlimit per command."""

    pids_limit: int = Field(512, gt=0)
    """Most processes (and threads) a command may have alive at once."""

    max_output_bytes: int = Field(256 * 1024, gt=0)
    """Output kept per command; the rest is cut from the middle (head and tail kept) and counted."""

    max_file_bytes: int = Field(1024**3, gt=0)
    """Largest file a command may write (local sandbox, RLIMIT_FSIZE)."""

    lifetime_s: float = Field(6 * 3600.0, gt=0)
    """Docker: the container stops and is removed by itself after this long, even if codeagent was killed."""

    tmp_bytes: int = Field(1024**3, gt=0)
    """Docker: size of the container's tmpfs /tmp (its root file system is read-only)."""

    network: bool = False
    """Allow network access; off by default (network namespace / docker network ``none``)."""

    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for commands; names that look like secrets are still dropped."""
