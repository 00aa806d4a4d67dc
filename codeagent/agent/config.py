"""Settings of the agent loop (the ``agent`` section of the settings file, or ``--set agent.x=y``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from codeagent.config import validate


class AgentConfig(BaseModel):
    """Limits, sampling and tool settings of one agent run."""

    model_config = ConfigDict(extra="forbid")

    format: str = "definition"
    """Reply format of solve (one ActionFormat in codeagent/agent/formats.py): ``definition``, the complete new
    version of a definition in one code block (what small coder models write reliably)."""
    candidates: int = Field(4, ge=1)
    """Candidate repairs from one KV snapshot (the first greedy, then branch points, then sampled at
    candidate_temperature); the first one the tests accept ends the run."""
    reproductions: int = Field(3, ge=1)
    """When no test fails before the fix, the model's reproduction tests are sampled like candidates and up to
    this many distinct ones that fail (by an assertion or the code's own exception) are kept, each in its own
    file: a repair that makes every test of one pass, breaking nothing, resolves the issue, and the reproductions
    it disagrees with leave the patch (a small model often writes one with a wrong expectation)."""
    branches: bool = True
    """Candidates after the greedy one start at branch points: the shown definitions are scored as the reply, and
    each candidate is forced to take the likeliest other token where the model doubts the code most, then finishes
    greedily (targeted edits that sampling seldom finds); sampled candidates fill the rest."""
    candidate_temperature: float = Field(0.7, ge=0.0)
    """Sampling temperature of the candidates after the first."""
    temperature_step: float = Field(0.3, ge=0.0)
    """Each earlier candidate of the same request that repeated a reply or restated the code unchanged raises the
    temperature of the next sampled one by this much (up to 1.5): a small model's samples at 0.7 often repeat the
    greedy reply word for word."""
    max_debug_rounds: int = Field(1, ge=0)
    """Rounds in which the best failing candidate's test output goes back to the model for another try."""
    debug_candidates: int = Field(2, ge=1)
    """Candidates (from one snapshot: greedy, branch points, samples) in each debug round."""
    view_turns: int = Field(1, ge=0)
    """Definitions the model may ask to see (``view PATH::NAME`` from the repository map) at the start of each
    debug round, before it tries again; 0 turns the question off."""
    plan: bool = False
    """Before the repairs the model writes a short plan (what is wrong, which definition to change), kept in the
    cache as a PLAN span; off by default: small models plan poorly, and the phases already are the plan."""
    max_shown_definitions: int = Field(3, ge=1)
    """Most definitions localization shows the model (besides the first failing test)."""
    max_failure_chars: int = Field(1500, ge=200)
    """Failing test output shown to the model is cut to about this many characters."""
    max_reply_tokens: int = Field(480, ge=32)
    """Most tokens of one candidate (also capped by the size of the definitions shown)."""
    max_wall_s: float = Field(1800.0, gt=0)
    """Wall-clock limit of a run, in seconds; checked before every candidate."""
    max_gen_tokens: int = Field(4000, ge=1)
    """Most tokens the model may generate over the whole run."""
    max_steps: int = Field(30, ge=1)
    """Most model turns of one repl request."""
    max_new_tokens: int = Field(128, ge=8)
    """Most tokens of one repl action turn (generation also stops after an action block's closing fence)."""
    plan_tokens: int = Field(96, ge=8)
    """Most tokens of a repl /plan reply."""
    max_plan_steps: int = Field(4, ge=1)
    """Plan steps kept from a repl /plan reply; the rest are folded into the last one."""
    temperature: float = Field(0.0, ge=0.0)
    """Sampling temperature of repl replies; 0 is greedy (deterministic)."""
    top_p: float = Field(0.95, gt=0.0, le=1.0)
    """Nucleus sampling cut-off when temperature > 0 (the tail it cuts is where a small model's hotter samples
    pick stray tokens and end in garbage)."""
    seed: int | None = 0
    """Sampling seed (None: random); candidate n uses seed + n."""
    kv_budget_tokens: int = Field(3072, ge=64)
    """KV budget (physical slots) for agent runs when ``kv.budget_tokens`` is not set explicitly."""
    max_output_chars: int = Field(2000, ge=200)
    """Tool output longer than this is cut to head and tail."""
    command_timeout_s: float = Field(120.0, gt=0)
    """Time limit of one command or test run, in seconds."""
    test_command: str | None = None
    """Shell command that runs the tests; None detects the runner (pytest, node --test, go test, ...)."""
    tools: list[str] = Field(default_factory=lambda: ["view", "search", "edit", "replace", "create", "bash",
                                                      "run_tests", "diff", "finish"])
    """Tools offered to the model in the repl (``done`` ends a turn)."""


def agent_config(extra: dict) -> AgentConfig:
    """The ``agent`` section of ``Settings.extra`` validated; one-line errors for bad values."""
    return validate(AgentConfig, extra.get("agent") or {}, "agent.")


def sandbox_config(extra: dict, kind: str | None = None):
    """The ``sandbox`` section of ``Settings.extra`` validated, ``kind`` overriding its kind."""
    from codeagent.sandbox import SandboxConfig

    data = dict(extra.get("sandbox") or {})
    if kind is not None:
        data["kind"] = kind
    return validate(SandboxConfig, data, "sandbox.")
