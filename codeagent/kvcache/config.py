"""Configuration of the model engine and the KV manager."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from codeagent.kvcache.catalog import DEFAULT_MODEL


class ModelConfig(BaseModel):
    """Which model runs and how."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = DEFAULT_MODEL
    """Embedded model (qwen-coder-1.5b, qwen-coder-0.5b, smollm2), a converted model's name from
    `codeagent models list`, a local HF model directory, a .gguf file, or an HF id."""
    weights: Literal["auto", "fp32", "bf16", "fp16", "int8"] = "auto"
    """Weight format: auto (fp32 on CPU, the only format that kept every fix; bf16 on CUDA), fp32,
    bf16, fp16, or int8 (torch dynamic int8 Linear layers, CPU only, ~4x faster, less skilled).
    The KV cache has the dtype of the activations (fp32 for fp32 and int8)."""
    device: str = "auto"
    """cpu, cuda, cuda:N, or auto (CUDA when present, placed by accelerate's device_map; else cpu)."""
    max_memory: dict[int | str, str] | None = None
    """Per-device memory caps passed to accelerate with device=auto, e.g. {0: "20GiB", cpu: "30GiB"}."""
    prefill_chunk: int = Field(1024, ge=16)
    """Tokens per prefill forward pass; only the last logits of a chunk are kept."""
    obs_window: int = Field(32, ge=1)
    """SnapKV/TOVA observation window: the last W queries of a forward give ``attn_obs``."""
    stats_queries: int = Field(0, ge=0)
    """Queries per forward whose attention feeds the cumulative and decayed statistics, spread
    evenly over the chunk (0: every query; scored STATS_BLOCK at a time, never an n x n matrix)."""
    threads: int | None = None
    """torch intra-op threads; None keeps torch's default."""


def default_block_weights() -> dict[str, float]:
    """Structural weight of each block type (names of BlockType, lower case)."""
    return {
        "function_signature": 1.0, "class_declaration": 1.0, "decorator": 0.8, "import": 0.8, "global": 0.8,
        "error": 0.9, "docstring": 0.5, "control_flow": 0.45, "statement": 0.35, "function_body": 0.35,
        "none": 0.3, "text": 0.3, "tool_call": 0.4, "comment": 0.15, "log": 0.1,
    }


def default_kind_weights() -> dict[str, float]:
    """Structural weight of each segment kind."""
    return {
        "system": 0.9, "issue": 1.0, "plan": 0.7, "code": 0.6, "tool_call": 0.5, "tool_output": 0.4,
        "file_view": 0.6, "test_log": 0.3, "error": 0.9, "text": 0.5, "template": 0.6,
    }


