"""Exceptions that steer the agent loop: one kind retries the turn, the other ends the run."""

from __future__ import annotations


class AgentSignal(Exception):
    """Base of the loop's control-flow exceptions; ``str(exc)`` is the reason shown to people."""


class Retry(AgentSignal):
    """The turn failed in a way the model can fix: tell it and go on."""


class FormatError(Retry):
    """The reply holds no well-formed action block (or names an unknown tool)."""


class Nudge(Retry):
    """The step stalls (an action repeated, or many turns without an edit): the model is told.

    ``str(exc)`` says why; ``message`` is what the model reads; ``run`` says whether the action still runs first
    (a new action does; a repeated one does not).
    """

    def __init__(self, reason: str, message: str, run: bool = False) -> None:
        super().__init__(reason)
        self.message = message
        self.run = run


class StepStuck(AgentSignal):
    """The step still stalls after a nudge: it ends as given up, is committed, and the next step starts."""


class Terminate(AgentSignal):
    """The run ends; ``status`` says how."""

    status = "stopped"


class Finished(Terminate):
    """The model called finish, or every plan step is done."""

    status = "finished"

    def __init__(self, reason: str, summary: str = "") -> None:
        super().__init__(reason)
        self.summary = summary


class GaveUp(Finished):
    """Every plan step has ended, some given up; resolved only if the final tests pass on a real change."""

    status = "stopped"


class StepLimit(Terminate):
    """The run used its turns."""


class TimeLimit(Terminate):
    """The run used its wall-clock time."""


class TokenLimit(Terminate):
    """The model generated as many tokens as the run allows."""


class ContextLimit(Terminate):
    """The model's context (logical positions) is nearly used up."""


class FormatLimit(Terminate):
    """Too many malformed replies in a row."""

    status = "failed"


class EngineFailure(Terminate):
    """The engine could not go on (e.g. the cache cannot be brought within its budget)."""

    status = "failed"


class Interrupted(Terminate):
    """Ctrl-C: the run stops where it is, with everything saved."""

    status = "interrupted"
