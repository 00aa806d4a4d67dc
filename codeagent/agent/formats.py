"""Reply formats: how a reply is primed, where it stops, how it is parsed, how the prompt describes it.

One :class:`ActionFormat` object per format, chosen in config (``agent.format``), so a format lives in
one place. ``definition`` (the default of ``solve``): the reply is one fenced code block holding the
complete new version of a definition, parsed into a ``replace`` action. ``blocks``: one fenced
action block named after a tool (view, search, edit, create, bash, ...), as the repl uses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codeagent.agent import actions
from codeagent.agent.actions import Action
from codeagent.agent.events import FormatError
from codeagent.agent.prompts import render

FILE_COMMENT = re.compile(r"^\s*(?:#|//)\s*file:\s*(\S+)\s*$", re.M)


@dataclass(frozen=True)
class ActionFormat:
    """Base of the reply formats."""

    name: str = ""

    def primer(self, language: str | None = None) -> str:
        """How a reply starts (appended before generation; the model continues it)."""
        return ""

    def stop(self) -> list[str]:
        """Stop strings of a reply."""
        return []

    def parse(self, text: str, tools: frozenset[str] = frozenset()) -> Action:
        """The reply (primer included) as one action; :class:`FormatError` when malformed."""
        raise FormatError("no parser")

    def spec(self) -> str:
        """What the prompt says about the format."""
        return ""


@dataclass(frozen=True)
class DefinitionFormat(ActionFormat):
    """The complete new version of one definition, in one fenced block, parsed into ``replace``."""

    name: str = "definition"

    def primer(self, language: str | None = None) -> str:
        return f"```{language or ''}\n"

    def stop(self) -> list[str]:
        return ["\n```"]

    def parse(self, text: str, tools: frozenset[str] = frozenset()) -> Action:
        m = re.search(r"```[\w+-]*[^\n]*\n", text)
        if m is None:
            raise FormatError("no fenced code block: write the complete definition in one ``` block")
        body = text[m.end():]
        end = body.find("\n```")
        if end < 0 and body.rstrip().endswith("```"):
            end = body.rstrip().rfind("```")
        code = body if end < 0 else body[:end]
        if not code.strip():
            raise FormatError("the code block is empty")
        args: dict[str, str] = {"code": code.rstrip() + "\n"}
        path = FILE_COMMENT.search(code)
        if path:
            args["path"] = path.group(1)
            args["code"] = FILE_COMMENT.sub("", code, count=1).strip("\n") + "\n"
        start = m.end()
        return Action(tool="replace", args=args, start=0, end=min(len(text), start + len(code) + 4),
                      thought=text[:m.start()].strip(), code=(start, start + len(code), None), raw=text)

    def spec(self) -> str:
        return render("definition_spec")


@dataclass(frozen=True)
class BlockFormat(ActionFormat):
    """One fenced action block named after a tool (see :mod:`codeagent.agent.actions`)."""

    name: str = "blocks"

    def primer(self, language: str | None = None) -> str:
        return actions.PRIMER

    def stop(self) -> list[str]:
        return list(actions.STOP)

    def parse(self, text: str, tools: frozenset[str] = frozenset()) -> Action:
        return actions.parse(text, tools)

    def spec(self) -> str:
        return render("actions")


FORMATS: dict[str, ActionFormat] = {"definition": DefinitionFormat(), "blocks": BlockFormat()}


def get_format(name: str) -> ActionFormat:
    """The format called ``name``."""
    try:
        return FORMATS[name]
    except KeyError:
        from codeagent.errors import InputError

        raise InputError(f"unknown reply format {name!r} (known: {', '.join(FORMATS)})") from None
