"""Parsing a model reply into one action: a fenced block named after a tool.

The format suits small models without a tool-calling API::

    ```view calc/ops.py 10-20
    ```
    ```bash
    ls -la
    ```
    ```edit calc/ops.py
    <<<<<<< SEARCH
    old lines
    =======
    new lines
    >>>>>>> REPLACE
    ```

The header line after the fence names the tool and may carry the first argument (a path);
otherwise the first body line does. Generation stops at a closing fence (:data:`STOP`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from codeagent.agent.events import FormatError
from codeagent.kvcache.languages import FENCES, language_for_path

STOP = ["```\n"]
"""Stop strings for an action turn: a fence followed by a newline (only a closing fence has none between)."""

PRIMER = "```"
"""What an action reply is primed with: the model continues with a tool name."""

EDIT_PRIMER = "<<<<<<< SEARCH\n"
"""How a primed edit block goes on after its path line (the model continues with the old lines)."""

DONE = "done"
"""The pseudo-tool that ends the current plan step (handled by the loop, not by a tool)."""

NO_HEADER = frozenset({"bash", "run_tests", "diff", "finish", DONE})
"""Tools whose block starts with a newline after the name (the others take a path or pattern there)."""

PATH_HEADER = frozenset({"view", "edit"})
"""Tools whose header is an existing file's path."""

ALIASES = {
    "sh": "bash", "shell": "bash", "console": "bash", "cat": "view", "open": "view", "read": "view",
    "test": "run_tests", "tests": "run_tests", "pytest": "run_tests", "grep": "search", "find": "search",
    "submit": "finish", "write": "create", "replace": "edit", "next": DONE, "step_done": DONE,
}

_FENCE = re.compile(r"```([A-Za-z_][\w-]*)[ \t]*([^\n]*)(?:\n|$)")
_CLOSE = re.compile(r"^[ \t]*```[ \t]*$", re.M)
_SR = re.compile(r"^<{3,}[ \t]*SEARCH[ \t]*\n(.*?)\n?^={3,}[ \t]*\n(.*?)\n?^>{3,}[ \t]*(?:REPLACE)?[ \t]*$",
                 re.M | re.S)
_RANGE = re.compile(r"^(\d+)\s*(?:-|:|,|\s)\s*(\d+)$")


@dataclass
class Action:
    """One parsed action: the tool, its arguments, and where it sits in the reply."""

    tool: str
    args: dict[str, Any]
    start: int  # char span of the whole fenced block in the reply
    end: int
    thought: str = ""
    code: tuple[int, int, str | None] | None = None  # char span of code inside the block, and its language
    raw: str = field(default="", repr=False)

    def brief(self) -> str:
        """One line for displays: ``view calc/ops.py`` or ``bash pytest -q``."""
        first = next((str(v) for v in self.args.values() if v not in (None, "")), "")
        first = first.strip().splitlines()[0] if first.strip() else ""
        return f"{self.tool} {first[:80]}".rstrip()


def _split_first(header: str, body: str) -> tuple[str, str]:
    """(first argument, rest of body): the header if it has text, else the body's first line."""
    if header.strip():
        return header.strip(), body
    first, _, rest = body.partition("\n")
    return first.strip(), rest


def _view(header: str, body: str) -> tuple[dict, None]:
    line, _ = _split_first(header, body)
    parts = line.split(None, 1)
    if not parts:
        raise FormatError("view needs a path: ```view path/to/file.py```")
    args: dict[str, Any] = {"path": parts[0]}
    if len(parts) > 1:
        m = _RANGE.match(parts[1].strip())
        if not m:
            raise FormatError(f"view takes a path and an optional line range like 10-40, got {parts[1]!r}")
        args["start"], args["end"] = int(m.group(1)), int(m.group(2))
    return args, None


def _search(header: str, body: str) -> tuple[dict, None]:
    pattern, rest = _split_first(header, body)
    if not pattern:
        raise FormatError("search needs a pattern on the first line (and optionally a file glob on the second)")
    glob = rest.strip().splitlines()[0].strip() if rest.strip() else ""
    return ({"pattern": pattern, "path": glob} if glob else {"pattern": pattern}), None


def _edit(header: str, body: str, offset: int) -> tuple[dict, tuple[int, int, str | None]]:
    path, rest = _split_first(header, body)
    if not path:
        raise FormatError("edit needs the file path after the tool name: ```edit path/to/file.py")
    m = _SR.search(rest)
    if not m:
        raise FormatError("edit needs a block <<<<<<< SEARCH / exact old lines / ======= / new lines / >>>>>>> REPLACE")
    if not m.group(1).strip():
        raise FormatError("the SEARCH part of an edit is empty: copy the exact lines to change")
    base = offset + (len(body) - len(rest))
    return {"path": path, "search": m.group(1), "replace": m.group(2)}, (base + m.start(), base + m.end(),
                                                                         language_for_path(path))


