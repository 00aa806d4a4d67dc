"""Tool calls, the paths they name and test logs, recognised by content in any agent's syntax.

Calls come as commands (``view X``, ``cat X``, ``sed -n '1,80p' X``, ``open_file X``), function
calls (``view_file(path="X", start_line=1)``), JSON (``{"name": ..., "arguments": {...}}``,
``tool_use``/``tool_calls``), XML-ish tags (``<tool_call>``, ``<invoke>``, ``<function=...>``, a tool
element holding parameter elements: ``<read_file><path>X</path></read_file>``) or
bare shell commands in a ``bash`` fence after a THOUGHT (mini-swe-agent) or one command in a plain
fence after a DISCUSSION (SWE-agent), ReAct's ``Action:``/``Action Input:`` lines, smolagents' code actions
(a Python fence closed by ``<end_code>``), Gemini's ``print(default_api.tool(...))`` and a terminal UI's
``⏺ Bash(cmd)``. Test logs are recognised by what pytest, unittest, jest/vitest, mocha, go test, cargo, rspec,
maven, phpunit, dotnet, TAP, deno and ctest print, whatever command ran them.
"""

from __future__ import annotations

import json
import re

from codeagent.kvcache.languages import EXTENSIONS, language_for_path
from codeagent.kvcache.tagger_content import fence_segments

_EXT = "|".join(sorted((e[1:] for e in EXTENSIONS), key=len, reverse=True))
_PATH = re.compile(rf"(?<![\w/.\-])(/?(?:[\w.\-~]+/)*[\w\-][\w.\-]*\.(?:{_EXT}))(?![\w\-])")

# a call on a line of its own: `name(arg=..., "x", 3)`
_FUNC_CALL = re.compile(r"^[ \t]*([A-Za-z_][\w.]*)\((?:\s*\)|\s*(?:[A-Za-z_]\w*\s*=|[\"'\d\[{]).*\))[ \t]*;?[ \t]*$",
                        re.MULTILINE | re.DOTALL)
_XML_CALL = re.compile(
    r"<(tool_call|function_calls?|invoke|tool_use|antml:invoke|execute_\w+|bash|command|action|function=[\w.\-]+)"
    r"\b[^>]*>.*?</(?:\1|function|invoke|tool_call|function_calls?)>",
    re.DOTALL,
)
_XML_PARAM_CALL = re.compile(r"<([a-z][a-z0-9]*(?:_[a-z0-9]+)+)>[ \t]*\n?[ \t]*<([a-z][\w\-]*)\b[^>]*>.*?</\1>",
                             re.DOTALL)
"""Cline's and Roo Code's calls: a snake_case tool element whose body opens with a parameter element
(``<read_file>\n<path>x.py</path>\n</read_file>``)."""
_SHELL_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*(?:bash|sh|shell|console|zsh)[ \t]*\n.*?^[ \t]*\1[ \t]*$",
                          re.MULTILINE | re.DOTALL)
_ORG_SHELL = re.compile(r"^[ \t]*#\+begin_src[ \t]+(?:bash|sh|shell|zsh)\b.*?^[ \t]*#\+end_src[ \t]*$",
                        re.MULTILINE | re.DOTALL | re.IGNORECASE)
"""A shell block in org-mode (``#+begin_src sh`` ... ``#+end_src``), which org-babel runs."""
_COMMAND_LINE = re.compile(
    r"^[ \t]*(?:\$ |>>> |(?:ACTION|Action|COMMAND|Command):\s*)?"
    r"(?:view|open|open_file|cat|bat|batcat|nl|sed|head|tail|less|grep|rg|find|ls|cd|python3?|pytest|npm|npx|yarn|node|"
    r"go|cargo|make|git|echo|pip|search|search_file|search_dir|find_file|edit|create|str_replace_editor|"
    r"run_tests|bash|submit|finish|goto|scroll_up|scroll_down)\b[^\n]*$",
    re.MULTILINE,
)
_REACT = re.compile(r"^[ \t]*Action:[ \t]*[\w.\-]+[ \t]*\n[ \t]*Action[ _]Input:[^\n]*$", re.MULTILINE)
"""A ReAct step (LangChain's agents): ``Action: tool`` then ``Action Input: ...`` (a JSON object there joins it)."""
CODE_ACTION = re.compile(r"^[ \t]*(`{3,})[ \t]*(?:py|python)?[ \t]*\n.*?^[ \t]*\1[ \t]*<end_code>", re.MULTILINE | re.DOTALL)
"""A code action (smolagents): a Python fence closed by ``<end_code>``; the code is the call."""
_API_CALL = re.compile(r"^[ \t]*(?:print\()?default_api\.\w+\(.*\)[ \t]*$", re.MULTILINE)
"""Gemini's calls written as Python: ``print(default_api.read_file(path="x"))``."""
_UI_CALL = re.compile(r"""^[ \t]*[⏺●] ?[A-Z]\w*\((?:"[^"\n]*"|'[^'\n]*'|[^()\n"']|\([^()\n]*\))*\)[ \t]*$""",
                      re.MULTILINE)
