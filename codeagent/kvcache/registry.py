"""Registry of KV policies by short name: each name maps to a builder ``(KVConfig) -> policy``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeagent.registry import Registry

if TYPE_CHECKING:
    from codeagent.kvcache.config import KVConfig

POLICIES: Registry = Registry("policy")


def load_policies() -> None:
    """Import every policy module so each registers itself."""
    from codeagent.kvcache.policies import (  # noqa: F401
        codecomp, commitkv, default, full, h2o, snapkv, tova, window,
    )


def build_policy(cfg: "KVConfig", name: str | None = None):
    """The policy ``name`` (default ``cfg.policy``) with its knobs from ``cfg``; InputError for an unknown name."""
    load_policies()
    return POLICIES.get(name or cfg.policy)(cfg)


def policy_names() -> list[str]:
    """Every registered policy name, ``full`` first (the reference), then the others sorted."""
    load_policies()
    names = POLICIES.names()
    return sorted(names, key=lambda n: (n != "full", n))
