"""Registry of KV policies by short name."""

from codeagent.registry import Registry

POLICIES: Registry = Registry("policy")


def load_policies() -> None:
    """Import every policy module so each registers itself."""
    from codeagent.kvcache.policies import (  # noqa: F401
        codecomp, commitkv, default, full, h2o, snapkv, tova, window,
    )
