"""The memory limit binds the sandbox as a whole, not each process."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeagent.sandbox import SandboxConfig

from .conftest import need_bwrap, need_docker, need_root_cgroups

HOLD = ("for i in 1 2 3 4; do python3 -c \"import time; b = bytearray(200 * 1024 * 1024); time.sleep(4); "
        "print('held', len(b))\" & done; wait; echo done")


@pytest.mark.parametrize("kind", ["bwrap", "docker"])
def test_four_processes_of_200_mb_do_not_fit_in_300_mb(kind: str, tmp_path: Path) -> None:
    cfg = SandboxConfig(timeout_s=60, memory_bytes=300 * 1024**2)
    if kind == "bwrap":
        need_bwrap()
        need_root_cgroups()
        from codeagent.sandbox.local import LocalSandbox

        box = LocalSandbox(cfg, tmp_path)
        assert "for the whole sandbox" in box.limits
    else:
        need_docker()
        from codeagent.sandbox.docker_box import DockerSandbox

        box = DockerSandbox(cfg, tmp_path)
    try:
        r = box.run(HOLD, timeout=60)
        after = box.run("echo still-usable", timeout=10)
    finally:
        box.close()
    assert "done" in r.output and r.output.count("held 209715200") < 4, r.output
    if kind == "bwrap":
        assert "ran out of memory" in r.output
    assert after.output.strip() == "still-usable"
