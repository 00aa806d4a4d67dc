"""Exceptions that steer the agent: a malformed reply, and the ways a run ends."""

from __future__ import annotations


class AgentSignal(Exception):
    """Base of the loop's control-flow exceptions; ``str(exc)`` is the reason shown to people."""


class FormatError(AgentSignal):
    """The reply does not hold what its format asks for (a code block, an action block)."""


class Terminate(AgentSignal):
    """The run ends; ``status`` says how."""

    status = "unresolved"


class Resolved(Terminate):
    """The tests that failed pass and nothing that passed fails."""

    status = "resolved"


class Unresolved(Terminate):
    """No candidate met that bar (the best one's patch is kept)."""


class TimeLimit(Unresolved):
    """The run used its wall-clock time."""


class TokenLimit(Unresolved):
    """The model generated as many tokens as the run allows."""


class ContextLimit(Unresolved):
    """The model's context (logical positions) is nearly used up."""


class EngineFailure(Terminate):
    """The engine could not go on (e.g. the cache cannot be brought within its budget)."""

    status = "failed"


class Interrupted(Terminate):
    """Ctrl-C: the run stops where it is, with everything saved."""

    status = "interrupted"
