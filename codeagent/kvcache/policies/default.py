"""default: CommitKV's lifecycle (pins, commits, summaries) around CodeComp's structural scores."""

from __future__ import annotations

from codeagent.kvcache.config import KVConfig
from codeagent.kvcache.policies.base import POLICIES
from codeagent.kvcache.policies.codecomp import CodeComp
from codeagent.kvcache.policies.lifecycle import Lifecycle


@POLICIES.register("default")
def default(cfg: KVConfig) -> Lifecycle:
    """``Lifecycle(CodeComp())``: pinned slots (signatures, imports, the issue, open errors) always
    stay; the rest is ranked by structure x attention x recency, discounted by lifecycle state, then
    kept, merged within a block, or dropped. Commits fold a finished subtask into summary entries."""
    return Lifecycle.from_settings(cfg, base=CodeComp.from_settings(cfg))
