"""Build bench tasks in three agent formats that ``codeagent/bench/styles.py`` does not render.

Round 13's held-out check (docs/benchmarks.md): the formats live here, outside the bench's own styles, so the
tagger's work is checked on conventions it was not written against. ``hermes``: Qwen/Hermes ``<tool_call>`` JSON
in the assistant's text, ``<tool_response>`` results holding the file as a JSON string numbered ``N\\t``;
``smol``: smolagents' Thought/Code/``<end_code>`` with ``Observation:`` user messages holding the raw file;
``goose``: a ``─── text_editor | developer ───`` request, results as ``### path`` + a fence of ``N: code`` lines.

    PYTHONPATH=. python scripts/heldout_styles.py OUT.jsonl SEED N FAMILIES STYLES
    PYTHONPATH=. python scripts/heldout_styles.py nl.jsonl 41 2 next_line hermes,smol,goose
"""

from __future__ import annotations

import json
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


S.RENDERERS.update(hermes=Hermes, smol=Smol, goose=Goose)
S.STYLES = ("own", *S.RENDERERS)

if __name__ == "__main__":
    from codeagent.bench.build import build_command
    out, seed, n, fams, styles = sys.argv[1:6]
    build_command(Path(out), int(seed), int(n), fams.split(","), styles.split(","), (4000, 5500))