def _create(header: str, body: str, offset: int) -> tuple[dict, tuple[int, int, str | None]]:
    path, rest = _split_first(header, body)
    if not path:
        raise FormatError("create needs the file path after the tool name: ```create path/to/file.py")
    content = rest if rest.endswith("\n") or not rest else rest + "\n"
    base = offset + (len(body) - len(rest))
    return {"path": path, "content": content}, (base, base + len(rest), language_for_path(path))


def parse(text: str, tools: set[str] | frozenset[str], truncated: bool = False) -> Action:
    """The first action block of ``text``; :class:`FormatError` when there is none or it is malformed."""
    m = _FENCE.search(text)
    if m is None:
        if "```" in text:
            raise FormatError("a fence needs a tool name right after ```, like ```view PATH")
        raise FormatError("no action block found")
    name = m.group(1).lower()
    name = ALIASES.get(name, name) if name not in tools else name
    header = m.group(2)
    body_start = m.end()
    close = _CLOSE.search(text, body_start) if m.group(0).endswith("\n") else None
    inline = header.find("```")
    if inline >= 0:  # one-line block: ```view path```
        header = header[:inline]
        body, end = "", m.start(2) + inline + 3
    elif close is None:
        tail = text[body_start:].rstrip()
        if tail.endswith("```"):
            tail = tail[:-3]
        if truncated:
            raise FormatError("the reply was cut off before the closing ``` of its action block; keep actions short")
        body, end = tail, len(text)
    else:
        body, end = text[body_start:close.start()], close.end()
    body = body[:-1] if body.endswith("\n") else body
    if name not in tools:
        if name in FENCES:
            raise FormatError(f"a ```{m.group(1)} block is not an action; to change a file use ```edit PATH with "
                              "SEARCH/REPLACE, to run code use ```bash")
        raise FormatError(f"unknown tool {m.group(1)!r}")
    code: tuple[int, int, str | None] | None = None
    if name == "view":
        args, code = _view(header, body)
    elif name == "search":
        args, code = _search(header, body)
    elif name == "edit":
        args, code = _edit(header, body, body_start)
    elif name == "create":
        args, code = _create(header, body, body_start)
    elif name == "bash":
        command = (header.strip() + "\n" + body).strip() if header.strip() else body.strip()
        if not command:
            raise FormatError("bash needs a command inside the block")
        args, code = {"command": command}, (body_start, body_start + len(body), "bash")
    elif name == "run_tests":
        args = {"args": (header.strip() or body.strip())}
    elif name == "finish":
        args = {"summary": (header.strip() + " " + body.strip()).strip() or "done"}
    elif name == DONE:
        args = {"note": (header.strip() + " " + body.strip()).strip()}
    else:
        args = {}
    return Action(tool=name, args=args, start=m.start(), end=end, thought=text[:m.start()].strip(), code=code,
                  raw=text[m.start():end])


_NUMBERED = re.compile(r"^\s*(?:step\s*)?(\d+)\s*[.):]\s*(.+?)\s*$", re.I)
_BULLET = re.compile(r"^\s*[-*•]\s+(.+?)\s*$")


def _copied(step: str, prompt: str) -> bool:
    if not re.search(r"[A-Za-z]{3,}", step):
        return True
    return bool(prompt) and step[:16].lower() in prompt.lower()


def parse_plan(text: str, max_steps: int, prompt: str = "") -> list[str]:
    """Plan steps from numbered lines (``1. ...``), else bullets, else plain lines.

    Steps without a word, or whose start is copied from ``prompt`` (the instructions), are dropped;
    no step left is a format error.
    """
    lines = [ln for ln in text.replace("```", "").splitlines() if ln.strip()]
    steps = [m.group(2) for ln in lines if (m := _NUMBERED.match(ln))]
    if not steps:
        steps = [m.group(1) for ln in lines if (m := _BULLET.match(ln))]
    if not steps:
        steps = [ln.strip() for ln in lines if len(ln.strip()) > 3]
    steps = [s.strip().rstrip(":") for s in steps if s.strip()]
    if not steps:
        raise FormatError("the plan is empty: write numbered steps, one per line")
    steps = [s for s in steps if not _copied(s, prompt)]
    if not steps:
        raise FormatError("the plan repeats the instructions or has no real steps: write your own steps for this issue")
    if len(steps) > max_steps:
        steps = steps[: max_steps - 1] + ["; ".join(steps[max_steps - 1:])]
    return [s[:200] for s in steps]
