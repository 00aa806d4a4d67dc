"""Shared fixtures of the bench tests."""

from __future__ import annotations

import pytest

from codeagent.bench import build
from codeagent.errors import CodeagentError


@pytest.fixture(scope="module")
def tokenizer():
    try:
        return build.load_default_tokenizer()
    except CodeagentError as exc:
        pytest.skip(f"embedded tokenizer unavailable: {exc}")