class KVConfig(BaseModel):
    """The user's ``kv`` settings: budget and cadence (read by the manager) and every policy's knobs.

    Policies are dataclasses owning their knobs (``codeagent/kvcache/policies``); the registry builds
    the one named by ``policy`` from these settings, each field taking the value of the setting with
    its name (``Policy.from_settings``), so ``kv.<knob>`` works in YAML and ``--set`` for every policy.
    """

    model_config = ConfigDict(extra="forbid")

    policy: str = "default"
    """Policy name: full, window, h2o, snapkv, tova, codecomp, commitkv, default."""
    mode: Literal["selective", "merge", "hybrid"] = "hybrid"
    """selective drops only; merge merges only; hybrid keeps, merges and drops."""
    unit: Literal["token", "line"] = "token"
    """What codecomp and default keep or drop: single tokens, or whole lines (a line's mean score decides; a
    dropped line leaves at most one merged summary slot per block). Lines lost retention on the fact-recall
    bench (docs/benchmarks.md), so tokens are the default."""
    budget_tokens: int | None = None
    """Hard cap on physical slots. None means use target_ratio of the logical length."""
    target_ratio: float = Field(1.0, gt=0.0, le=1.0)
    """Fraction of the logical length kept when budget_tokens is None (1.0 = no compression)."""
    min_tokens: int = Field(256, ge=0)
    """Below this many physical slots compression does nothing."""
    structural_weight: float = 0.4
    """Weight a of the structural term in score = a*structural + b*semantic + c*temporal."""
    semantic_weight: float = 0.4
    """Weight b of the semantic (attention mass) term."""
    temporal_weight: float = 0.2
    """Weight c of the temporal (recency and access heat) term."""
    depth_decay: float = 0.85
    """Structural weight is multiplied by depth_decay ** depth."""
    boundary_bonus: float = 0.2
    """Added to the structural weight of a block-boundary token."""
    recency_halflife: int = Field(512, ge=1)
    """Logical positions after which the recency term halves."""
    attn_decay: float = Field(0.9, gt=0.0, le=1.0)
    """Per-forward decay applied to the decayed attention mass accumulator."""
    merge_threshold: float = Field(0.9, ge=-1.0, le=1.0)
    """Minimum key cosine similarity for two slots of the same block to merge."""
    keep_fraction: float = Field(0.7, ge=0.0, le=1.0)
    """In hybrid mode, share of the budget filled by the top scorers kept as they are."""
    score_update_freq: int = Field(64, ge=1)
    """Generated tokens between two compression checks during decode."""
    commit_threshold: float = Field(0.1, ge=0.0)
    """A span is cold when its slots draw less than this share of a uniform attention share."""
    cold_checks: int = Field(3, ge=1)
    """Consecutive cold checks that move a span active -> staged -> committed."""
    compression_interval: int = Field(256, ge=1)
    """Appended tokens between two lifecycle checks."""
    summary_entries: int = Field(4, ge=1)
    """Summary slots a committed span of one block is merged into (CommitKV)."""
    fold_commits: Literal["eager", "pressure"] = "pressure"
    """When a committed subtask is folded into its summary entries: at the commit (eager), or only
    once the budget needs the room, oldest committed subtask first (pressure: keeps quality the
    budget did not need to give up)."""
    pinned_cap: float = Field(0.75, gt=0.0, le=1.0)
    """Pinned slots may use at most this share of the budget, and no more than the sinks and the recent window
    leave of it; past it ``pinned_overflow`` applies."""
    pinned_overflow: Literal["merge_oldest", "release_lowest", "evict_lowest"] = "evict_lowest"
    """Past the pinned cap: unpin pinned lines, in the order ``release_by`` gives, so they compete with the rest
    like any other slot (release_lowest), or mark them evictable so each goes whole rather than token by token
    (evict_lowest), or merge the oldest pinned slots pairwise (merge_oldest). Either way
    the issue and the caller's protected spans stay."""
    release_by: Literal["uses", "uses_bodies", "score"] = "uses"
    """Which pinned lines the pinned cap unpins first: those defining the names the session uses least
    (uses: a definition used three times or more counts as used, and so does one nothing uses yet, which code
    not shown yet will: ``release_waiting``; the score orders lines within a count, as a repository map ranks
    definitions by references), the same with a pinned short body counting its header's uses (uses_bodies:
    the body goes with its header, not before every header), or simply the lowest mean score (score)."""
    release_waiting: Literal["globals", "definitions"] = "definitions"
    """Which definitions nothing uses yet count as used past the pinned cap (``release_by`` uses): module bindings
    only (globals: a constant is defined to be used, by code not shown yet), or also functions and classes nothing
    calls yet (definitions: the code being written next is what will call them)."""
    release_few_uses: int = Field(2, ge=1, le=3)
    """Past the pinned cap (``release_by`` uses), a definition of a ``release_waiting`` kind that the session uses
    at least once counts as used at least this many times, so the score, not the count, orders those used a little
    (1: once goes before twice). One use is no sign that a name matters less than two: ``TORCHGEN_ROOT``, used once
    by ``REPO_ROOT = TORCHGEN_ROOT.parent``, went before every constant used twice, and the next line needed it."""
    release_keeps_names: Literal["none", "bindings", "definitions"] = "bindings"
    """Past the pinned cap, a module binding's line released keeps its name and the token after it
    (``_ForkingPickler =``) until the rest of every line the release order reaches has gone (bindings), so does a
    function's or a class's header (definitions: ``def is_tensor_list(``), or none does: the next line can still
    copy a name whose definition no longer fits (``obj = _ForkingPickler.dumps(obj)``)."""
    release_repeats: Literal["none", "globals", "all"] = "globals"
    """Past the pinned cap, among lines of one use count: release first those that repeat a better scoring pinned
    line (token-set Jaccard >= ``REPEAT_JACCARD``: a table of ``is_x = check('X')`` bindings), so one line of each
    shape and the unique ones stay: for module bindings (globals), for every pinned line (all), or not (none)."""
    pin_twin_lines: int = Field(3, ge=0, le=8)
    """Past the budget, pin the lines that followed the earlier stretch the newest lines repeat (an override of a
    method shown above, a second branch of a pattern: ``twins.twin_rows``), this many (0: none); the pinned cap
    releases them last, the next enforce unpins them. What followed the twin is what the model copies next
    (``_join_param_hints(param_hint)`` in the parent's ``format_message`` when an override of it is being written)."""
    lift_rare_uses: int = Field(1, ge=0)
    """Past the budget, per cached definition the session uses at least once and at most this many times (besides
    its definitions), its newest use line (code in a body or at module level, not pinned) ranks above every other
    slot the pins and the recent window leave (``rare_uses``; 0: none). The header says the parameters, the one use
    says how this code calls it (``_call_if_exists(result, '_setupStdout')``), which the next such call copies."""
    release_continuations: bool = True
    """Past the pinned cap, release first the lines that continue a definition header begun on an earlier line
    (the parameters of a ``def f(`` written one per line, its closing ``) -> T:``), in the order ``release_by``
    gives, then whole definitions: the line holding a name keeps it callable by name, and a budget short of every
    pin keeps more names rather than fewer complete signatures."""
    pin_repeated_uses: bool = True
    """Once over budget, pin per defined name the newest cached line that uses it and whose text the session has
    written twice or more (``return Settings(timeout, method, ...)``: the pattern the next such line copies;
    a definition kept without any of its uses leaves the model guessing how it is called); the pinned cap ranks
    it by the name's uses, as it ranks the definition."""
    pin_module_calls: bool = True
    """With ``pin_repeated_uses``, a line opening a module-level statement with a call counts as a repeated text
    though written once (``manager.add_handler(str, set_text)``, ``atexit.register(close)``: the registration the
    next one copies)."""
    obs_weight: float = Field(0.0, ge=0.0, le=1.0)
    """Share of the semantic term taken from the last observation window's attention (SnapKV's
    view at the end of the latest message, max-pooled); the rest is the decayed attention mass."""
    proxy_weight: float = Field(0.5, ge=0.0, le=1.0)
    """Share of the semantic term taken from the learned proxy (``kvcache/proxy.py``: a small MLP over each
    slot's tags, state, age and attention statistics, trained offline to predict the attention the next tokens
    draw); the rest is the attention term above."""
    sink_tokens: int = Field(4, ge=0)
    """Attention-sink tokens at the start that every policy keeps."""
    recent_tokens: int = Field(64, ge=0)
    """Most recent tokens that every policy keeps."""
    pool_kernel: int = Field(7, ge=1)
    """SnapKV: max-pool kernel over observation-window attention."""
    max_merge: int = Field(8, ge=2)
    """Most slots one hybrid merge may fold together."""
    block_weights: dict[str, float] = Field(default_factory=default_block_weights)
    """Structural weight of each block type (names of BlockType, lower case)."""
    kind_weights: dict[str, float] = Field(default_factory=default_kind_weights)
    """Structural weight of each segment kind, multiplied with the block weight."""
    pin_signatures: bool = True
    """Lifecycle policies pin function/class headers, decorators, imports and module-level constants."""
    pin_short_bodies: int = Field(2, ge=0)
    """With ``pin_signatures``, also pin the body of a function whose body (docstring and comments aside) is at
    most this many lines, with its header: one-line wrappers and properties are code a continuation copies
    whole (a sibling's ``return`` line). 0: off."""
    pin_named: bool = True
    """The headers of definitions the issue names (in backticks, called, or spelled like code) are pinned, and
    past the pinned cap released only down to ``named_cap``."""
    named_cap: float = Field(0.5, gt=0.0, le=1.0)
    """Past the pinned cap, the pinned slots of definitions the issue names may keep at most this share of the
    budget; past it their lines are released before any other pin, the farthest into a body first, the headers
    last: an issue naming many long definitions cannot crowd out every other pin."""
    pin_named_body: int = Field(128, ge=0)
    """With ``pin_named``, also protect the first this many code tokens of a named definition's body (its
    docstring is protected anyway): the lines a wrapper or a fix of that definition reads its parameters in.
    0: the header and docstring only."""
