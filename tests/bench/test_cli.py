"""The bench CLI's argument helpers."""

from __future__ import annotations

from codeagent.bench.cli import _policies
from codeagent.kvcache.registry import POLICIES, load_policies


def test_all_policies_come_from_the_registry():
    load_policies()
    names = _policies("all")
    assert names[0] == "full" and sorted(names) == POLICIES.names()
    assert _policies("full, default") == ["full", "default"]
