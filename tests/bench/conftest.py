"""Shared fixtures of the bench tests."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import pytest

from codeagent.bench import build
from codeagent.errors import CodeagentError


@pytest.fixture(scope="module")
def tokenizer():
    try:
        return build.load_default_tokenizer()
    except CodeagentError as exc:
        pytest.skip(f"embedded tokenizer unavailable: {exc}")


@pytest.fixture(scope="session")
def stdlib():
    """Roots for tasks built in tests: the standard library changes with the interpreter only, while site-packages
    change with every release on PyPI (and with them the files a seed picks)."""
    return [Path(sysconfig.get_paths()["stdlib"])]
