"""Settings of the agent loop (the ``agent`` section of the settings file, or ``--set agent.x=y``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from codeagent.config import validate


class AgentConfig(BaseModel):
    """Limits, sampling and tool settings of one agent run."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(30, ge=1)
    """Most model turns (one action each) in a run, the plan turn included."""
    max_wall_s: float = Field(1800.0, gt=0)
    """Wall-clock limit of a run, in seconds; checked before every turn."""
    max_gen_tokens: int = Field(12000, ge=1)
    """Most tokens the model may generate over the whole run."""
    max_new_tokens: int = Field(128, ge=8)
    """Most tokens of one action turn (generation also stops after an action block's closing fence)."""
    plan_tokens: int = Field(96, ge=8)
    """Most tokens of the plan turn (it also stops at a blank line)."""
    plan_primer: str = "1. View"
    """How a primed plan reply starts (the model continues it; reading the code is nearly always step one)."""
    choose_tool: bool = True
    """After the primer fence, pick the tool name by the model's likelihood among the offered tools, and for
    view/edit the path among the repository's files (one short scoring pass per option), instead of letting a
    small model ramble; engines that cannot score skip this."""
    prime_replies: bool = True
    """Start each reply with the opening of its expected form (a fence for an action, ``1.`` for a plan);
    keeps small models in format. The primer is part of the reply."""
    summary_tokens: int = Field(64, ge=0)
    """Most tokens of the final summary turn; 0 skips it (the summary is then built from the run)."""
    max_plan_steps: int = Field(4, ge=1)
    """Plan steps kept from the model's plan; the rest are folded into the last one."""
    max_debug_rounds: int = Field(3, ge=1)
    """Failing test runs allowed in one step's debug phase before the step is given up."""
    max_idle_turns: int = Field(3, ge=1)
    """Action turns a plan step may take without a successful edit. The next one runs and then gets a nudge (edit or
    say done); an action repeated twice in a row gets the nudge instead of running. A step that stalls again after
    its nudge (idle, repeated or malformed) is given up and committed all the same."""
    focus_tools: bool = True
    """With ``choose_tool``: once the file the step (or issue) names was viewed, or after a nudge, offer only the
    tools that move the step on (edit, done; run_tests after an edit) and edit the files just viewed."""
    max_format_errors: int = Field(3, ge=1)
    """Malformed replies in a row that end the run."""
    temperature: float = Field(0.0, ge=0.0)
    """Sampling temperature; 0 is greedy (deterministic)."""
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    """Nucleus sampling cut-off when temperature > 0."""
    seed: int | None = 0
    """Sampling seed (None: random)."""
    kv_budget_tokens: int = Field(3072, ge=64)
    """KV budget (physical slots) for agent runs when ``kv.budget_tokens`` is not set explicitly."""
    context_margin: int = Field(512, ge=0)
    """The run ends when fewer than max_new_tokens + this many logical positions remain in the model's context."""
    max_output_chars: int = Field(2000, ge=200)
    """Tool output longer than this is cut to head and tail (a 135M model's budget is small)."""
    command_timeout_s: float = Field(120.0, gt=0)
    """Time limit of one command or test run, in seconds."""
    test_command: str | None = None
    """Shell command that runs the tests; None lets run_tests detect the runner."""
    tools: list[str] = Field(default_factory=lambda: ["view", "search", "edit", "create", "bash", "run_tests", "diff",
                                                      "finish"])
    """Tools offered to the model (``done``, which ends a plan step, is always offered)."""
    check_on_finish: bool = True
    """Run the tests when the run ends and record whether they pass."""


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
