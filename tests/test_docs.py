"""The docs people are pointed to exist and say what the code does: help texts name files in the
repository, docs/formats.md names every field codeagent writes or reads, README links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_cli import codeagent

ROOT = Path(__file__).resolve().parents[1]


def test_bench_run_help_points_to_a_file_in_the_repository():
    r = codeagent("bench", "run", "--help")
    assert r.returncode == 0, r.stderr
    flat = " ".join(r.stdout.split())
    assert "shared/" not in flat and "docs/formats.md" in flat and (ROOT / "docs" / "formats.md").is_file()


def _fields(cls) -> list[str]:
    return list(cls.model_fields)


@pytest.mark.parametrize("owner,prefix", [
    ("codeagent.agent.trajectory:Trajectory", "`"),
    ("codeagent.agent.trajectory:MiniInfo", "`info."),
    ("codeagent.bench.tasks:Task", "`"),
    ("codeagent.bench.tasks:Segment", "`"),
])
def test_formats_page_names_every_field(owner: str, prefix: str):
    import importlib

    module, name = owner.split(":")
    cls = getattr(importlib.import_module(module), name)
    text = (ROOT / "docs" / "formats.md").read_text()
    missing = [f for f in _fields(cls) if f"{prefix}{f}`" not in text and f"`{f}`" not in text]
    assert not missing, f"docs/formats.md does not describe {name}: {missing}"


def test_readme_links_resolve():
    text = (ROOT / "README.md").read_text()
    links = [m for m in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text) if "://" not in m]
    assert "docs/settings.md" in links and "docs/formats.md" in links
    assert [m for m in links if not (ROOT / m).exists()] == []
