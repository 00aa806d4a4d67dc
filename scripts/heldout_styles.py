"""Build bench tasks in agent formats that ``codeagent/bench/styles.py`` does not render.

The held-out checks of Rounds 13-16 (docs/benchmarks.md): the formats live here, outside the bench's own styles, so
the tagger's work is checked on conventions it was not written against. Round 13: ``hermes`` (Qwen/Hermes
``<tool_call>`` JSON, ``<tool_response>`` results holding the file as a JSON string numbered ``N\\t``), ``smol``
(smolagents' Thought/Code/``<end_code>``, ``Observation:`` user messages holding the raw file), ``goose`` (a
``─── text_editor | developer ───`` request, results as ``### path`` + a fence of ``N: code`` lines). Round 14:
``grep`` (``grep -n -A`` views), ``repomap`` (Aider-like tree context, no calls), ``xmlcalls`` (Anthropic's legacy
XML calls). Round 15: ``react`` (LangChain's ReAct scratchpad), ``interp`` (an IPython agent, files as
``readlines()`` lists), ``powershell`` (CRLF output, backslash paths, here-string edits). Round 16: ``terminus``
(Terminal-Bench's Terminus: JSON keystroke batches, tmux screens wrapped at 80 columns), ``org`` (an Emacs org-mode
agent: ``#+begin_src`` blocks, org-babel results), ``html`` (a web UI's chat exported as HTML, text escaped).
Round 17: ``winterm`` (a PowerShell terminal's screens: ``PS C:\\...> `` prompts, ``>> `` here-string continuation,
CRLF, wrapped at 120), ``zsh`` (a macOS zsh terminal pasted back: ``dev@MacBook-Pro repo % `` prompts, ``heredoc> ``).
Round 18: ``blame`` (a chat-ops bot's slash commands, files read with ``git blame -s -L``, tests under tox, edits in
``~~~`` fences), ``yamlres`` (an MCP client logging calls and results as YAML, files and logs in ``|`` block scalars),
``notebook`` (a Jupyter agent speaking nbformat JSON: cell sources and stream outputs as arrays of lines).
Round 21: ``cursor`` (JSON calls, views in a fence whose info string is ``A:B:path``), ``copilot`` (files attached
as ``<attachment>`` elements, a fence opening on a ``# filepath:`` comment), ``lessn`` (``less -N`` views: the
number and one space), ``gojson`` (a Go agent's JSON, ``<``/``>``/``&`` escaped as ``\\u003c``..., the file
inside ``<file>`` tags), ``apijson`` (Anthropic API ``tool_result`` blocks holding ``cat -n`` views), ``gitdiff``
(whole files read as new-file diffs, edits sent to ``git apply``). Round 23: ``respapi`` (OpenAI Responses API items:
arguments and outputs JSON inside JSON strings), ``claudeterm`` (Claude Code's terminal screen: ``⏺ Bash(...)``,
output under ``⎿``), ``pyrepr`` (results shown as Python ``repr()``: a file on one line), ``lineobjs`` (a file as
compact JSON, one object per line). Round 24: ``repomix`` (files pasted as a repomix pack: ``File: PATH`` between
``====`` rules), ``compose`` (results as ``docker compose logs``: ``sandbox-1  | `` before every line), ``richpanel``
(a rich TUI: views in a box-drawn panel, right border padded out, long lines wrapped under a blank gutter),
``junit`` (test runs reported as JUnit XML, edits as ``REPLACE PATH``/``END`` blocks). Round 25: ``ansi`` (a colour
terminal: ``bat --color=always`` views, ``pytest --color=yes``), ``mdindent`` (a chat exported to Markdown: results
in indented code blocks, calls as ``**tool** `arg```), ``pdb`` (a debugger agent: pdb's ``list`` with its ``B``/``->``
marks), ``moatless`` (a ``<file_context>`` of ``<span id='...'>`` pieces), ``acr`` (AutoCodeRover-like search results
in ``<file>``/``<code>`` elements, ``<original>``/``<patched>`` patches), ``gemini`` (Gemini-CLI-like
``functionCall``/``functionResponse`` JSON, shell results as ``Command:``/``Stdout:``/``Exit Code:`` fields),
``continuedev`` (an IDE assistant: files attached as fences whose info string is ``python src/a.py (10-80)``).
Round 27: ``autogen`` (an AutoGen-like pair: ``sh`` blocks run by a user proxy answering ``exitcode: 0 (execution
succeeded)`` / ``Code output:``), ``agentless`` (a pipeline's ``--- BEGIN FILE ---`` fences opening on ``### path``,
``...`` for lines left out), ``opencode`` (JSON ``read`` calls, files as ``00012| code`` inside ``<file>`` tags).
Round 33: ``roo`` (Roo-Code-like XML tool use, files as ``N | code`` inside ``<content lines="a-b">``), ``rgjson``
(views as ripgrep's JSON rows), ``deepseekraw`` (DeepSeek's template rendered by the client: results glued to its
tokens), ``vimscreen`` (files read in ``vim -R``: ``~`` rows and vim's status line under them). Round 49: ``batgrid``
(``bat``'s default full style without colours: ``File:`` header, numbers before a ``│`` gutter), ``lspjson`` (an
editor agent's JSON-RPC: ``workspace/readFile`` with an LSP range, the lines as one escaped string), ``xmldocs`` (no
tools: files pasted as ``<documents>``/``<document_content>`` elements).

    PYTHONPATH=. python scripts/heldout_styles.py OUT.jsonl SEED N FAMILIES STYLES [MIN-MAX own tokens]
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 41 2 next_line hermes,smol,goose
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 53 2 next_line react,interp,powershell,own
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 61 2 next_line terminus,org,html,own
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 67 1 next_line winterm,zsh,own
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 71 1 next_line blame,yamlres,notebook,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 79 1 next_line,next_line_raw,signature_recall,session \
        cursor,copilot,lessn,gojson,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 83 1 next_line,next_line_raw,signature_recall,session \
        apijson,gitdiff,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 89 1 next_line,next_line_raw,signature_recall,session \
        respapi,claudeterm,pyrepr,lineobjs,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 101 1 next_line,next_line_raw,signature_recall,session \
        repomix,compose,richpanel,junit,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 107 1 next_line,next_line_raw,signature_recall,session \
        mdindent,pdb,own
    PYTHONPATH=. python scripts/heldout_styles.py a.jsonl 107 1 next_line,next_line_raw,signature_recall,session \
        ansi,own 2000-2800   # colour codes double the tokens: smaller files
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 109 1 next_line,next_line_raw,signature_recall,session \
        moatless,acr,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 127 1 next_line,next_line_raw,signature_recall,session \
        gemini,continuedev,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 137 1 next_line,next_line_raw,signature_recall,session \
        autogen,agentless,opencode,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 163 1 next_line,next_line_raw,signature_recall,session \
        roo,rgjson,deepseekraw,vimscreen,own
    PYTHONPATH=. python scripts/heldout_styles.py h.jsonl 743 3 next_line,next_line_raw,signature_recall \
        batgrid,lspjson,xmldocs,own 1000-2600
"""

from __future__ import annotations

import hashlib
import html
import json
import re
import sys
from pathlib import Path

from codeagent.bench import styles as S


