"""Render a built task in another agent's conventions, so the bench cannot flatter our own format.

A style decides the system prompt, the tool-call syntax, how a file view and a command's output
come back (and under which role), and how the assistant speaks. Restyling keeps the content, the
subtasks, the commits and the probe of the task, so every style of one task is the same problem:

- ``own``: codeagent's ``view PATH`` calls and ``{n:>6}\\t`` numbered views (the builder's output);
- ``raw``: function calls (``view_file(path="x.py", start_line=1, end_line=80)``), raw file content;
- ``minisweagent``: a THOUGHT and one ``bash`` block (``sed -n``/``cat``); results come back as user
  messages wrapped in ``<returncode>``/``<output>``;
- ``json``: OpenAI-style JSON calls and JSON results holding the file as a string;
- ``aider``: files pasted by the user as ``path`` + fence, commands run by the user, edits as
  SEARCH/REPLACE blocks;
- ``openhands``: CodeAct's XML function calls, ``cat -n`` views returned as ``EXECUTION RESULT`` user messages;
- ``sweagent``: SWE-agent's ``open``/``edit`` commands after a DISCUSSION, ``[File: ...]`` windows of ``12:code``;
- ``claude``: Claude Code's ``tool_use`` blocks (``Read``/``Bash``/``Edit``), views numbered ``{n:>6}→line``;
- ``cline``: Cline's XML tool elements after a ``<thinking>``, ``[read_file for 'x'] Result:`` views numbered
  ``12 | x``;
- ``codex``: Codex CLI's ``shell`` calls (``["bash", "-lc", "sed -n ..."]``), JSON results, ``apply_patch`` edits.

The last five were added after the tagger's format work, as a check on formats nothing was tuned on
(``openhands``, ``sweagent`` and ``claude`` in one round, ``cline`` and ``codex`` in the next).
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from typing import Callable

from codeagent.bench.tasks import Segment, Task
from codeagent.errors import InputError
from codeagent.kvcache.tagger_content import numbered_rows

_VIEW = re.compile(r"^view (\S+)(?: (\d+)-(\d+))?$")
_SED = re.compile(r"^bash sed -n '(\d+),(\d+)p' (\S+)$")
_TEST = re.compile(r"^(?:run_tests (\S+)|bash (python -m pytest .+))$")
_EDIT = re.compile(r"^edit (\S+)\n```(\w*)\n(.*)\n```$", re.DOTALL)


def _raw_lines(text: str) -> str:
    """A view's content without line numbers."""
    rows = numbered_rows(text)
    if rows is None:
        return text
    return "".join(text[c:e] for _s, c, e in rows if c >= 0)


def _numbered(content: str, start: int, fmt: str) -> str:
    """``content``'s lines numbered from ``start`` with ``fmt`` (fields ``n`` and ``line``)."""
    return "\n".join(fmt.format(n=start + i, line=line) for i, line in enumerate(content.split("\n")))


def _command(match: re.Match) -> str:
    return f"python -m pytest {match.group(1)}" if match.group(1) else match.group(2)


def _exit_code(log: str) -> int:
    return 1 if re.search(r"\b\d+ failed\b", log) else 0


class Style(ABC):
    """One agent's conventions: its system prompt, and how it writes a file view, a command, an edit and
    plain text. A subclass overrides the renderings; ``out`` collects the segments."""

    system: str = ""
    user_wrap: str | None = None
    """The user's text in this agent's wrapper (``{text}`` marks where), or None to keep it as it is."""
    assistant_wrap: str | None = None
    """The assistant's text (and plan) in this agent's wording, or None to keep it."""

    def __init__(self) -> None:
        self.out: list[Segment] = []

    def add(self, role: str, kind: str, text: str, subtask: str | None) -> None:
        self.out.append(Segment(role=role, kind=kind, text=text, subtask=subtask))

    @abstractmethod
    def view(self, path: str, start: int, end: int, content: str, sub: str | None) -> None:
        """A call showing lines ``start``-``end`` of ``path`` and its result (``content``, raw lines)."""

    @abstractmethod
    def run(self, command: str, log: str, sub: str | None) -> None:
        """A shell command and its output."""

    @abstractmethod
    def edit(self, path: str, lang: str, code: str, result: str | None, sub: str | None) -> None:
        """A definition rewritten in ``path``; ``result``: the tool's answer, when there was one."""

    def text(self, seg: Segment) -> None:
        """A message that is neither a call nor a result."""
        wrap = {"user": self.user_wrap, "assistant": self.assistant_wrap}.get(seg.role)
        if seg.role == "system":
            self.add("system", "text", self.system, seg.subtask)
        elif wrap is not None:
            self.add(seg.role, "text", wrap.format(text=seg.text), seg.subtask)
        else:
            self.add(seg.role, seg.kind, seg.text, seg.subtask)