"""A call as a terminal UI shows it (Claude Code's ``⏺ Bash(pytest -q)``, ``⏺ Read(src/a.py)``,
``⏺ Search(pattern: "build(", path: "pkg")``): a bullet, then a capitalised tool name and its argument on one line,
quoted parts holding any brackets (the bullet before prose is not a call)."""
_MD_CALL = re.compile(r"^[ \t]*\*\*[a-z_][\w.\-]*\*\*[ \t]+`[^`\n]+`[^\n]*(?:\n(?:[ \t]+\S[^\n]*|[ \t]*)(?=\n|$))*",
                     re.MULTILINE)
"""A call as a chat exported to Markdown shows it: the tool's name in bold, its argument in backquotes (``**read_file**
`a.py` lines 1-80``), with the indented block below it (the code it passes)."""
_CODE_USE = re.compile(r"\s*\w+(?:[ \t]*[(=]|\.\w)")
"""A command word used as code: called (``go()``), assigned or an attribute's owner (``git.Repo``; ``find .`` is a
command)."""
_JSON_CALL_KEYS = ("name", "function", "tool", "tool_calls", "tool_use", "arguments", "input", "command", "action")


def is_command(line: str) -> bool:
    """Whether ``line`` is an agent command (``open x.py 40``, ``edit 12:13``), not code using the same word
    (``open(path)``, ``find = 3``)."""
    return bool(_COMMAND_LINE.fullmatch(line)) and not _CODE_USE.match(line)


def command_fences(text: str) -> list[tuple[int, int]]:
    """Char ranges, fence lines included, of the fences without a language whose first line is a command
    (SWE-agent's ``open x.py 40`` after a DISCUSSION)."""
    out: list[tuple[int, int]] = []
    if "```" not in text and "~~~" not in text:  # every prose span passes here: most hold no fence
        return out
    for start, end, info, is_code in fence_segments(text):
        if is_code and not info and is_command(text[start:end].split("\n", 1)[0]):
            close = text.find("\n", end)
            out.append((text.rfind("\n", 0, start - 1) + 1, len(text) if close < 0 else close))
    return out


def call_paths(text: str) -> list[str]:
    """File paths with a known extension that ``text`` names, in order of first mention."""
    seen: dict[str, None] = {}
    for m in _PATH.finditer(text):
        seen.setdefault(m.group(1), None)
    return list(seen)


def call_language(text: str) -> str | None:
    """Language of the last code path a call names (``sed -n '1,9p' a/b.py`` -> python), or None."""
    for path in reversed(call_paths(text)):
        lang = language_for_path(path)
        if lang is not None:
            return lang
    return None


_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_]\w*)\2[^\n]*\n")
"""A shell heredoc's opening (``cat > a.py <<'EOF'``): its delimiter, and whether ``<<-`` lets tabs indent it."""
_HERE_STRING = re.compile(r"@(['\"])[ \t]*\n")
"""A PowerShell here-string's opening (``@'`` ending its line); it closes on a line that opens with ``'@``."""
_INTERPRETER = re.compile(r"(?:^|\|)[ \t]*(?:\S*/)?(python[\d.]*|ipython|node|deno|bun|ruby)(?:[ \t]+-)?[ \t]*(?:<<|$)",
                          re.MULTILINE)
"""An interpreter reading the heredoc from stdin: ``python3 - <<'PY'``, ``... | node``."""


def _command_language(lines: str) -> str | None:
    """Language of the code a heredoc feeds, from the command lines around it: the last code path they name
    (``cat > a.py``, ``Set-Content a.py``), else the interpreter reading it (``python3 - <<'PY'``)."""
    lang = call_language(lines)
    m = _INTERPRETER.search(lines) if lang is None else None
    if m is None:
        return lang
    name = m.group(1)
    return "python" if "python" in name else "ruby" if name == "ruby" else "javascript"


def heredoc_delimiter(line: str) -> str | None:
    """The delimiter of the heredoc a command line opens (``cat > a.py <<'EOF'`` -> ``EOF``; a PowerShell here-string,
    ``@'`` ending the line, -> ``'@``), or None."""
    text = line.rstrip() + "\n"
    if m := _HERE_STRING.search(text):
        return m.group(1) + "@"
    m = _HEREDOC.search(text)
    return m.group(3) if m else None


