"""Sandboxes under test: local with bwrap, local with unshare, and docker where a daemon answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from codeagent.errors import InputError
from codeagent.sandbox import SandboxConfig
from codeagent.sandbox.docker_box import DockerSandbox, docker_unavailable
from codeagent.sandbox.isolation import choose
from codeagent.sandbox.local import LocalSandbox

LIMITS = dict(memory_bytes=1 << 30, pids_limit=64, max_output_bytes=64 * 1024, timeout_s=20)


def docker_skip_reason(image: str) -> str | None:
    """Why docker tests cannot run here, or None."""
    reason = docker_unavailable()
    if reason:
        return f"no docker daemon: {reason}"
    from codeagent.sandbox.docker_box import docker_client
    from codeagent.sandbox.image import image_exists

    client = docker_client()
    try:
        if not image_exists(client, image):
            return f"no docker image {image}: run `codeagent sandbox build` (.ci/docker.sh)"
    finally:
        client.close()
    return None


def make_sandbox(kind: str, workspace: Path, **cfg: object) -> LocalSandbox | DockerSandbox:
    """A sandbox of ``kind`` (bwrap, unshare, docker), skipping when this machine lacks it."""
    config = SandboxConfig(**{**LIMITS, "allow_weak": kind == "unshare", **cfg})
    if kind == "docker":
        reason = docker_skip_reason(config.image)
        if reason:
            pytest.skip(reason)
        return DockerSandbox(config, workspace)
    try:
        iso = choose(kind, workspace, workspace, config.network, config.allow_weak)
    except InputError as e:
        pytest.skip(f"{kind} unavailable: {e}")
    if iso.kind != kind:
        pytest.skip(f"{kind} unavailable: {iso.note}")
    return LocalSandbox(config, workspace, isolation=kind)


@pytest.fixture(params=["bwrap", "unshare", pytest.param("docker", marks=pytest.mark.docker)])
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LocalSandbox | DockerSandbox]:
    ws = tmp_path / "ws"
    ws.mkdir()
    box = make_sandbox(request.param, ws)
    yield box
    box.close()