class Raw(Style):
    """Function calls (``view_file(path="x.py", start_line=1, end_line=80)``), raw file content."""

    system = """You are an expert software engineer fixing issues in a repository.
Call exactly one function per turn:
- view_file(path, start_line, end_line): print a file's lines
- run_command(command): run a shell command and print its output
- edit_file(path, content): replace a definition with new code
- submit(): finish
Think step by step, keep public signatures unchanged, and run the tests before you submit."""

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f'view_file(path="{path}", start_line={start}, end_line={end})', sub)
        self.add("tool", "tool_output", content, sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"run_command(command={json.dumps(command)})", sub)
        self.add("tool", "tool_output", log, sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"edit_file(path={json.dumps(path)}, content={json.dumps(code)})", sub)
        if result is not None:
            self.add("tool", "tool_output", f"File {path} edited.", sub)


class MiniSweAgent(Style):
    """A THOUGHT and one ``bash`` block (``sed -n``/``cat``); results come back as user messages wrapped in
    ``<returncode>``/``<output>``."""

    system = """You are a helpful assistant that can interact with a computer.

Your response must contain exactly ONE bash code block with ONE command (or commands connected with && or ||).
Include a THOUGHT section before your command where you explain your reasoning process.
Format your response as shown in <format_example>.

<format_example>
THOUGHT: Your reasoning and analysis here. Explain why you want to perform the action.

```bash
your_command_here
```
</format_example>

Failure to follow these rules will cause your response to be rejected."""
    user_wrap = "<pr_description>\n{text}\n</pr_description>"
    assistant_wrap = "THOUGHT: {text}"

    def view(self, path, start, end, content, sub):
        cmd = f"sed -n '{start},{end}p' {path}"
        self.add("assistant", "text", f"THOUGHT: I need to read `{path}` first.\n\n```bash\n{cmd}\n```", sub)
        self.add("user", "text", f"<returncode>0</returncode>\n<output>\n{content}\n</output>", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"THOUGHT: Let me run the tests.\n\n```bash\ncd /testbed && {command}\n```", sub)
        self.add("user", "text", f"<returncode>{_exit_code(log)}</returncode>\n<output>\n{log}\n</output>", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"THOUGHT: I'll rewrite the definition in `{path}`.\n\n```bash\n"
                 f"cat <<'EOF' > /tmp/new_def.py\n{code}\nEOF\npython /tmp/apply_def.py {path} /tmp/new_def.py\n```",
                 sub)
        if result is not None:
            self.add("user", "text", "<returncode>0</returncode>\n<output>\n</output>", sub)


class Json(Style):
    """OpenAI-style JSON calls and JSON results holding the file as a string."""

    system = """You are a coding assistant with access to tools. To call a tool, reply with a JSON object
{"name": <tool>, "arguments": {...}}. Tools: read_file(path, start_line, end_line), write_file(path, content),
run_command(command), finish(). Tool results are returned as JSON."""

    def view(self, path, start, end, content, sub):
        args = {"path": path, "start_line": start, "end_line": end}
        self.add("assistant", "tool_call", json.dumps({"name": "read_file", "arguments": args}), sub)
        self.add("tool", "tool_output", json.dumps({"path": path, "start_line": start, "content": content}), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", json.dumps({"name": "run_command", "arguments": {"command": command}}), sub)
        self.add("tool", "tool_output", json.dumps({"exit_code": _exit_code(log), "stdout": log}), sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", json.dumps({"name": "write_file", "arguments": {"path": path,
                                                                                         "content": code}}), sub)
        if result is not None:
            self.add("tool", "tool_output", json.dumps({"ok": True, "path": path}), sub)