class Hermes(S.Style):
    """Qwen/Hermes <tool_call> JSON in the assistant's text; <tool_response> results as tool messages with
    the file as a JSON string numbered `N\\t` (cat -n style, no padding)."""
    system = ("You are a function calling AI model. You are provided with function signatures within <tools></tools> "
              "XML tags.\n<tools>\n{\"name\": \"read_file\", \"parameters\": {\"file\": \"string\", \"first\": \"int\", "
              "\"last\": \"int\"}}\n{\"name\": \"shell\", \"parameters\": {\"cmd\": \"string\"}}\n{\"name\": \"patch\", "
              "\"parameters\": {\"file\": \"string\", \"replacement\": \"string\"}}\n</tools>\nFor each function call "
              "return a json object with function name and arguments within <tool_call></tool_call> XML tags.")

    def _tc(self, name, args, sub, intro=""):
        self.add("assistant", "text", f"{intro}<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>", sub)

    def view(self, path, start, end, content, sub):
        self._tc("read_file", {"file": f"./{path}", "first": start, "last": end}, sub)
        num = S._numbered(content, start, "{n}\t{line}")
        self.add("tool", "tool_output", "<tool_response>\n" + json.dumps({"name": "read_file", "content": num}) + "\n</tool_response>", sub)

    def run(self, command, log, sub):
        self._tc("shell", {"cmd": command}, sub, "Running the test suite.\n")
        self.add("tool", "tool_output", "<tool_response>\n" + json.dumps({"name": "shell", "content": log}) + "\n</tool_response>", sub)

    def edit(self, path, lang, code, result, sub):
        self._tc("patch", {"file": f"./{path}", "replacement": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", "<tool_response>\n" + json.dumps({"name": "patch", "content": "ok"}) + "\n</tool_response>", sub)


class Smol(S.Style):
    """smolagents CodeAgent: Thought/Code with <end_code>; observations as user messages
    'Observation:\\nExecution logs:\\n...' holding the raw file."""
    system = ("You are an expert assistant who can solve any task using code blobs. To do so, you have been given access "
              "to a list of tools: these tools are basically Python functions which you can call with code.\nTo solve the "
              "task, you must plan forward to proceed in a series of steps, in a cycle of 'Thought:', 'Code:', and "
              "'Observation:' sequences.\nAt each step, in the 'Thought:' sequence, you should first explain your reasoning. "
              "Then in the 'Code:' sequence, you should write the code in simple Python. The code sequence must end with "
              "'<end_code>' sequence.")
    user_wrap = "New task:\n{text}"
    assistant_wrap = "Thought: {text}"

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Thought: I will read {path}.\nCode:\n```py\nlines = open({path!r}).read().splitlines()"
                 f"\nprint(\"\\n\".join(lines[{start - 1}:{end}]))\n```<end_code>", sub)
        self.add("user", "text", f"Observation:\nExecution logs:\n{content}\nLast output from code snippet:\nNone", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Thought: Let me run the tests.\nCode:\n```py\nimport subprocess\n"
                 f"print(subprocess.run({command!r}, shell=True, capture_output=True, text=True).stdout)\n```<end_code>", sub)
        self.add("user", "text", f"Observation:\nExecution logs:\n{log}\nLast output from code snippet:\nNone", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"Thought: I will replace the definition.\nCode:\n```py\nnew_code = '''{code}'''\n"
                 f"replace_definition({path!r}, new_code)\n```<end_code>", sub)
        if result is not None:
            self.add("user", "text", "Observation:\nExecution logs:\nDone.\nLast output from code snippet:\nNone", sub)


class Goose(S.Style):
    """Goose-like developer extension: a markdown tool-request header, results as '### path' + fenced code
    with `N: ` line prefixes, shell output fenced."""
    system = ("You are a general-purpose AI agent called Goose, created by Block.\nThe developer extension gives you "
              "text_editor (view, write, str_replace) and shell. Use them to explore the repository and make changes.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"─── text_editor | developer ──────────────────────────\npath: ~/src/app/{path}\n"
                 f"command: view\nview_range: [{start}, {end}]", sub)
        num = S._numbered(content, start, "{n}: {line}")
        self.add("tool", "tool_output", f"### /home/dev/src/app/{path}\n```{'python' if path.endswith('.py') else ''}\n{num}\n```", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"─── shell | developer ──────────────────────────\ncommand: {command}", sub)
        self.add("tool", "tool_output", f"```\n{log}\n```", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "tool_call", f"─── text_editor | developer ──────────────────────────\npath: ~/src/app/{path}\n"
                 f"command: str_replace\nold_str: {head}\nnew_str: |\n" + "\n".join("  " + l for l in code.split("\n")), sub)
        if result is not None:
            self.add("tool", "tool_output", f"The file /home/dev/src/app/{path} has been edited.", sub)


class Grep(S.Style):
    """A bash agent that reads code with ``grep -n -A`` (one file: ``12:def f`` / ``13-    body``; recursive:
    ``pkg/m.py:12:def f`` / ``pkg/m.py-13-    body``), results in a ``$ command`` transcript as user text."""
    system = ("You operate a Linux shell to fix bugs. Reply with a short rationale and then exactly one command on a "
              "line starting with `$ `. Prefer grep with context (-n -A/-B) over printing whole files.")
    assistant_wrap = "Rationale: {text}"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def view(self, path, start, end, content, sub):
        lines = content.split("\n")
        head = lines[0].strip().replace('"', '\\"')[:40] or "."
        recursive = self.calls % 2 == 1
        self.calls += 1
        where = path.split("/")[0] + "/" if recursive and "/" in path else path
        cmd = f'grep -n{"r" if recursive else ""} -A{len(lines) - 1} -m1 -F "{head}" {where}'
        seps = [":" if i == 0 else "-" for i in range(len(lines))]  # the match, then context lines
        out = "\n".join(f"{path + sep if recursive else ''}{start + i}{sep}{line}"
                        for i, (sep, line) in enumerate(zip(seps, lines)))
        self.add("assistant", "text", f"Rationale: I need the definition in {path}.\n$ {cmd}", sub)
        self.add("user", "text", f"$ {cmd}\n{out}\n[exit 0]", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Rationale: run the tests.\n$ {command}", sub)
        self.add("user", "text", f"$ {command}\n{log}\n[exit {S._exit_code(log)}]", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"Rationale: rewrite it.\n$ python - <<'PY'\nimport pathlib\n"
                 f"p = pathlib.Path({path!r})\nnew = \'\'\'{code}\'\'\'\nreplace_definition(p, new)\nPY", sub)
        if result is not None:
            self.add("user", "text", "[exit 0]", sub)


class RepoMap(S.Style):
    """Aider-like tree context: no tool calls; the user pastes ``path:`` followed by the lines of interest
    prefixed ``│`` with ``⋮...`` where lines are elided; commands as ``> cmd`` with the output indented."""
    system = ("Act as an expert software developer. Always use best practices when coding. The user shares the parts of "
              "the repository that matter as tree context; describe each change as a SEARCH/REPLACE block.")

    def view(self, path, start, end, content, sub):
        body = "\n".join("│" + line for line in content.split("\n"))
        self.add("user", "text", f"Here is more of the code.\n\n{path}:\n{'⋮...' + chr(10) if start > 1 else ''}{body}\n⋮...", sub)

    def run(self, command, log, sub):
        self.add("user", "text", f"I ran this command:\n\n> {command}\n\n" + "\n".join("    " + l for l in log.split("\n")), sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"{path}\n<<<<<<< SEARCH\n{head}\n=======\n{code}\n>>>>>>> REPLACE", sub)
        if result is not None:
            self.add("user", "text", f"Applied edit to {path}", sub)


class XmlCalls(S.Style):
    """Anthropic's legacy XML calls in the assistant's text (``<function_calls><invoke name=...><parameter ...>``),
    results as user messages ``<function_results><result><tool_name>..</tool_name><stdout>`` holding the raw file."""
    system = ("In this environment you have access to a set of tools you can use to answer the user's question.\n"
              "You can invoke functions by writing a \"<function_calls>\" block like the following:\n<function_calls>\n"
              "<invoke name=\"$FUNCTION_NAME\">\n<parameter name=\"$PARAMETER_NAME\">$PARAMETER_VALUE</parameter>\n"
              "</invoke>\n</function_calls>\nTools: read(path, offset, limit), bash(command), write(path, text).")

    def _call(self, name, params, sub, intro):
        ps = "\n".join(f'<parameter name="{k}">{v}</parameter>' for k, v in params.items())
        self.add("assistant", "text", f"{intro}\n<function_calls>\n<invoke name=\"{name}\">\n{ps}\n</invoke>\n</function_calls>", sub)

    def _result(self, name, out, sub):
        self.add("user", "text", f"<function_results>\n<result>\n<tool_name>{name}</tool_name>\n<stdout>\n{out}\n"
                 "</stdout>\n</result>\n</function_results>", sub)

    def view(self, path, start, end, content, sub):
        self._call("read", {"path": path, "offset": start, "limit": end - start + 1}, sub, f"Let me look at {path}.")
        self._result("read", content, sub)

    def run(self, command, log, sub):
        self._call("bash", {"command": command}, sub, "Running the tests.")
        self._result("bash", log, sub)

    def edit(self, path, lang, code, result, sub):
        self._call("write", {"path": path, "text": code}, sub, "Applying the fix.")
        if result is not None:
            self._result("write", "ok", sub)


class React(S.Style):
    """LangChain's ReAct scratchpad: ``Thought:``/``Action:``/``Action Input:`` in the assistant's text, and the
    ``Observation:`` (the raw file, a command's output) written into the same assistant stream, ending in
    ``Thought:``."""
    system = ("Answer the following questions as best you can. You have access to the following tools:\n\n"
              "read_file: reads lines of a file. Input: {\"file_path\": str, \"first\": int, \"last\": int}\n"
              "terminal: runs a shell command\nwrite_file: writes code into a file\n\nUse the following format:\n\n"
              "Question: the input question you must answer\nThought: you should always think about what to do\n"
              "Action: the action to take, should be one of [read_file, terminal, write_file]\nAction Input: the input "
              "to the action\nObservation: the result of the action\n... (this Thought/Action/Action Input/Observation "
              "can repeat N times)\nThought: I now know the final answer\nFinal Answer: the final answer")
    user_wrap = "Question: {text}"
    assistant_wrap = "Thought: {text}"

    def _act(self, action, arg, out, sub):
        self.add("assistant", "text", f"Thought: I should use {action}.\nAction: {action}\nAction Input: {arg}", sub)
        if out is not None:
            self.add("assistant", "text", f"Observation: {out}\nThought:", sub)

    def view(self, path, start, end, content, sub):
        self._act("read_file", json.dumps({"file_path": path, "first": start, "last": end}), content, sub)

    def run(self, command, log, sub):
        self._act("terminal", command, log, sub)

    def edit(self, path, lang, code, result, sub):
        self._act("write_file", f"{path}\n{code}", "File written." if result is not None else None, sub)


class Interp(S.Style):
    """A Python-REPL agent (IPython cells): files read with ``readlines()`` and shown as IPython pretty-prints
    of the list (``Out[7]: ['line\\n',`` then one `` 'line\\n',`` per line); commands through ``!``; edits
    assign the new definition as an escaped one-line string."""
    system = ("You are a coding assistant with a live IPython kernel in the repository. Reply with one ```python cell per "
              "turn; the kernel's output comes back as the next message. Use `!` for shell commands.")

    def __init__(self) -> None:
        super().__init__()
        self.cell = 0

    def _cell(self, code, sub):
        self.cell += 1
        self.add("assistant", "text", f"```python\n{code}\n```", sub)

    def view(self, path, start, end, content, sub):
        self._cell(f"open({path!r}).readlines()[{start - 1}:{end}]", sub)
        items = [repr(line + "\n") for line in content.split("\n")]
        body = ",\n ".join(items)
        self.add("tool", "tool_output", f"Out[{self.cell}]: [{body}]", sub)

    def run(self, command, log, sub):
        self._cell(f"!{command}", sub)
        self.add("tool", "tool_output", log, sub)

    def edit(self, path, lang, code, result, sub):
        self._cell(f"new = {code!r}\nreplace_definition({path!r}, new)", sub)
        if result is not None:
            self.add("tool", "tool_output", f"Out[{self.cell}]: True", sub)


class PowerShell(S.Style):
    """A Windows terminal agent: PowerShell commands in a fence, backslash paths, output with CRLF line ends
    (``Get-Content`` through ``Select-Object``), edits as a here-string piped to a helper."""
    system = ("You are a coding agent on Windows. Run one PowerShell command per turn in a ```powershell block; its "
              "output comes back verbatim. The repository is at C:\\Users\\dev\\repo.")

    @staticmethod
    def _crlf(text):
        return text.replace("\n", "\r\n")

    def view(self, path, start, end, content, sub):
        win = path.replace("/", "\\")
        self.add("assistant", "tool_call", f"```powershell\nGet-Content {win} | Select-Object -Skip {start - 1} -First "
                 f"{end - start + 1}\n```", sub)
        self.add("tool", "tool_output", self._crlf(content) + "\r\n", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"```powershell\n{command}\n```", sub)
        self.add("tool", "tool_output", self._crlf(log) + "\r\n", sub)

    def edit(self, path, lang, code, result, sub):
        win = path.replace("/", "\\")
        self.add("assistant", "tool_call", f"```powershell\n@'\n{code}\n'@ | Update-Definition -Path {win}\n```", sub)
        if result is not None:
            self.add("tool", "tool_output", "\r\n", sub)


def _wrap(text: str, width: int) -> str:
    """``text`` hard-wrapped at ``width`` columns, as a terminal shows it."""
    out: list[str] = []
    for line in text.split("\n"):
        out += [line[i:i + width] for i in range(0, len(line), width)] or [""]
    return "\n".join(out)


class Terminus(S.Style):
    """Terminal-Bench's Terminus agent: the assistant answers in JSON (``analysis``, ``plan``, ``commands`` as
    keystrokes), the user message is the new tmux screen: prompts, the typed command echoed (a heredoc's lines
    behind ``> `` continuation prompts) and the output hard-wrapped at 80 columns."""
    system = ("You are an AI assistant tasked with solving command-line tasks in a Linux environment. You will be given "
              "a task description and the output from previously executed commands. Your goal is to solve the task by "
              "providing batches of shell commands.\n\nFormat your response as JSON with the following structure:\n\n"
              "{\n  \"analysis\": \"Analyze the current state based on the terminal output provided.\",\n  \"plan\": "
              "\"Describe your plan for the next steps.\",\n  \"commands\": [\n    {\n      \"keystrokes\": \"ls -la\\n\",\n"
              "      \"duration\": 0.1\n    }\n  ],\n  \"task_complete\": false\n}\n\nThe keystrokes are sent to the "
              "terminal exactly as written.")
    user_wrap = "Task Description:\n{text}\n\nCurrent terminal state:\nroot@4c1d8e2a9b7f:/app# "
    prompt = "root@4c1d8e2a9b7f:/app# "

    def _send(self, analysis, keys, screen, sub):
        self.add("assistant", "text", json.dumps({"analysis": analysis, "plan": "Run the command and read its output.",
                                                  "commands": [{"keystrokes": keys, "duration": 1.0}],
                                                  "task_complete": False}, indent=2), sub)
        if screen is not None:
            self.add("user", "text", "New Terminal Output:\n\n" + _wrap(screen, 80) + "\n" + self.prompt, sub)

    def view(self, path, start, end, content, sub):
        cmd = f"sed -n '{start},{end}p' {path}"
        self._send(f"I need to read {path}.", cmd + "\n", f"{self.prompt}{cmd}\n{content}", sub)

    def run(self, command, log, sub):
        self._send("Time to run the tests.", command + "\n", f"{self.prompt}{command}\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        tmp = "/tmp/new_def" + Path(path).suffix
        keys = f"cat > {tmp} << 'EOF'\n{code}\nEOF\npython3 /tmp/replace_def.py {path}\n"
        echoed = "\n".join("> " + line for line in code.split("\n"))
        screen = (f"{self.prompt}cat > {tmp} << 'EOF'\n{echoed}\n> EOF\n"
                  f"{self.prompt}python3 /tmp/replace_def.py {path}")
        self._send(f"I will rewrite the definition in {path}.", keys, screen if result is not None else None, sub)


class Org(S.Style):
    """An Emacs org-mode agent (gptel with org-babel): commands in ``#+begin_src sh`` blocks, results under
    ``#+RESULTS:`` in a ``#+begin_example`` block (``: ``-prefixed lines when short), edits as a tangled
    ``#+begin_src LANG :tangle PATH`` block; the assistant writes org headings."""
    system = ("You are a large language model living in Emacs and a helpful assistant. You work in an org-mode buffer: "
              "run shell commands in #+begin_src sh blocks, which org-babel evaluates, and write code changes as "
              "#+begin_src blocks with a :tangle header naming the file.")
    assistant_wrap = "** {text}"

    @staticmethod
    def _results(out):
        lines = out.split("\n")
        if len(lines) < 10:
            return "#+RESULTS:\n" + "\n".join(": " + line if line else ":" for line in lines)
        return "#+RESULTS:\n#+begin_example\n" + out + "\n#+end_example"

    def _sh(self, title, cmd, out, sub):
        self.add("assistant", "text", f"*** {title}\n#+begin_src sh :results output\n{cmd}\n#+end_src", sub)
        self.add("user", "text", self._results(out), sub)

    def view(self, path, start, end, content, sub):
        self._sh(f"Reading {path}", f"sed -n '{start},{end}p' {path}", content, sub)

    def run(self, command, log, sub):
        self._sh("Running the tests", command, log, sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"*** New definition\n#+begin_src {lang or 'text'} :tangle {path}\n{code}\n"
                 "#+end_src", sub)
        if result is not None:
            self.add("user", "text", f"Tangled 1 code block to {path}", sub)


class Html(S.Style):
    """A chat exported from a web UI as HTML: calls as ``<div class="tool-call">``, files and logs in
    ``<pre><code>`` with the HTML entities escaped (``&lt;``, ``&gt;``, ``&amp;``, ``&quot;``, ``&#x27;``)."""
    system = ("<p>You are a coding assistant inside a web IDE. Call a tool by writing <code>read(path, from, to)</code>, "
              "<code>exec(command)</code> or <code>write(path, code)</code>; the IDE shows its result.</p>")
    user_wrap = '<div class="message user"><p>{text}</p></div>'
    assistant_wrap = '<div class="message assistant"><p>{text}</p></div>'

    def _call(self, body, sub):
        self.add("assistant", "tool_call", f'<div class="tool-call"><code>{html.escape(body)}</code></div>', sub)

    def view(self, path, start, end, content, sub):
        lang = Path(path).suffix.lstrip(".")
        self._call(f"read({path!r}, {start}, {end})", sub)
        self.add("tool", "tool_output", f'<div class="tool-result"><div class="filename">{path}</div>'
                 f'<pre><code class="language-{lang}">{html.escape(content)}</code></pre></div>', sub)

    def run(self, command, log, sub):
        self._call(f"exec({command!r})", sub)
        self.add("tool", "tool_output", f'<div class="tool-result"><pre><code>{html.escape(log)}</code></pre></div>', sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f'<div class="tool-call"><code>write({path!r})</code><pre><code class='
                 f'"language-{lang}">{html.escape(code)}</code></pre></div>', sub)
        if result is not None:
            self.add("tool", "tool_output", '<div class="tool-result"><p>Saved.</p></div>', sub)


class WinTerm(S.Style):
    """An agent driving a PowerShell pseudo-terminal on Windows: the assistant types one command in a
    ``<terminal>`` tag, the result is the screen since the last prompt (``PS C:\\Users\\dev\\repo> ``, wrapped at 120
    columns, CRLF line ends); edits are a here-string typed at the prompt behind ``>> `` continuation prompts."""
    system = ("You control a PowerShell 7 terminal on Windows through the terminal tool: write one command inside "
              "<terminal>...</terminal> and you get back the screen. The repository is C:\\Users\\dev\\repo.")
    prompt = "PS C:\\Users\\dev\\repo> "

    def _type(self, note, command, screen, sub):
        self.add("assistant", "tool_call", f"{note}\n<terminal>{command}</terminal>", sub)
        if screen is not None:
            self.add("tool", "tool_output", (_wrap(screen, 120) + "\n" + self.prompt).replace("\n", "\r\n"), sub)

    def view(self, path, start, end, content, sub):
        cmd = f"Get-Content {path.replace('/', chr(92))} | Select-Object -Skip {start - 1} -First {end - start + 1}"
        self._type(f"Reading {path}.", cmd, f"{self.prompt}{cmd}\n{content}", sub)

    def run(self, command, log, sub):
        self._type("Running the tests.", command, f"{self.prompt}{command}\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        tmp = f"tmp\\new_def{Path(path).suffix}"
        replace = f"python tools\\replace_def.py {path.replace('/', chr(92))} {tmp}"
        echoed = "\n".join([f"{self.prompt}@'", *(">> " + line for line in code.split("\n")),
                             f">> '@ | Set-Content {tmp}", f"{self.prompt}{replace}"])
        self._type(f"Rewriting the definition in {path}.", f"@'\n{code}\n'@ | Set-Content {tmp}; {replace}",
                   echoed if result is not None else None, sub)


class ZshMac(S.Style):
    """A macOS agent reading a zsh terminal: the assistant sends keys in a ``sh`` fence, the user message is the
    screen (``dev@MacBook-Pro repo % `` prompts, wrapped at 100 columns), a heredoc typed behind zsh's ``heredoc> ``
    continuation prompts."""
    system = ("You are pairing with a developer on their Mac. Send the keys to type as a ```sh block; the developer "
              "pastes back what the terminal shows.")
    prompt = "dev@MacBook-Pro repo % "

    def _send(self, keys, screen, sub):
        self.add("assistant", "tool_call", f"```sh\n{keys}\n```", sub)
        if screen is not None:
            self.add("user", "text", "Terminal:\n" + _wrap(screen, 100) + "\n" + self.prompt, sub)

    def view(self, path, start, end, content, sub):
        cmd = f"sed -n '{start},{end}p' {path}"
        self._send(cmd, f"{self.prompt}{cmd}\n{content}", sub)

    def run(self, command, log, sub):
        self._send(command, f"{self.prompt}{command}\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        tmp = "/tmp/new_def" + Path(path).suffix
        replace = f"python3 tools/replace_def.py {path} {tmp}"
        keys = f"cat > {tmp} <<'EOF'\n{code}\nEOF\n{replace}"
        echoed = "\n".join("heredoc> " + line for line in code.split("\n"))
        screen = f"{self.prompt}cat > {tmp} <<'EOF'\n{echoed}\nheredoc> EOF\n{self.prompt}{replace}"
        self._send(keys, screen if result is not None else None, sub)


def _blame(path, start, content):
    """``git blame -s`` of the lines: a commit (one per run of seven lines) and the line number before each."""
    return "\n".join(f"{hashlib.sha1(f'{path}{(start + i) // 7}'.encode()).hexdigest()[:7]} {start + i:>3}) {line}"
                     for i, line in enumerate(content.split("\n")))


class Blame(S.Style):
    """A chat-ops bot: the assistant writes slash commands (``/run CMD``, ``/patch PATH`` + a ``~~~`` fence); files
    are read with ``git blame -s -L``; tests run under tox."""
    system = ("You are the repository's maintenance bot. Act with slash commands, one per message: /run <shell command> "
              "runs it in the checkout; /patch <path> followed by a ~~~ fenced block replaces the definition it names. "
              "Use git blame to see who last touched the code you read.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call",
                 f"Checking the history of that part.\n/run git blame -s -L {start},{end} {path}", sub)
        self.add("tool", "tool_output", _blame(path, start, content), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"/run tox -e py312 -- {command.split()[-1]}", sub)
        self.add("tool", "tool_output", f"py312: commands[0]> {command}\n{log}\n  py312: FAIL code 1 (2.41 seconds)", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"/patch {path}\n~~~{lang}\n{code}\n~~~", sub)
        if result is not None:
            self.add("tool", "tool_output", f"patched {path} (1 hunk)", sub)


def _block(text, indent):
    """``text`` as a YAML block scalar's lines: every non-blank line indented."""
    return "\n".join((" " * indent + line) if line else "" for line in text.split("\n"))


class YamlRes(S.Style):
    """An MCP client that logs calls and results as YAML: ``tool:``/``args:`` calls, results with the file or log
    in a ``content: |`` block scalar (indented two spaces), edits with the code in a block scalar."""
    system = ("You are a coding agent. Tools: read_file(path, start, end), shell(cmd), replace_symbol(path, code). "
              "Write each call as YAML (tool: NAME, args: MAPPING); results come back as YAML.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"tool: read_file\nargs:\n  path: {path}\n  start: {start}\n  end: {end}", sub)
        self.add("tool", "tool_output", f"path: {path}\nrange: [{start}, {end}]\ncontent: |\n{_block(content, 2)}", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"tool: shell\nargs:\n  cmd: {json.dumps(command)}", sub)
        self.add("tool", "tool_output", f"exit_code: 1\nstdout: |\n{_block(log, 2)}\nstderr: ''", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"tool: replace_symbol\nargs:\n  path: {path}\n  code: |\n{_block(code, 4)}",
                 sub)
        if result is not None:
            self.add("tool", "tool_output", "ok: true\nreplaced: 1", sub)


def _lines(text):
    """``text`` as nbformat keeps it: a list of lines, each but the last ending in its line break."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + [parts[-1]]


class Notebook(S.Style):
    """A Jupyter agent whose tool speaks nbformat: the assistant sends a code cell as JSON (``source`` a list of
    lines), the result is the cell's ``outputs`` list (stream outputs whose ``text`` is a list of lines)."""
    system = ("You drive a Jupyter notebook opened in the repository. Add one code cell per turn as nbformat JSON; "
              "shell commands start with !. You get back the cell's outputs as JSON.")

    def __init__(self):
        super().__init__()
        self.n = 0

    def _cell(self, source, out, sub):
        self.n += 1
        self.add("assistant", "tool_call", json.dumps({"cell_type": "code", "execution_count": None, "metadata": {},
                                                       "source": _lines(source)}, indent=1), sub)
        if out is not None:
            self.add("tool", "tool_output", json.dumps({"execution_count": self.n, "outputs": [
                {"name": "stdout", "output_type": "stream", "text": _lines(out)}]}, indent=1), sub)

    def view(self, path, start, end, content, sub):
        self._cell(f"!sed -n '{start},{end}p' {path}", content, sub)

    def run(self, command, log, sub):
        self._cell(f"!{command}", log, sub)

    def edit(self, path, lang, code, result, sub):
        self._cell(f"%%writefile /tmp/new_def.py\n{code}", None, sub)
        if result is not None:
            self.add("tool", "tool_output", json.dumps({"execution_count": self.n, "outputs": [
                {"name": "stdout", "output_type": "stream", "text": ["Writing /tmp/new_def.py\n"]}]}, indent=1), sub)


class Cursor(S.Style):
    """A Cursor-like agent: JSON calls (``read_file`` with ``target_file`` and one-indexed lines,
    ``run_terminal_cmd``, ``edit_file`` with ``// ... existing code ...`` markers); a view comes back as a
    ``Contents of ... lines A-B`` header and a fence whose info string is ``A:B:path``."""
    system = ("You are a powerful agentic AI coding assistant, powered by Claude. You operate in Cursor, the world's "
              "best IDE.\n<tool_calling>Only call tools when necessary. Never refer to tool names when speaking to "
              "the USER.</tool_calling>\n<making_code_changes>Use one of the code edit tools at most once per turn."
              "</making_code_changes>")

    def _call(self, name, args, sub):
        self.add("assistant", "tool_call", json.dumps({"name": name, "parameters": args}), sub)

    def view(self, path, start, end, content, sub):
        self._call("read_file", {"target_file": path, "should_read_entire_file": False,
                                 "start_line_one_indexed": start, "end_line_one_indexed_inclusive": end,
                                 "explanation": "Read the code around the failure."}, sub)
        last = start + content.count("\n")
        self.add("tool", "tool_output", f"Contents of {path}, lines {start}-{last} (total {last + 40} lines):\n\n"
                 f"```{start}:{last}:{path}\n{content}\n```", sub)

    def run(self, command, log, sub):
        self._call("run_terminal_cmd", {"command": command, "is_background": False}, sub)
        self.add("tool", "tool_output", f"Exit code: {S._exit_code(log)}\n\nCommand output:\n\n```\n{log}\n```\n\n"
                 "Command completed.", sub)

    def edit(self, path, lang, code, result, sub):
        self._call("edit_file", {"target_file": path, "instructions": "Rewrite the definition.",
                                 "code_edit": f"// ... existing code ...\n{code}\n// ... existing code ..."}, sub)
        if result is not None:
            self.add("tool", "tool_output", f"The apply model made the following changes to the file:\n\n"
                     + "\n".join("+" + line for line in code.split("\n")), sub)


class Copilot(S.Style):
    """A VS Code Copilot-like chat: files reach the model as ``<attachment>`` elements holding a fence whose first
    line is a ``# filepath:`` comment; terminal output as ``<terminal_output>``; edits as fences with the same
    comment and ``...existing code...`` markers."""
    system = ("You are an AI programming assistant.\nWhen asked for your name, you must respond with \"GitHub "
              "Copilot\".\nFollow the user's requirements carefully & to the letter.\nKeep your answers short and "
              "impersonal.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"🛠️ read_file ({path}:{start}-{end})", sub)
        self.add("user", "text", f'<attachment id="file:{path.rsplit("/", 1)[-1]}" filePath="/home/dev/repo/{path}">\n'
                 f"Excerpt from {path.rsplit('/', 1)[-1]}, lines {start} to {end}:\n```python\n"
                 f"# filepath: /home/dev/repo/{path}\n{content}\n```\n</attachment>", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"🛠️ run_in_terminal (`{command}`)", sub)
        self.add("user", "text", f"<terminal_output command=\"{command}\">\n{log}\n</terminal_output>", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"```{lang or 'python'}\n# filepath: /home/dev/repo/{path}\n"
                 f"# ...existing code...\n{code}\n# ...existing code...\n```", sub)
        if result is not None:
            self.add("user", "text", "Applied the change.", sub)


class LessN(S.Style):
    """A terminal agent over a serial console: files read with ``less -N`` (``      1 code``: the number, then one
    space, no tab), commands typed after a ``$`` prompt; the whole exchange is plain user/assistant text."""
    system = ("You are connected to a remote machine's console. Type one shell command per message, nothing else; "
              "the operator pastes back the screen. Read files with `less -N`; never open an editor.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"less -N +{start} {path}", sub)
        body = S._numbered(content, start, "{n:>7} {line}")
        self.add("user", "text", f"$ less -N +{start} {path}\n{body}\n(END)", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", command, sub)
        self.add("user", "text", f"$ {command}\n{log}\n$ ", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"cat > /tmp/patch_def.py <<'EOF'\n{code}\nEOF", sub)
        if result is not None:
            self.add("user", "text", "$ ", sub)


class GoJson(S.Style):
    """A Go agent's JSON transcript: calls as ``{"tool": "view", "input": {...}}``, results as JSON whose strings
    escape ``<``, ``>`` and ``&`` as ``\\u003c``/``\\u003e``/``\\u0026`` (Go's encoding/json), tabs as ``\\t``."""
    system = ("You are crush, a CLI coding agent. Use the tools: view (file_path, offset, limit), bash (command), "
              "edit (file_path, old_string, new_string). Be concise; do not explain unless asked.")

    @staticmethod
    def _go(obj) -> str:
        return json.dumps(obj).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", self._go({"tool": "view", "input": {"file_path": f"/repo/{path}",
                                                                             "offset": start - 1,
                                                                             "limit": end - start + 1}}), sub)
        self.add("tool", "tool_output", self._go({"content": f"<file>\n{content}\n</file>", "is_error": False}), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", self._go({"tool": "bash", "input": {"command": command}}), sub)
        self.add("tool", "tool_output", self._go({"content": log, "is_error": S._exit_code(log) != 0}), sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "tool_call", self._go({"tool": "edit", "input": {"file_path": f"/repo/{path}",
                                                                             "old_string": head, "new_string": code}}),
                 sub)
        if result is not None:
            self.add("tool", "tool_output", self._go({"content": f"<result>File edited: /repo/{path}</result>",
                                                      "is_error": False}), sub)


class ApiJson(S.Style):
    """A raw Anthropic Messages API log: each call a ``tool_use`` content block, each result a ``tool_result`` block
    whose ``content`` is a list of ``{"type": "text", "text": ...}`` parts holding a ``cat -n`` view (tabs and line
    breaks escaped inside the JSON string)."""
    system = ("You are a software engineering agent. Tools: str_replace_based_edit_tool (view, str_replace, create) and "
              "bash. Investigate before you change anything; make the smallest change that fixes the issue.")

    def __init__(self):
        super().__init__()
        self.n = 0

    def _use(self, name, args, sub):
        self.n += 1
        self.add("assistant", "tool_call", json.dumps({"type": "tool_use", "id": f"toolu_01A{self.n:05d}", "name": name,
                                                       "input": args}), sub)

    def _result(self, text, sub, error=False):
        self.add("tool", "tool_output", json.dumps([{"type": "tool_result", "tool_use_id": f"toolu_01A{self.n:05d}",
                                                     "is_error": error, "content": [{"type": "text", "text": text}]}]),
                 sub)

    def view(self, path, start, end, content, sub):
        self._use("str_replace_based_edit_tool", {"command": "view", "path": f"/repo/{path}",
                                                  "view_range": [start, end]}, sub)
        self._result(S._numbered(content, start, "{n:>6}\t{line}"), sub)

    def run(self, command, log, sub):
        self._use("bash", {"command": command}, sub)
        self._result(log, sub, S._exit_code(log) != 0)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self._use("str_replace_based_edit_tool", {"command": "str_replace", "path": f"/repo/{path}", "old_str": head,
                                                  "new_str": code}, sub)
        if result is not None:
            self._result(f"The file /repo/{path} has been edited.", sub)


class GitDiff(S.Style):
    """An agent that reads whole files as new-file diffs (``git diff --no-index /dev/null PATH``: every line behind
    ``+``), other ranges with ``git show HEAD:PATH | sed -n``, and edits by sending a unified diff to ``git apply``."""
    system = ("You work in a git checkout. Every message you send is one shell command; its output comes back in the "
              "next message. Propose changes only as unified diffs applied with `git apply`.")

    def view(self, path, start, end, content, sub):
        lines = content.split("\n")
        if start == 1:
            cmd = f"git diff --no-index /dev/null {path}"
            out = (f"diff --git a/{path} b/{path}\nnew file mode 100644\nindex 0000000..{hashlib.sha1(path.encode()).hexdigest()[:7]}\n"
                   f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + ln for ln in lines))
        else:
            cmd = f"git show HEAD:{path} | sed -n '{start},{end}p'"
            out = content
        self.add("assistant", "text", cmd, sub)
        self.add("user", "text", out, sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", command, sub)
        self.add("user", "text", log, sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        added = "\n".join("+" + ln for ln in code.split("\n"))
        self.add("assistant", "text", f"git apply <<'PATCH'\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,{code.count(chr(10)) + 1} @@\n"
                 f"-{head}\n{added}\nPATCH", sub)
        if result is not None:
            self.add("user", "text", f"Applied patch to {path} cleanly.", sub)


class RespApi(S.Style):
    """OpenAI Responses API items: ``function_call`` items whose ``arguments`` is a JSON-encoded string, and
    ``function_call_output`` items whose ``output`` is itself JSON text (``{"content": ...}``), so a file's line
    breaks reach the model escaped twice (``\\\\n``)."""
    system = ("You are a helpful coding agent. Use read_file(path, start_line, end_line), exec_command(cmd) and "
              "apply_patch(input) to resolve the user's request; verify with the tests before you finish.")

    def __init__(self):
        super().__init__()
        self.n = 0

    def _call(self, name, args, sub):
        self.n += 1
        self.add("assistant", "tool_call", json.dumps({"type": "function_call", "call_id": f"call_{self.n:04d}xK",
                                                       "name": name, "arguments": json.dumps(args)}), sub)

    def _output(self, obj, sub):
        self.add("tool", "tool_output", json.dumps({"type": "function_call_output", "call_id": f"call_{self.n:04d}xK",
                                                    "output": json.dumps(obj)}), sub)

    def view(self, path, start, end, content, sub):
        self._call("read_file", {"path": path, "start_line": start, "end_line": end}, sub)
        self._output({"path": path, "content": content}, sub)

    def run(self, command, log, sub):
        self._call("exec_command", {"cmd": command}, sub)
        self._output({"exit_code": S._exit_code(log), "stdout": log}, sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        added = "\n".join("+" + ln for ln in code.split("\n"))
        self._call("apply_patch", {"input": f"*** Begin Patch\n*** Update File: {path}\n@@\n-{head}\n{added}\n"
                                            "*** End Patch"}, sub)
        if result is not None:
            self._output({"ok": True}, sub)


class ClaudeTerm(S.Style):
    """Claude Code's terminal screen pasted back as text: ``⏺ Bash(cmd)`` for a call, its output under ``  ⎿  ``
    with every further line indented five spaces; file views through ``cat -n`` piped to ``sed -n``."""
    system = ("You are Claude Code, Anthropic's official CLI for Claude. You are an interactive CLI tool that helps "
              "users with software engineering tasks. IMPORTANT: keep your responses short.")

    @staticmethod
    def _out(text):
        lines = text.split("\n")
        return "  \u23bf  " + lines[0] + "".join("\n     " + ln for ln in lines[1:])

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"\u23fa Bash(cat -n {path} | sed -n '{start},{end}p')", sub)
        self.add("tool", "tool_output", self._out(S._numbered(content, start, "{n:>6}\t{line}")), sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"\u23fa Bash({command})", sub)
        self.add("tool", "tool_output", self._out(log), sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"\u23fa Update({path})", sub)
        if result is not None:
            diff = "\n".join(f"{i:>6} + {ln}" for i, ln in enumerate(code.split("\n"), 1))
            self.add("tool", "tool_output", self._out(f"Updated {path} with {code.count(chr(10)) + 1} additions and 1 "
                                                      f"removal\n{1:>6} - {head}\n{diff}"), sub)


class PyRepr(S.Style):
    """A Python-tool agent whose results are the ``repr()`` of the returned value: a file read comes back as one
    line, ``'import os\\n\\ndef f(x):\\n    ...'``, its line breaks written as ``\\n``."""
    system = ("You control a Python sandbox through the functions read(path, start, end) -> str, sh(cmd) -> str and "
              "replace_def(path, source) -> bool. Each call's return value is shown to you as its repr().")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f">>> read({path!r}, {start}, {end})", sub)
        self.add("tool", "tool_output", repr(content + "\n"), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f">>> sh({command!r})", sub)
        self.add("tool", "tool_output", repr(log), sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f">>> replace_def({path!r}, {code!r})", sub)
        if result is not None:
            self.add("tool", "tool_output", "True", sub)


class LineObjs(S.Style):
    """A structured file tool (MCP-server-like): a view comes back as compact JSON, one object per line,
    ``{"path": ..., "lines": [{"n": 19, "text": "import os"}, ...]}``, the whole view on one physical line."""
    system = ("You are an autonomous software agent. Tools: fs.read {path, from, to} returns the file's lines as "
              "objects; proc.run {argv} runs a process; fs.replace {path, symbol, source} swaps one definition.")

    def _call(self, name, args, sub):
        self.add("assistant", "tool_call", json.dumps({"tool": name, "args": args}, separators=(",", ":")), sub)

    def view(self, path, start, end, content, sub):
        self._call("fs.read", {"path": path, "from": start, "to": end}, sub)
        lines = [{"n": start + i, "text": ln} for i, ln in enumerate(content.split("\n"))]
        self.add("tool", "tool_output", json.dumps({"path": path, "lines": lines}, separators=(",", ":")), sub)

    def run(self, command, log, sub):
        self._call("proc.run", {"argv": ["sh", "-c", command]}, sub)
        self.add("tool", "tool_output", json.dumps({"code": S._exit_code(log), "out": log}, separators=(",", ":")), sub)

    def edit(self, path, lang, code, result, sub):
        name = code.split("(", 1)[0].split()[-1] if "(" in code.split("\n", 1)[0] else "block"
        self._call("fs.replace", {"path": path, "symbol": name, "source": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", '{"replaced":true}', sub)


class Repomix(S.Style):
    """Files packed by repomix's plain output (``====`` rules around ``File: PATH``, the file raw below) and pasted
    by the user; commands and their output in plain user/assistant turns; edits as a ``File:`` block of the new
    definition."""
    system = ("You are a senior engineer. The user pastes code packed with repomix and command output; answer with the "
              "next command to run, or with the changed definition as a File: block.")
    RULE = "=" * 16

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Please pack `{path}` (lines {start}-{end}).", sub)
        self.add("user", "text", f"This file is a merged representation of a subset of the codebase, packed by "
                 f"Repomix.\n\n{self.RULE}\nFile: {path}\n{self.RULE}\n{content}\n", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Run `{command}` and paste the output.", sub)
        self.add("user", "text", f"$ {command}\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"{self.RULE}\nFile: {path}\n{self.RULE}\n{code}\n", sub)
        if result is not None:
            self.add("user", "text", "Applied.", sub)


class Compose(S.Style):
    """An agent whose tools run in a docker compose service and come back as ``docker compose logs`` output: every
    line behind the service's ``sandbox-1  | `` prefix, the command echoed first with ``+ `` (``set -x``)."""
    system = ("You are a repair agent working inside a docker compose sandbox. Send one shell command per turn; you "
              "receive the service's log lines. Keep fixes minimal and keep public signatures.")

    @staticmethod
    def _log(command, out):
        return "\n".join(f"sandbox-1  | {ln}" for ln in [f"+ {command}", *out.split("\n")])

    def view(self, path, start, end, content, sub):
        cmd = f"sed -n '{start},{end}p' {path}"
        self.add("assistant", "tool_call", f"docker compose exec sandbox {cmd}", sub)
        self.add("tool", "tool_output", self._log(cmd, content), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"docker compose exec sandbox {command}", sub)
        self.add("tool", "tool_output", self._log(command, log), sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"docker compose exec -T sandbox python tools/replace_def.py {path} "
                 f"<<'EOF'\n{code}\nEOF", sub)
        if result is not None:
            self.add("tool", "tool_output", self._log(f"python tools/replace_def.py {path}", "replaced 1 definition"),
                     sub)


class RichPanel(S.Style):
    """A terminal agent built on rich: a file shown with line numbers inside a ``Panel`` titled by the path
    (``│   12 │ code ... │``, the right border padded out, a long line's rest under a blank gutter), command output
    in a panel titled by the command."""
    system = ("You are a terminal coding assistant. Tools: show(path, start, end), shell(cmd), patch(path, code). "
              "Outputs are drawn as panels; read them carefully before you act.")
    WIDTH = 80

    def _panel(self, title, rows):
        inner = self.WIDTH - 4
        out = ["\u256d\u2500 " + title + " " + "\u2500" * max(0, inner - len(title) - 1) + "\u256e"]
        for row in rows:
            for i in range(0, max(len(row), 1), inner):
                out.append("\u2502 " + row[i:i + inner].ljust(inner) + " \u2502")
        out.append("\u2570" + "\u2500" * (inner + 2) + "\u256f")
        return "\n".join(out)

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"show({path!r}, {start}, {end})", sub)
        width = self.WIDTH - 12  # rich's word wrap: the rest of a long line under a blank gutter
        rows = [f"{start + i if k == 0 else '':>5} \u2502 {ln[k:k + width]}"
                for i, ln in enumerate(content.split("\n")) for k in range(0, max(len(ln), 1), width)]
        self.add("tool", "tool_output", self._panel(path, rows), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"shell({command!r})", sub)
        self.add("tool", "tool_output", self._panel(command[:60], log.split("\n")), sub)

    def edit(self, path, lang, code, result, sub):
        quote = "\'\'\'" if '"""' in code else '"""'
        self.add("assistant", "tool_call", f"patch({path!r}, {quote}\n{code}\n{quote})", sub)
        if result is not None:
            self.add("tool", "tool_output", self._panel("patch", [f"\u2714 {path} updated"]), sub)


class JUnit(S.Style):
    """An agent whose test runs report JUnit XML (``pytest --junitxml=/dev/stdout``: failures as ``<failure>``
    elements, text XML-escaped), files read with ``nl -ba`` (``N`` right-aligned in six columns and a tab), edits
    sent as ``REPLACE PATH`` / code / ``END`` blocks."""
    system = ("You are an automated maintainer. Reply with one command per turn. Tests report JUnit XML; file views "
              "come from nl -ba. To change a definition send REPLACE <path> on its own line, the code, then END.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"nl -ba {path} | sed -n '{start},{end}p'", sub)
        self.add("tool", "tool_output", S._numbered(content, start, "{n:>6}\t{line}"), sub)

    def run(self, command, log, sub):
        fails = S._exit_code(log)
        body = html.escape(log, quote=True)
        xml = (f'<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
               f'failures="{fails}" skipped="0" tests="1"><testcase classname="tests" name="run">'
               + (f'<failure message="see output">{body}</failure>' if fails else f"<system-out>{body}</system-out>")
               + "</testcase></testsuite></testsuites>")
        self.add("assistant", "tool_call", f"{command} --junitxml=/dev/stdout -q", sub)
        self.add("tool", "tool_output", xml, sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"REPLACE {path}\n{code}\nEND", sub)
        if result is not None:
            self.add("tool", "tool_output", "OK", sub)


_ESC = "\x1b["
_PY_WORDS = re.compile(r"(#[^\n]*)|(\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')|\b(def|class|return|if|elif|else|for|"
                       r"while|import|from|try|except|raise|yield|lambda|None|True|False)\b|\b(\d+)\b")
_PY_COLOURS = ("90", "33", "35", "36")


def _highlight(line: str) -> str:
    """``line`` coloured the way ``bat --color=always`` colours Python: comments, strings, keywords, numbers."""
    def paint(m):
        group = m.lastindex
        return f"{_ESC}{_PY_COLOURS[group - 1]}m{m.group(0)}{_ESC}m"
    return _PY_WORDS.sub(paint, line)


def _colour_log(log: str) -> str:
    """A pytest log as ``--color=yes`` prints it: error lines bold red, summary words coloured."""
    out = []
    for line in log.split("\n"):
        if line.startswith("E ") or line.startswith("FAILED"):
            line = f"{_ESC}1m{_ESC}31m{line}{_ESC}0m"
        elif line.startswith("_") or line.startswith("="):
            line = f"{_ESC}31m{_ESC}1m{line}{_ESC}0m"
        out.append(re.sub(r"\b(\d+ passed)\b", f"{_ESC}32m\\1{_ESC}0m", line))
    return "\n".join(out)


class Ansi(S.Style):
    """A terminal captured with its colours (``tmux capture-pane -e``): the prompt coloured, files read with ``bat
    --color=always --style=numbers`` (a grey line number, then the code with ANSI colour codes around keywords,
    strings and comments), pytest run with ``--color=yes``."""
    system = ("You drive a colour terminal through tmux. Send one shell command per turn in a ```sh fence; the reply "
              "is the pane's content with its escape codes.")
    prompt = f"{_ESC}01;32mdev@box{_ESC}00m:{_ESC}01;34m~/repo{_ESC}00m$ "

    def _pane(self, command, out, sub):
        self.add("assistant", "tool_call", f"```sh\n{command}\n```", sub)
        if out is not None:
            self.add("tool", "tool_output", f"{self.prompt}{command}\n{out}\n{self.prompt}", sub)

    def view(self, path, start, end, content, sub):
        rows = [f"{_ESC}90m{start + i:>4}{_ESC}m {_highlight(ln)}" for i, ln in enumerate(content.split("\n"))]
        self._pane(f"bat --color=always --style=numbers -r {start}:{end} {path}", "\n".join(rows), sub)

    def run(self, command, log, sub):
        self._pane(f"{command} --color=yes", _colour_log(log), sub)

    def edit(self, path, lang, code, result, sub):
        self._pane(f"python tools/replace_def.py {path} <<'EOF'\n{code}\nEOF",
                   None if result is None else f"{_ESC}32mreplaced{_ESC}0m 1 definition in {path}", sub)


class MdIndent(S.Style):
    """A chat UI's export as Markdown with indented code blocks (four spaces, no fences): each call a bold tool name
    and its argument in backticks, each result indented under it; edits written the same way."""
    system = "You are a helpful coding assistant with tools read_file, run and replace. Results are shown as Markdown."

    @staticmethod
    def _indent(text):
        return "\n".join(("    " + ln) if ln else "" for ln in text.split("\n"))

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"**read_file** `{path}` lines {start}-{end}", sub)
        self.add("tool", "tool_output", f"Contents of `{path}`:\n\n{self._indent(content)}\n", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"**run** `{command}`", sub)
        self.add("tool", "tool_output", f"Output:\n\n{self._indent(log)}\n", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", f"**replace** `{path}` with:\n\n{self._indent(code)}\n", sub)
        if result is not None:
            self.add("tool", "tool_output", f"Replaced a definition in `{path}`.", sub)


class Pdb(S.Style):
    """A debugger agent in the manner of debug-gym: JSON tool calls (``pdb``, ``view``, ``rewrite``, ``eval``), files
    listed by pdb's ``list`` (``N`` in three columns, a ``B`` for a breakpoint, ``->`` at the current line, a tab,
    then the code), tests run under ``pytest --pdb`` so a failure ends at a ``(Pdb)`` prompt."""
    system = ("You are a debugging agent. Tools: pdb(command), view(path), rewrite(path, start, end, new_code), "
              "eval(). Use the debugger to find the bug before you rewrite any code.")

    def _call(self, name, args, sub):
        self.add("assistant", "tool_call", json.dumps({"name": name, "arguments": args}), sub)

    def view(self, path, start, end, content, sub):
        self._call("pdb", {"command": f"b {path}:{start + 2}"}, sub)
        self.add("tool", "tool_output", f"Breakpoint 1 at /testbed/{path}:{start + 2}", sub)
        self._call("pdb", {"command": f"l {start}, {end}"}, sub)
        rows = [f"{str(start + i).rjust(3):<4}{'B' if i == 2 else ' '}{'->' if i == 3 else '  '}\t{ln}"
                for i, ln in enumerate(content.split("\n"))]
        self.add("tool", "tool_output", f"(Pdb) l {start}, {end}\n" + "\n".join(rows) + "\n(Pdb) ", sub)

    def run(self, command, log, sub):
        self._call("eval", {"command": f"{command} --pdb"}, sub)
        tail = "\n>>>>>>>>>>>>>>>>>>>> entering PDB >>>>>>>>>>>>>>>>>>>>\n(Pdb) " if S._exit_code(log) else ""
        self.add("tool", "tool_output", log + tail, sub)

    def edit(self, path, lang, code, result, sub):
        self._call("rewrite", {"path": path, "new_code": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", f"The file `{path}` has been updated successfully.", sub)



def _first_symbol(content: str, start: int) -> str:
    """A name for a piece of a file as a code-search tool gives it: its first definition, else ``imports`` at the
    top of the file, else ``impl``."""
    m = re.search(r"^\s*(?:async\s+)?(?:def|class)\s+(\w+)", content, re.M)
    return m.group(1) if m else "imports" if start == 1 else "impl"


class Moatless(S.Style):
    """A moatless-tools-like agent: JSON actions (``ViewCode``, ``RunTests``, ``StringReplace``), files shown as a
    ``<file_context>`` of ``<span id='...'>`` pieces inside a bare fence, test results summarised above the log."""
    system = ("You are an autonomous AI assistant with superior programming skills. Use the actions to view code, run "
              "tests and change code; respond with one JSON action per turn.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", json.dumps({"action": "ViewCode", "files": [
            {"file_path": path, "start_line": start, "end_line": end}]}), sub)
        self.add("user", "text", f"<file_context>\n{path}\n```\n\n<span id='{_first_symbol(content, start)}'>\n"
                 f"{content}\n</span>\n```\n</file_context>", sub)

    def run(self, command, log, sub):
        files = [w for w in command.split() if w.endswith(".py")]
        self.add("assistant", "tool_call", json.dumps({"action": "RunTests", "test_files": files}), sub)
        verdict = "failed" if S._exit_code(log) else "passed"
        self.add("user", "text", f"Running tests for the following files:\n* {', '.join(files) or 'all'}\n\n"
                 f"Tests {verdict}.\n\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "tool_call", json.dumps({"action": "StringReplace", "path": path, "old_str": head,
                                                       "new_str": code}), sub)
        if result is not None:
            self.add("user", "text", f"The file {path} has been edited. Review the changes and make sure they are as "
                     "expected.", sub)


class Acr(S.Style):
    """An AutoCodeRover-like agent: search API calls (``search_code_in_file("f", "a.py")``), results as ``<file>`` and
    ``<code>`` elements inside a fence under ``- Search result 1:``, patches as ``# modification 1`` with
    ``<original>``/``<patched>`` elements."""
    system = ("You are a software developer maintaining a large project. Use the search APIs to gather context, then "
              "write a patch as modifications with <file>, <original> and <patched> elements.")

    def view(self, path, start, end, content, sub):
        sym = _first_symbol(content, start)
        self.add("assistant", "tool_call", f'search_code_in_file("{sym}", "{path}")', sub)
        self.add("user", "text", f"Found 1 snippets with code {sym} in file {path}:\n\n- Search result 1:\n```\n"
                 f"<file>{path}</file>\n<code>\n{content}\n</code>\n```\n", sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"run_command({command!r})", sub)
        self.add("user", "text", f"Result of run_command({command!r}):\n\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"# modification 1\n```\n<file>{path}</file>\n<original>{head}</original>\n"
                 f"<patched>{code}\n</patched>\n```", sub)
        if result is not None:
            self.add("user", "text", "The patch applied cleanly.", sub)



class GeminiCli(S.Style):
    """A Gemini-CLI-like agent: ``functionCall`` / ``functionResponse`` parts as JSON, a file read back raw in the
    response's ``output``, a shell command's result as ``Command:`` / ``Stdout:`` / ``Exit Code:`` fields, edits by
    ``replace`` with ``old_string`` / ``new_string``."""
    system = ("You are an interactive CLI agent specializing in software engineering tasks. Use the tools read_file, "
              "run_shell_command and replace; explain briefly before each call.")

    def _call(self, name, args, output, sub):
        self.add("assistant", "tool_call", json.dumps({"functionCall": {"name": name, "args": args}}), sub)
        if output is not None:
            self.add("tool", "tool_output", json.dumps({"functionResponse": {"name": name,
                                                                             "response": {"output": output}}}), sub)

    def view(self, path, start, end, content, sub):
        self._call("read_file", {"absolute_path": f"/home/dev/repo/{path}", "offset": start - 1,
                                 "limit": end - start + 1}, content, sub)

    def run(self, command, log, sub):
        self._call("run_shell_command", {"command": command}, f"Command: {command}\nDirectory: (root)\nStdout: {log}"
                   f"\nStderr: (empty)\nError: (none)\nExit Code: {S._exit_code(log)}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self._call("replace", {"file_path": f"/home/dev/repo/{path}", "old_string": head, "new_string": code},
                   None if result is None else f"Successfully modified file: /home/dev/repo/{path} (1 replacements).",
                   sub)


class Continue(S.Style):
    """A Continue-like IDE assistant: files attached by the user as fences whose info string is the language, the
    path and the line range (```python src/a.py (10-80)```), terminal output pasted in a plain fence, edits answered
    as a fence with the path."""
    system = "You are an AI coding assistant inside the IDE. The user attaches files and terminal output as context."

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Could you share `{path}`?", sub)
        self.add("user", "text", f"```{Path(path).suffix.lstrip('.') or 'text'} {path} ({start}-{end})\n{content}\n```",
                 sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Run `{command}` in the terminal and share the output.", sub)
        self.add("user", "text", f"Terminal output:\n```\n$ {command}\n{log}\n```", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"```{lang} {path}\n{code}\n```", sub)
        if result is not None:
            self.add("user", "text", "Applied.", sub)


class AutoGen(S.Style):
    """An AutoGen-like pair of agents: the assistant writes a fenced ``sh`` or ``python`` block to run (no tool
    calls), the user proxy answers ``exitcode: 0 (execution succeeded)`` and ``Code output:`` with the raw output;
    an edit is a ``python`` block opening with a ``# filename:`` comment."""
    system = ("You are a helpful AI assistant. Solve tasks using your coding and language skills. Suggest python code "
              "(in a python coding block) or shell script (in a sh coding block) for the user to execute. Reply "
              "\"TERMINATE\" when everything is done.")

    def _result(self, code, output, sub):
        verdict = "execution failed" if code else "execution succeeded"
        self.add("user", "text", f"exitcode: {code} ({verdict})\nCode output: \n{output}", sub)

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Let me look at the code first.\n```sh\nsed -n '{start},{end}p' {path}\n```",
                 sub)
        self._result(0, content, sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Now run the tests.\n```sh\n{command}\n```", sub)
        self._result(S._exit_code(log), log, sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"```{lang}\n# filename: {path}\n{code}\n```", sub)
        if result is not None:
            self._result(0, "", sub)


class Agentless(S.Style):
    """An Agentless-like pipeline (no agent loop, no tool calls): localised files pasted between ``--- BEGIN FILE
    ---`` / ``--- END FILE ---`` as a fence opening on ``### path`` with ``...`` for the lines left out, a
    reproduction run between ``--- BEGIN TEST OUTPUT ---`` markers, edits as ``### path`` SEARCH/REPLACE blocks."""
    system = "You are an expert software engineer. Localise the bug from the files below and fix it."

    def view(self, path, start, end, content, sub):
        self.add("user", "text", f"Below are some code segments from a relevant file.\n--- BEGIN FILE ---\n```\n"
                 f"### {path}\n{'...' if start > 1 else ''}\n{content}\n...\n```\n--- END FILE ---", sub)

    def run(self, command, log, sub):
        self.add("user", "text", f"The reproduction test `{command}` gives:\n--- BEGIN TEST OUTPUT ---\n{log}\n"
                 "--- END TEST OUTPUT ---", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "text", f"```{lang}\n### {path}\n<<<<<<< SEARCH\n{head}\n=======\n{code}\n"
                 ">>>>>>> REPLACE\n```", sub)
        if result is not None:
            self.add("user", "text", "The edit was applied.", sub)


class OpenCode(S.Style):
    """An opencode-like terminal agent: JSON tool calls (``read``, ``bash``, ``edit``) with camelCase arguments, a
    file read back inside ``<file>`` tags as five-digit zero-padded numbers and ``| `` before each line, a shell
    result as ``<stdout>`` with the exit code after."""
    system = ("You are opencode, an interactive CLI tool that helps users with software engineering tasks. Use the "
              "tools read, bash and edit; be concise.")

    def _call(self, name, args, sub):
        self.add("assistant", "tool_call", json.dumps({"tool": name, "input": args}), sub)

    def view(self, path, start, end, content, sub):
        self._call("read", {"filePath": f"/home/dev/repo/{path}", "offset": start - 1, "limit": end - start + 1},
                   sub)
        rows = "\n".join(f"{start + i:05d}| {ln}" for i, ln in enumerate(content.split("\n")))
        self.add("tool", "tool_output", f"<file>\n{rows}\n\n(File has more lines. Use 'offset' parameter to read "
                 f"beyond line {end})\n</file>", sub)

    def run(self, command, log, sub):
        self._call("bash", {"command": command, "description": "Run the tests"}, sub)
        self.add("tool", "tool_output", f"<stdout>\n{log}\n</stdout>\n<exit_code>{S._exit_code(log)}</exit_code>",
                 sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self._call("edit", {"filePath": f"/home/dev/repo/{path}", "oldString": head, "newString": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", "Edit applied successfully.", sub)


class Roo(S.Style):
    """A Roo-Code-like IDE agent: XML tool use after a ``<thinking>`` (``<read_file><args><file><path>``...), a file
    read back as ``<files><file><path>..</path><content lines="a-b">`` with ``N | `` before each line, commands as
    ``<execute_command>``, edits as ``<apply_diff>`` SEARCH/REPLACE blocks with a ``:start_line:``."""
    system = ("You are Roo, a highly skilled software engineer. You use tools one at a time, in XML: read_file, "
              "execute_command, apply_diff. Wait for each tool's result before you go on.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", f"<thinking>I need the code around line {start}.</thinking>\n<read_file>\n"
                 f"<args>\n  <file>\n    <path>{path}</path>\n    <line_range>{start}-{end}</line_range>\n  </file>\n"
                 "</args>\n</read_file>", sub)
        rows = "\n".join(f"{start + i} | {ln}" for i, ln in enumerate(content.split("\n")))
        self.add("user", "tool_output", f"[read_file for '{path}'] Result:\n<files>\n<file><path>{path}</path>\n"
                 f'<content lines="{start}-{end}">\n{rows}\n</content>\n</file>\n</files>', sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", f"<execute_command>\n<command>{command}</command>\n</execute_command>", sub)
        self.add("user", "tool_output", f"[execute_command for '{command}'] Result:\nCommand executed in terminal "
                 f"within working directory '/home/dev/repo'. Exit code: {S._exit_code(log)}\nOutput:\n{log}", sub)

    def edit(self, path, lang, code, result, sub):
        head = code.split("\n", 1)[0]
        self.add("assistant", "tool_call", f"<apply_diff>\n<path>{path}</path>\n<diff>\n<<<<<<< SEARCH\n:start_line:1\n"
                 f"-------\n{head}\n=======\n{code}\n>>>>>>> REPLACE\n</diff>\n</apply_diff>", sub)
        if result is not None:
            self.add("user", "tool_output", f"[apply_diff for '{path}'] Result:\nChanges successfully applied.", sub)


class RgJson(S.Style):
    """A search-first agent whose only reader is ripgrep's JSON: a view is ``rg --json -n -C`` around a line of the
    file, one JSON object per line (``begin``, ``context``/``match`` rows holding each line in ``data.lines.text``,
    ``end``, a ``summary``); calls and the other results as JSON."""
    system = ("You are a code search agent. Tools: search {pattern, path, context} runs ripgrep and returns its JSON "
              "output; shell {cmd} runs a command; write {path, code} replaces a definition.")

    def view(self, path, start, end, content, sub):
        lines = content.split("\n")
        mid = len(lines) // 2
        pattern = re.escape(lines[mid].strip()[:40]) or "^"
        context = max(mid, len(lines) - mid - 1)
        self.add("assistant", "tool_call", json.dumps({"tool": "search", "args": {"pattern": pattern, "path": path,
                                                                                   "context": context}}), sub)
        rows = [json.dumps({"type": "begin", "data": {"path": {"text": path}}})]
        offset = 0
        for i, ln in enumerate(lines):
            kind = "match" if i == mid else "context"
            row = {"type": kind, "data": {"path": {"text": path}, "lines": {"text": ln + "\n"},
                                          "line_number": start + i, "absolute_offset": offset}}
            if kind == "match":
                row["data"]["submatches"] = [{"match": {"text": lines[mid].strip()[:40]}, "start": 0, "end": 1}]
            rows.append(json.dumps(row))
            offset += len(ln) + 1
        rows.append(json.dumps({"type": "end", "data": {"path": {"text": path}, "binary_offset": None,
                                                        "stats": {"matched_lines": 1}}}))
        rows.append(json.dumps({"type": "summary", "data": {"elapsed_total": {"human": "0.004s"}}}))
        self.add("tool", "tool_output", "\n".join(rows), sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", json.dumps({"tool": "shell", "args": {"cmd": command}}), sub)
        self.add("tool", "tool_output", json.dumps({"exit": S._exit_code(log), "output": log}), sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", json.dumps({"tool": "write", "args": {"path": path, "code": code}}), sub)
        if result is not None:
            self.add("tool", "tool_output", json.dumps({"ok": True}), sub)


class DeepSeekRaw(S.Style):
    """A client that rendered DeepSeek's chat template itself and sent the pieces as they were: calls as
    ``<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`` and a fenced JSON, each result glued to
    ``<｜tool▁output▁begin｜>`` and ``<｜tool▁output▁end｜>`` with no line break, the file raw."""
    system = ("You are a helpful coding assistant with tools: read_file(path, start, end), run(cmd), "
              "replace(path, code). Call one tool at a time.")
    CALL = ("<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>function"
            "<\uff5ctool\u2581sep\uff5c>")
    END = "<\uff5ctool\u2581call\u2581end\uff5c><\uff5ctool\u2581calls\u2581end\uff5c>"
    OUT, OUT_END = "<\uff5ctool\u2581output\u2581begin\uff5c>", "<\uff5ctool\u2581output\u2581end\uff5c>"

    def _call(self, name, args, sub):
        self.add("assistant", "tool_call", f"{self.CALL}{name}\n```json\n{json.dumps(args)}\n```{self.END}", sub)

    def view(self, path, start, end, content, sub):
        self._call("read_file", {"path": path, "start": start, "end": end}, sub)
        self.add("tool", "tool_output", f"{self.OUT}{content}{self.OUT_END}", sub)

    def run(self, command, log, sub):
        self._call("run", {"cmd": command}, sub)
        self.add("tool", "tool_output", f"{self.OUT}{log}{self.OUT_END}", sub)

    def edit(self, path, lang, code, result, sub):
        self._call("replace", {"path": path, "code": code}, sub)
        if result is not None:
            self.add("tool", "tool_output", f"{self.OUT}replaced 1 definition{self.OUT_END}", sub)


class VimScreen(S.Style):
    """A terminal agent that reads files in ``vim -R`` and sends the screen back: the lines shown, ``~`` on the rows
    past the end of the buffer, vim's message and ruler on the last row; commands typed at a bash prompt."""
    system = ("You drive a terminal. Send keystrokes as {\"keys\": ...}; you get the screen back. Open files with "
              "vim -R +LINE PATH and quit with :q before you run anything else.")

    def view(self, path, start, end, content, sub):
        self.add("assistant", "tool_call", json.dumps({"keys": f"vim -R +{start} {path}\n"}), sub)
        lines = content.split("\n")
        status = f'"{path}" [readonly] {end + 40}L, {sum(len(ln) + 1 for ln in lines) * 9}B'
        ruler = f"{start},1           {min(99, 100 * start // (end + 40))}%"
        screen = "\n".join(lines) + "\n~\n~\n" + status + " " * max(1, 70 - len(status) - len(ruler)) + ruler
        self.add("user", "tool_output", screen, sub)

    def run(self, command, log, sub):
        self.add("assistant", "tool_call", json.dumps({"keys": f":q\n{command}\n"}), sub)
        self.add("user", "tool_output", f"dev@box:~/repo$ {command}\n{log}\ndev@box:~/repo$ ", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "tool_call", json.dumps({"keys": f"cat > /tmp/patch.py <<'EOF'\n{code}\nEOF\n"}), sub)
        if result is not None:
            self.add("user", "tool_output", "dev@box:~/repo$ ", sub)


class BatGrid(S.Style):
    """An agent that reads files with ``bat`` in its default full style and no colours: a ``File:`` header between
    box-drawn rules, each line after its number and a ``│`` gutter; edits sent as ``apply_patch`` heredocs."""
    system = ("You are a careful coding agent in a terminal. Run one shell command per turn in a ```bash block. "
              "Read files with `bat -r START:END PATH`; edit with apply_patch; run the tests before you stop.")
    RULE = "─" * 7

    def view(self, path, start, end, content, sub):
        self.add("assistant", "text", f"Let me read the file.\n```bash\nbat -r {start}:{end} {path}\n```", sub)
        wide = "─" * 60
        body = S._numbered(content, start, "{n:>4}   │ {line}")
        self.add("user", "tool_output", f"{self.RULE}┬{wide}\n       │ File: {path}\n{self.RULE}┼{wide}\n{body}\n"
                 f"{self.RULE}┴{wide}", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"```bash\n{command}\n```", sub)
        self.add("user", "tool_output", log, sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"```bash\napply_patch <<'PATCH'\n*** Update File: {path}\n{code}\nPATCH\n```",
                 sub)
        if result is not None:
            self.add("user", "tool_output", f"Done! M {path}", sub)


class LspJson(S.Style):
    """An editor-embedded agent speaking JSON-RPC: a view is a ``workspace/readFile`` request with a zero-based LSP
    range, its response holds the lines as one escaped ``text`` string; commands run through ``terminal/run``."""
    system = ("You are an assistant embedded in the editor. Request what you need as JSON-RPC 2.0 messages, one per "
              "turn: workspace/readFile {uri, range}, terminal/run {command}, workspace/applyEdit {uri, newText}.")

    def __init__(self) -> None:
        super().__init__()
        self.id = 0

    def _call(self, method, params, sub):
        self.id += 1
        self.add("assistant", "tool_call", json.dumps({"jsonrpc": "2.0", "id": self.id, "method": method,
                                                       "params": params}), sub)

    def _result(self, result, sub):
        self.add("tool", "tool_output", json.dumps({"jsonrpc": "2.0", "id": self.id, "result": result}), sub)

    def view(self, path, start, end, content, sub):
        rng = {"start": {"line": start - 1, "character": 0}, "end": {"line": end, "character": 0}}
        self._call("workspace/readFile", {"uri": f"file:///workspace/{path}", "range": rng}, sub)
        self._result({"uri": f"file:///workspace/{path}", "languageId": "python", "range": rng,
                      "text": content + "\n"}, sub)

    def run(self, command, log, sub):
        self._call("terminal/run", {"command": command, "cwd": "file:///workspace"}, sub)
        self._result({"exitCode": 1 if "failed" in log or "Error" in log else 0, "output": log}, sub)

    def edit(self, path, lang, code, result, sub):
        self._call("workspace/applyEdit", {"uri": f"file:///workspace/{path}", "newText": code}, sub)
        if result is not None:
            self._result({"applied": True}, sub)


class XmlDocs(S.Style):
    """A long-context chat with no tools: the assistant asks for code in prose and the user pastes it as
    Anthropic-style ``<documents>``/``<document>`` elements (``<source>`` the path, ``<document_content>`` the raw
    lines); command output comes back in ``<output>`` tags."""
    system = ("You are a senior engineer pairing with the user over chat. You cannot run anything yourself: ask the "
              "user for the files and command output you need, and answer with code the user can paste.")

    def __init__(self) -> None:
        super().__init__()
        self.index = 0

    def view(self, path, start, end, content, sub):
        self.index += 1
        self.add("assistant", "text", f"Could you paste lines {start}-{end} of `{path}`?", sub)
        self.add("user", "text", f'<documents>\n<document index="{self.index}">\n<source>{path}</source>\n'
                 f"<document_content>\n{content}\n</document_content>\n</document>\n</documents>", sub)

    def run(self, command, log, sub):
        self.add("assistant", "text", f"Please run `{command}` and paste what it prints.", sub)
        self.add("user", "text", f"<output>\n{log}\n</output>", sub)

    def edit(self, path, lang, code, result, sub):
        self.add("assistant", "text", f"Replace the definition in `{path}` with:\n\n```{lang or 'python'}\n{code}\n```",
                 sub)
        if result is not None:
            self.add("user", "text", "Pasted it in.", sub)


S.RENDERERS.update(hermes=Hermes, smol=Smol, goose=Goose, grep=Grep, repomap=RepoMap, xmlcalls=XmlCalls,
                  react=React, interp=Interp, powershell=PowerShell,
                  terminus=Terminus, org=Org, html=Html, winterm=WinTerm, zsh=ZshMac,
                  blame=Blame, yamlres=YamlRes, notebook=Notebook,
                  cursor=Cursor, copilot=Copilot, lessn=LessN, gojson=GoJson,
                  apijson=ApiJson, gitdiff=GitDiff,
                  respapi=RespApi, claudeterm=ClaudeTerm, pyrepr=PyRepr, lineobjs=LineObjs,
                  repomix=Repomix, compose=Compose, richpanel=RichPanel, junit=JUnit,
                  ansi=Ansi, mdindent=MdIndent, pdb=Pdb,
                  moatless=Moatless, acr=Acr, gemini=GeminiCli, continuedev=Continue,
                  autogen=AutoGen, agentless=Agentless, opencode=OpenCode,
                  roo=Roo, rgjson=RgJson, deepseekraw=DeepSeekRaw, vimscreen=VimScreen,
                  batgrid=BatGrid, lspjson=LspJson, xmldocs=XmlDocs)
S.STYLES = ("own", *S.RENDERERS)

if __name__ == "__main__":
    from codeagent.bench.build import build_command
    out, seed, n, fams, styles = sys.argv[1:6]
    low, high = map(int, sys.argv[6].split("-")) if len(sys.argv) > 6 else (4000, 5500)  # the own rendering's tokens
    build_command(Path(out), int(seed), int(n), fams.split(","), styles.split(","), (low, high))