def closes_heredoc(line: str, delimiter: str) -> bool:
    """Whether ``line`` closes the heredoc :func:`heredoc_delimiter` named: the delimiter alone on the line, or, for
    a here-string, at its start (``'@ | Set-Content a.py``)."""
    rest = line.strip()
    return rest == delimiter or (delimiter.endswith("@") and rest.startswith(delimiter))


def heredocs(text: str) -> list[tuple[int, int, str | None]]:
    """Bodies of the heredocs (``<<'EOF'`` ... ``EOF``) and PowerShell here-strings (``@'`` ... ``'@``) in a
    command: (start, end, language named by the command lines around it, or None). A heredoc without its closing
    line is left alone."""
    if "<<" not in text and "@" not in text:
        return []
    out: list[tuple[int, int, str | None]] = []
    pos = 0
    while True:
        bash, ps = _HEREDOC.search(text, pos), _HERE_STRING.search(text, pos)
        m = min((x for x in (bash, ps) if x is not None), key=lambda x: x.start(), default=None)
        if m is None:
            return out
        body = m.end()
        indent = r"\t*" if m is bash and m.group(1) else ""
        end = rf"{indent}{m.group(3)}[ \t]*$" if m is bash else rf"{m.group(1)}@"
        close = re.compile("^" + end, re.MULTILINE).search(text, body)
        if close is None:
            pos = m.end()
            continue
        opening = text[text.rfind("\n", 0, m.start()) + 1:m.end()]
        line_end = text.find("\n", close.end())
        closing = text[close.start():len(text) if line_end < 0 else line_end]
        out.append((body, close.start(), _command_language(opening + closing)))
        pos = close.end()


def _json_objects(text: str) -> list[tuple[int, int, object]]:
    """Top-level JSON objects/arrays embedded in ``text``: (start, end, value)."""
    out: list[tuple[int, int, object]] = []
    decoder = json.JSONDecoder()
    pos = 0
    while True:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return out
        i = min(starts)
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            pos = i + 1
            continue
        if isinstance(value, (dict, list)) and value:
            out.append((i, end, value))
        pos = max(end, i + 1)


def _is_json_call(value: object) -> bool:
    """A JSON tool call: an object (or list of them) naming a tool and its arguments."""
    if isinstance(value, list):
        return bool(value) and all(_is_json_call(v) for v in value)
    if not isinstance(value, dict):
        return False
    keys = set(value)
    if value.get("type") in ("tool_use", "function", "tool_call", "function_call"):
        return True
    if keys & {"tool_calls", "function_call", "functionCall", "toolCalls"}:  # OpenAI, Gemini
        return True
    if isinstance(value.get("commands"), list) and value["commands"] and all(
            isinstance(c, dict) and c.keys() & {"keystrokes", "command", "cmd"}
            for c in value["commands"]):  # a batch of shell input (Terminal-Bench's Terminus: keystrokes)
        return True
    named = bool(keys & {"name", "tool", "function", "action"})
    return named and bool(keys & {"arguments", "input", "parameters", "args", "params", "command"})


def _span(m: re.Match[str]) -> tuple[int, int]:
    """A match's range without the indentation it starts with."""
    return m.start() + len(m.group(0)) - len(m.group(0).lstrip()), m.end()


_CODE_ABOVE = re.compile(r"[ \t]+(?![-*+\u2022]\s|\d+[.)]\s)\S|[ \t]*(?:(?:async\s+)?def|class|if|elif|else|for|while|"
                         r"with|try|except|finally)\b.*:[ \t]*$|.*\{[ \t]*$")
"""A line code continues below: indented (a list item aside), or opening a block."""


def _inside_code(text: str, start: int) -> bool:
    """Whether the line starting at ``start`` is an indented line of code: a call standing alone in a function
    body (``        self._destroy()`` in a file pasted raw) under an indented line or a block's header (the
    nearest line above that is not blank)."""
    if text[start:start + 1] not in (" ", "\t"):
        return False
    end = start - 1  # the line break ending the line above
    while end > 0:
        begin = text.rfind("\n", 0, end) + 1
        if text[begin:end].strip():
            return bool(_CODE_ABOVE.match(text, begin, end))
        end = begin - 1
    return False