class Aider(Style):
    """Files pasted by the user as ``path`` + fence, commands run by the user, edits as SEARCH/REPLACE blocks."""

    system = """Act as an expert software developer.
Always use best practices when coding.
Respect and use existing conventions, libraries, etc that are already present in the code base.
Take requests for changes to the supplied code.
If the request is ambiguous, ask questions.
Once you understand the request you MUST:
1. Decide if you need to propose *SEARCH/REPLACE* edits to any files that haven't been added to the chat.
2. Think step-by-step and explain the needed changes in a few short sentences.
3. Describe each change with a *SEARCH/REPLACE block*."""

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Please add {path} to the chat so I can see it.", sub)
        self.add("user", "text", "I added these files to the chat so you can go ahead and edit them.\n\n"
                 f"{path}\n```\n{content}\n```", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Please run the tests:\n\n```bash\n{command}\n```", sub)
        self.add("user", "text", f"I ran this command:\n\n{command}\n\nAnd got this output:\n\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"{path}\n```{lang}\n<<<<<<< SEARCH\n{head}\n=======\n{code}\n"
                 ">>>>>>> REPLACE\n```", sub)
        if result is not None:
            self.add("user", "text", f"Applied edit to {path}", sub)

    def text(self, seg):
        if seg.role == "assistant" and seg.kind == "plan":
            self.add("assistant", "text", f"Here is how I will approach this:\n{seg.text}", seg.subtask)
        else:
            super().text(seg)


class OpenHands(Style):
    """CodeAct's XML function calls (``<function=str_replace_editor>``, ``<parameter=...>``); results come back
    as user messages (``EXECUTION RESULT of [...]``), file views as ``cat -n`` output under absolute paths."""

    system = """You are a careful AI agent that solves programming tasks by talking to a computer.
You can use these functions:
- execute_bash(command): run a bash command in the sandbox and return its output.
- str_replace_editor(command, path, ...): view a file (command=view, optional view_range), create a file, or
  replace an exact string (command=str_replace, old_str, new_str).
- finish(): end the task.
Call a function like this, one call per reply:
<function=NAME>
<parameter=PARAM>VALUE</parameter>
</function>
The repository is at /workspace. Reproduce the problem, fix it with minimal changes, and verify the fix."""

    def _call(self, name: str, intro: str, params: dict[str, str], sub: str | None) -> None:
        body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params.items())
        self.add("assistant", "text", f"{intro}\n\n<function={name}>\n{body}</function>", sub)

    def view(self, path, start, end, content, sub):
        self._call("str_replace_editor", f"Let me look at {path}.",
                   {"command": "view", "path": f"/workspace/{path}", "view_range": f"[{start}, {end}]"}, sub)
        view = _numbered(content, start, "{n:>6}\t{line}")
        self.add("user", "text", "EXECUTION RESULT of [str_replace_editor]:\nHere's the result of running `cat -n` "
                 f"on /workspace/{path}:\n{view}", sub)

    def run(self, command, log, sub):
        self._call("execute_bash", "Now I'll run the tests.", {"command": f"cd /workspace && {command}"}, sub)
        self.add("user", "text", f"EXECUTION RESULT of [execute_bash]:\n{log}\n"
                 f"[The command completed with exit code {_exit_code(log)}.]", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self._call("str_replace_editor", f"I'll update the definition in {path}.",
                   {"command": "str_replace", "path": f"/workspace/{path}", "old_str": head, "new_str": code}, sub)
        if result is not None:
            self.add("user", "text", f"EXECUTION RESULT of [str_replace_editor]:\nThe file /workspace/{path} has been "
                     "edited. Review the changes and make sure they are as expected.", sub)


class SweAgent(Style):
    """SWE-agent's interface: ``open``/``goto`` commands in a fenced block after a DISCUSSION, a file window
    headed ``[File: ...]`` with ``12:code`` lines, the shell prompt after every output."""

    system = """SETTING: You are an autonomous programmer working directly in the command line with a special
interface for reading and editing files.
COMMANDS:
open <path> [<line_number>] - opens the file at the given path in the editor, at line_number if given
goto <line_number> - moves the window to show line_number
edit <start_line>:<end_line> - replaces the given lines with the text that follows, up to end_of_edit
submit - submits your changes
RESPONSE FORMAT: a DISCUSSION paragraph, then exactly one command in a fenced block."""
    user_wrap = ("We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n"
                 "{text}\n\nINSTRUCTIONS: solve it on your own, one command at a time.")
    assistant_wrap = "DISCUSSION\n{text}"

    def _prompt(self, path: str | None) -> str:
        return f"(Open file: {'/repo/' + path if path else 'n/a'})\n(Current directory: /repo)\nbash-$"

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"DISCUSSION\nLet me open `{path}` at line {start}.\n\n```\nopen {path} {start}\n```",
                 sub)
        above = f"({start - 1} more lines above)\n" if start > 1 else ""
        view = _numbered(content, start, "{n}:{line}")
        self.add("user", "text", f"[File: /repo/{path}]\n{above}{view}\n{self._prompt(path)}", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"DISCUSSION\nLet's run the tests.\n\n```\n{command}\n```", sub)
        self.add("user", "text", f"{log}\n{self._prompt(None)}", sub)

    def edit(self, path, lang, code, result, sub):
        n = code.count("\n") + 1
        self.add("assistant", "text", f"DISCUSSION\nI'll rewrite the definition in `{path}`.\n\n```\n"
                 f"edit 1:{n}\n{code}\nend_of_edit\n```", sub)
        if result is not None:
            self.add("user", "text", f"File updated. Please review the changes.\n{self._prompt(path)}", sub)


class Claude(Style):
    """Claude Code's tools: ``tool_use`` blocks (``Read`` with ``file_path``/``offset``/``limit``, ``Bash``,
    ``Edit``), file content numbered ``{n:>6}→line``."""

    system = """You are an interactive command-line tool that helps users with software engineering tasks.
Use the tools available to you: Read (read a file), Bash (run a command), Edit (replace an exact string in a file).
Be concise. Read a file before you edit it, follow the conventions of the code around it, and run the tests
after a change."""

    def _use(self, name: str, args: dict, sub: str | None) -> None:
        self.add("assistant", "tool_call", json.dumps({"type": "tool_use", "name": name, "input": args}), sub)

    def view(self, path, start, end, content, sub):
        self._use("Read", {"file_path": f"/home/user/project/{path}", "offset": start, "limit": end - start + 1}, sub)
        self.add("tool", "tool_output", _numbered(content, start, "{n:>6}\u2192{line}"), sub)

    def run(self, command, log, sub):
        self._use("Bash", {"command": command, "description": "Run the tests"}, sub)
        self.add("tool", "tool_output", log, sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self._use("Edit", {"file_path": f"/home/user/project/{path}", "old_string": head, "new_string": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", f"The file /home/user/project/{path} has been updated.", sub)


class Cline(Style):
    """Cline's XML tool use (``<read_file><path>..</path></read_file>`` after a ``<thinking>``); results come back as
    user messages headed ``[read_file for 'x.py'] Result:``, file content numbered ``12 | code`` in a ``<file>``."""

    system = """You are Cline, a highly skilled software engineer with extensive knowledge in many programming
languages, frameworks, design patterns, and best practices.

TOOL USE
You have access to a set of tools that are executed upon the user's approval. You can use one tool per message.
Tool use is formatted using XML-style tags:
<tool_name>
<parameter1_name>value1</parameter1_name>
</tool_name>
Tools: read_file(path), execute_command(command, requires_approval), replace_in_file(path, diff),
attempt_completion(result)."""
    user_wrap = "<task>\n{text}\n</task>"
    assistant_wrap = "<thinking>\n{text}\n</thinking>"

    def view(self, path, start, end, content, sub):
        thought = self.assistant_wrap.format(text=f"I need the code of {path}.")
        self.add("assistant", "text", f"{thought}\n\n<read_file>\n<path>{path}</path>\n</read_file>", sub)
        view = _numbered(content, start, "{n} | {line}")
        self.add("user", "text", f"[read_file for '{path}'] Result:\n<file><path>{path}</path>\n"
                 f"<content lines=\"{start}-{end}\">\n{view}\n</content>\n</file>", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"<execute_command>\n<command>{command}</command>\n"
                 "<requires_approval>false</requires_approval>\n</execute_command>", sub)
        self.add("user", "text", f"[execute_command for '{command}'] Result:\nCommand executed.\nOutput:\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"<replace_in_file>\n<path>{path}</path>\n<diff>\n------- SEARCH\n{head}\n"
                 f"=======\n{code}\n+++++++ REPLACE\n</diff>\n</replace_in_file>", sub)
        if result is not None:
            self.add("user", "text", f"[replace_in_file for '{path}'] Result:\nThe content was successfully saved "
                     f"to {path}.", sub)


class Codex(Style):
    """Codex CLI's ``shell`` function calls (``{"command": ["bash", "-lc", "sed -n '1,80p' x.py"]}``), JSON
    results (``{"output": ..., "metadata": {"exit_code": 0}}``), edits as ``apply_patch`` envelopes."""

    system = """You are a coding agent running in the Codex CLI, a terminal-based coding assistant.
You can run shell commands with the `shell` function and edit files with `apply_patch`:
{"command": ["apply_patch", "*** Begin Patch\\n*** Update File: path\\n@@\\n-old\\n+new\\n*** End Patch"]}.
Keep going until the user's query is completely resolved. Read files with `sed -n` or `rg`, keep changes minimal
and consistent with the codebase, and run the tests when you are done."""

    def _shell(self, argv: list[str], sub: str | None) -> None:
        self.add("assistant", "tool_call", json.dumps({"name": "shell", "arguments": {"command": argv,
                                                                                      "workdir": "/repo"}}), sub)

    def _out(self, output: str, code: int, sub: str | None) -> None:
        self.add("tool", "tool_output", json.dumps({"output": output, "metadata": {"exit_code": code,
                                                                                   "duration_seconds": 0.1}}), sub)

    def view(self, path, start, end, content, sub):
        self._shell(["bash", "-lc", f"sed -n '{start},{end}p' {path}"], sub)
        self._out(content, 0, sub)

    def run(self, command, log, sub):
        self._shell(["bash", "-lc", command], sub)
        self._out(log, _exit_code(log), sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        added = "\n".join(f"+{line}" for line in code.split("\n"))
        self._shell(["apply_patch", f"*** Begin Patch\n*** Update File: {path}\n@@\n-{head}\n{added}\n*** End Patch"],
                    sub)
        if result is not None:
            self._out(f"Success. Updated the following files:\nM {path}\n", 0, sub)


RENDERERS: dict[str, type[Style]] = {
    "raw": Raw, "minisweagent": MiniSweAgent, "json": Json, "aider": Aider,
    "openhands": OpenHands, "sweagent": SweAgent, "claude": Claude, "cline": Cline, "codex": Codex,
}
STYLES: tuple[str, ...] = ("own", *RENDERERS)


def restyle_segments(segments: list[Segment], style: str) -> list[Segment]:
    """``segments`` (written in codeagent's own conventions by the builder) in ``style``."""
    if style not in STYLES:
        raise InputError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    if style == "own":
        return list(segments)
    r = RENDERERS[style]()
    i = 0
    while i < len(segments):
        seg = segments[i]
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        result = nxt if nxt is not None and nxt.kind == "tool_output" else None
        if seg.kind == "tool_call" and result is not None:
            call = seg.text.strip()
            view, sed, test = _VIEW.match(call), _SED.match(call), _TEST.match(call)
            if view:
                content = _raw_lines(result.text)
                start = int(view.group(2) or 1)
                end = int(view.group(3) or start + content.count("\n"))
                r.view(view.group(1), start, end, content, seg.subtask)
            elif sed:
                r.view(sed.group(3), int(sed.group(1)), int(sed.group(2)), result.text, seg.subtask)
            elif test:
                r.run(_command(test), result.text, seg.subtask)
            else:
                r.run(call.removeprefix("bash "), result.text, seg.subtask)
            i += 2
            continue
        edit = _EDIT.match(seg.text) if seg.kind == "code" else None
        if edit:
            r.edit(edit.group(1), edit.group(2), edit.group(3), result.text if result else None, seg.subtask)
            i += 2 if result is not None else 1
            continue
        r.text(seg)
        i += 1
    return r.out


def restyle(task: Task, style: str, recount: Callable[[list[Segment]], int] | None = None) -> Task:
    """A copy of ``task`` rendered in ``style``: id suffixed with the style (``own`` keeps its id),
    ``meta.style`` set, ``n_context_tokens`` recounted when ``recount`` is given."""
    segments = restyle_segments(task.segments, style)
    meta = dict(getattr(task, "meta", {}) or {}, style=style)
    update = {"segments": segments, "meta": meta, "id": task.id if style == "own" else f"{task.id}-{style}"}
    if recount is not None:
        update["n_context_tokens"] = recount(segments)
    return task.model_copy(update=update)
