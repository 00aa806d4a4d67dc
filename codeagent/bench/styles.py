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
  SEARCH/REPLACE blocks.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from codeagent.bench.tasks import Segment, Task
from codeagent.errors import InputError
from codeagent.kvcache.tagger_content import numbered_rows

STYLES: tuple[str, ...] = ("own", "raw", "minisweagent", "json", "aider")

SYSTEM: dict[str, str] = {
    "raw": """You are an expert software engineer fixing issues in a repository.
Call exactly one function per turn:
- view_file(path, start_line, end_line): print a file's lines
- run_command(command): run a shell command and print its output
- edit_file(path, content): replace a definition with new code
- submit(): finish
Think step by step, keep public signatures unchanged, and run the tests before you submit.""",
    "minisweagent": """You are a helpful assistant that can interact with a computer.

Your response must contain exactly ONE bash code block with ONE command (or commands connected with && or ||).
Include a THOUGHT section before your command where you explain your reasoning process.
Format your response as shown in <format_example>.

<format_example>
THOUGHT: Your reasoning and analysis here. Explain why you want to perform the action.

```bash
your_command_here
```
</format_example>

Failure to follow these rules will cause your response to be rejected.""",
    "json": """You are a coding assistant with access to tools. To call a tool, reply with a JSON object
{"name": <tool>, "arguments": {...}}. Tools: read_file(path, start_line, end_line), write_file(path, content),
run_command(command), finish(). Tool results are returned as JSON.""",
    "aider": """Act as an expert software developer.
Always use best practices when coding.
Respect and use existing conventions, libraries, etc that are already present in the code base.
Take requests for changes to the supplied code.
If the request is ambiguous, ask questions.
Once you understand the request you MUST:
1. Decide if you need to propose *SEARCH/REPLACE* edits to any files that haven't been added to the chat.
2. Think step-by-step and explain the needed changes in a few short sentences.
3. Describe each change with a *SEARCH/REPLACE block*.""",
}

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


def _command(match: re.Match) -> str:
    return f"python -m pytest {match.group(1)}" if match.group(1) else match.group(2)


class _Restyler:
    """Turns one own-style task's segments into ``style``'s segments, pair by pair."""

    def __init__(self, style: str) -> None:
        self.style = style
        self.out: list[Segment] = []

    def add(self, role: str, kind: str, text: str, subtask: str | None) -> None:
        self.out.append(Segment(role=role, kind=kind, text=text, subtask=subtask))

    # each of these gets the call's subtask and renders a call and its result
    def view(self, path: str, start: int, end: int, content: str, sub: str | None) -> None:
        st = self.style
        if st == "raw":
            self.add("assistant", "tool_call", f'view_file(path="{path}", start_line={start}, end_line={end})', sub)
            self.add("tool", "tool_output", content, sub)
        elif st == "minisweagent":
            cmd = f"sed -n '{start},{end}p' {path}"
            self.add("assistant", "text", f"THOUGHT: I need to read `{path}` first.\n\n```bash\n{cmd}\n```", sub)
            self.add("user", "text", f"<returncode>0</returncode>\n<output>\n{content}\n</output>", sub)
        elif st == "json":
            args = {"path": path, "start_line": start, "end_line": end}
            self.add("assistant", "tool_call", json.dumps({"name": "read_file", "arguments": args}), sub)
            self.add("tool", "tool_output", json.dumps({"path": path, "start_line": start, "content": content}), sub)
        else:  # aider
            self.add("assistant", "text", f"Please add {path} to the chat so I can see it.", sub)
            self.add("user", "text", "I added these files to the chat so you can go ahead and edit them.\n\n"
                     f"{path}\n```\n{content}\n```", sub)

    def run(self, command: str, log: str, sub: str | None) -> None:
        st = self.style
        code = 1 if re.search(r"\b\d+ failed\b", log) else 0
        if st == "raw":
            self.add("assistant", "tool_call", f"run_command(command={json.dumps(command)})", sub)
            self.add("tool", "tool_output", log, sub)
        elif st == "minisweagent":
            self.add("assistant", "text", f"THOUGHT: Let me run the tests.\n\n```bash\ncd /testbed && {command}\n```", sub)
            self.add("user", "text", f"<returncode>{code}</returncode>\n<output>\n{log}\n</output>", sub)
        elif st == "json":
            self.add("assistant", "tool_call", json.dumps({"name": "run_command", "arguments": {"command": command}}), sub)
            self.add("tool", "tool_output", json.dumps({"exit_code": code, "stdout": log}), sub)
        else:
            self.add("assistant", "text", f"Please run the tests:\n\n```bash\n{command}\n```", sub)
            self.add("user", "text", f"I ran this command:\n\n{command}\n\nAnd got this output:\n\n{log}", sub)

    def edit(self, path: str, lang: str, code: str, result: str | None, sub: str | None) -> None:
        st = self.style
        if st == "raw":
            self.add("assistant", "tool_call", f"edit_file(path={json.dumps(path)}, content={json.dumps(code)})", sub)
            if result is not None:
                self.add("tool", "tool_output", f"File {path} edited.", sub)
        elif st == "minisweagent":
            self.add("assistant", "text", f"THOUGHT: I'll rewrite the definition in `{path}`.\n\n```bash\n"
                     f"cat <<'EOF' > /tmp/new_def.py\n{code}\nEOF\npython /tmp/apply_def.py {path} /tmp/new_def.py\n```",
                     sub)
            if result is not None:
                self.add("user", "text", "<returncode>0</returncode>\n<output>\n</output>", sub)
        elif st == "json":
            self.add("assistant", "tool_call", json.dumps({"name": "write_file", "arguments": {"path": path,
                                                                                             "content": code}}), sub)
            if result is not None:
                self.add("tool", "tool_output", json.dumps({"ok": True, "path": path}), sub)
        else:
            head = code.split("\n", 1)[0]
            self.add("assistant", "text", f"{path}\n```{lang}\n<<<<<<< SEARCH\n{head}\n=======\n{code}\n"
                     ">>>>>>> REPLACE\n```", sub)
            if result is not None:
                self.add("user", "text", f"Applied edit to {path}", sub)

    def text(self, seg: Segment) -> None:
        st = self.style
        if seg.role == "system":
            self.add("system", "text", SYSTEM[st], seg.subtask)
        elif seg.role == "user" and st == "minisweagent":
            self.add("user", "text", f"<pr_description>\n{seg.text}\n</pr_description>", seg.subtask)
        elif seg.role == "assistant" and st == "minisweagent":
            self.add("assistant", "text", f"THOUGHT: {seg.text}", seg.subtask)
        elif seg.role == "assistant" and seg.kind == "plan" and st == "aider":
            self.add("assistant", "text", f"Here is how I will approach this:\n{seg.text}", seg.subtask)
        else:
            self.add(seg.role, seg.kind, seg.text, seg.subtask)


def restyle_segments(segments: list[Segment], style: str) -> list[Segment]:
    """``segments`` (written in codeagent's own conventions by the builder) in ``style``."""
    if style not in STYLES:
        raise InputError(f"unknown style {style!r} (known: {', '.join(STYLES)})")
    if style == "own":
        return list(segments)
    r = _Restyler(style)
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