def tool_call_spans(text: str) -> list[tuple[int, int]]:
    """Char ranges of the tool calls in ``text`` (sorted, disjoint): JSON, XML-ish, function-call
    lines, shell fences, ReAct steps, code actions and command lines."""
    found: list[tuple[int, int]] = []
    for pattern in (_XML_CALL, _XML_PARAM_CALL):
        found += [(m.start(), m.end()) for m in pattern.finditer(text)]
    for s, e, value in _json_objects(text):
        if _is_json_call(value):
            found.append((s, e))
    for pattern in (_SHELL_FENCE, _ORG_SHELL, _REACT, CODE_ACTION, _API_CALL, _UI_CALL, _MD_CALL):
        found += [_span(m) for m in pattern.finditer(text)]
    found += command_fences(text)
    for m in _FUNC_CALL.finditer(text):
        line = m.group(0)
        if line.count("(") == line.count(")") and "\n" not in line.strip() and not _inside_code(text, m.start()):
            found.append(_span(m))
    if not found and len(text.strip().splitlines()) <= 3:
        found += [_span(m) for m in _COMMAND_LINE.finditer(text) if not _inside_code(text, m.start())]
    found.sort()
    merged: list[tuple[int, int]] = []
    for s, e in found:
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def looks_like_tool_call(text: str) -> bool:
    """Whether ``text`` (an assistant message) holds a tool call in any syntax."""
    return bool(tool_call_spans(text))


# --- test logs --------------------------------------------------------------------------------

_TEST_LOG = re.compile(
    r"""(
        =+\ test\ session\ starts\ =+ | =+\ FAILURES\ =+ | =+\ short\ test\ summary\ info\ =+    # pytest
      | ^(?:FAILED|PASSED|ERROR)\ \S+::\S+ | ^\S+::\S+\ (?:PASSED|FAILED|ERROR)
      | =+\ (?:\d+\ (?:passed|failed|errors?|skipped)[, ]*)+(?:in\ [\d.]+s)?
      | ^collected\ \d+\ items?
      | ^Ran\ \d+\ tests?\ in\ [\d.]+s | ^(?:FAIL|ERROR):\ \w+\ \([\w.]+\) | ^FAILED\ \((?:failures|errors)=\d+  # unittest
      | ^\s*(?:PASS|FAIL)\s+\S+\.(?:[jt]sx?|mjs|cjs)\b | ^Tests:\s+(?:\d+\ \w+,\s*)*\d+\ total | ^\s*[✓✕√×]\s  # jest
      | ^---\ (?:FAIL|PASS|SKIP):\ \S+\ \([\d.]+s\) | ^=== RUN\s+\S+ | ^(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)) # go
      | ^test\ \S+\ \.\.\.\ (?:ok|FAILED|ignored) | ^test\ result:\ (?:ok|FAILED)\. | ^running\ \d+\ tests?$  # cargo
    )""",
    re.MULTILINE | re.VERBOSE,
)
_TEST_LOG_MORE = re.compile(  # every branch anchored at a line start: a separate pattern keeps the scan cheap
    r"""^(?:
        \d+\ (?:failed|passed)(?:,\ \d+\ (?:passed|failed|errors?|skipped|warnings?|xfailed|xpassed))*\ in\ [\d.]+s  # pytest -q
      | \w+\ \([\w.]+\)\ \.\.\.\ (?:ok|FAIL|ERROR|skipped)  # unittest -v
      | \s*\d+\ passing\ \(\d+m?s\) | \s*\d+\ failing$  # mocha
      | \d+\ examples?,\ \d+\ failures?  # rspec
      | (?:\[\w+\]\ )?Tests\ run:\ \d+,\ Failures:\ \d+,\ Errors:\ \d+  # maven surefire, gradle
      | Tests:\ \d+,\ Assertions:\ \d+ | PHPUnit\ \d  # phpunit
      | (?:Failed|Passed)!\s+-\s+Failed:\s+\d+  # dotnet test
      | TAP\ version\ \d+ | not\ ok\ \d+\b  # TAP (node --test, prove)
      | running\ \d+\ tests?\ from\ \S  # deno test
      | \d+%\ tests\ passed,\ \d+\ tests?\ failed\ out\ of\ \d+  # ctest
    )""",
    re.MULTILINE | re.VERBOSE,
)
_TEST_COMMAND = re.compile(r"(?<![\w./-])(?:pytest|py\.test|run_tests|unittest|tox|nox|npm (?:run )?test|yarn test|"
                           r"jest|vitest|mocha|cargo test|go test|mvn test|gradle test|make test)(?![\w/-]|\.\w)")
"""A test runner named as a command word: never a path (``cat Lib/unittest/case.py``, ``open pytest.ini``)."""


def looks_like_test_log(text: str, call_text: str | None = None) -> bool:
    """Output of a test run, by what the runner prints (or by the command, when one is given)."""
    return (bool(_TEST_LOG.search(text)) or bool(_TEST_LOG_MORE.search(text))
            or bool(call_text and _TEST_COMMAND.search(call_text)))
