"""Code found by content: raw dumps, numbered views, fences, diffs, JSON strings, mid-function views,
tool calls in any syntax and test logs of any runner (issue 10, items 1 and 2). No model needed."""

from __future__ import annotations

import argparse
import ast
import difflib
import html
import json
import re
import textwrap
import warnings
from pathlib import Path

import pytest

from codeagent.kvcache.languages import language_for_fence
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tagger_calls import call_language, call_paths, is_command, looks_like_test_log, tool_call_spans
from codeagent.kvcache.tagger_content import (
    _LANG_HINTS, CODE as CODE_LINE, LOG as LOG_LINE, PROSE as PROSE_LINE, WEAK as WEAK_LINE, bare_grep_rows,
    code_regions, fence_segments, framed_rows, grep_rows, indented_rows, json_strings, keyed_strings, label_cuts,
    language_candidates, line_label, numbered_hunks, numbered_rows, outline_rows, prefixed_rows, yaml_block_rows,
    _word_first,
)
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo, TokenTag
from tests.kvcache.test_tagger import tag_at, tag_of

B = BlockType
K = SegmentKind
SIGNATURES = {B.FUNCTION_SIGNATURE, B.CLASS_DECLARATION}
SOURCE = Path(textwrap.__file__).read_text()
LINES = SOURCE.splitlines(keepends=True)
Intervals = list[tuple[int, int, TokenTag]]


@pytest.fixture()
def tagger() -> StructureTagger:
    return StructureTagger()


def covered(text: str, ivs: Intervals) -> None:
    assert ivs[0][0] == 0 and ivs[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in zip(ivs, ivs[1:]))


def definitions(code: str) -> list[tuple[str, BlockType]]:
    """(name, expected tag) of every def/class of a Python snippet, by ast."""
    tree = ast.parse(code)
    return [(n.name, B.CLASS_DECLARATION if isinstance(n, ast.ClassDef) else B.FUNCTION_SIGNATURE)
            for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def check_python(text: str, code: str, ivs: Intervals) -> None:
    """Every definition of ``code`` (shown somewhere inside ``text``) is tagged as one."""
    defs = definitions(code)
    assert len(defs) >= 3
    for name, kind in defs:
        m = re.search(rf"(?:def|class)(?:\s|</?span\b[^>]*>)+{name}\b", text)  # highlighted HTML: spans between
        assert m, name
        assert tag_at(ivs, m.start() + m.group(0).index(name)).block_type == kind, name


def same_tags(a_text: str, a_ivs: Intervals, a_start: int, b_text: str, b_ivs: Intervals, b_start: int, n: int) -> None:
    """The n chars from a_start and b_start carry the same block types, depths and block partition."""
    ids: dict[int, int] = {}
    for k in range(n):
        if a_text[a_start + k].isspace():
            continue
        x, y = tag_at(a_ivs, a_start + k), tag_at(b_ivs, b_start + k)
        assert (x.block_type, x.depth) == (y.block_type, y.depth), (a_text[a_start + k - 20:a_start + k + 20], x, y)
        assert ids.setdefault(x.block_id, y.block_id) == y.block_id


CODE = "".join(LINES[:next(i for i in range(150, len(LINES)) if LINES[i].startswith("    def "))])


# ------------------------------------------------------------------------------ shapes
def test_raw_cat_dump_in_a_user_message_is_python(tagger):
    text = f"<returncode>0</returncode>\n<output>\n{CODE}</output>"
    for kind in (K.TEXT, K.TOOL_OUTPUT, K.FILE_VIEW):
        ivs = tagger.intervals(text, SpanInfo(kind=kind))
        covered(text, ivs)
        check_python(text, CODE, ivs)
        assert tag_of(text, ivs, "<returncode>").block_type in (B.TEXT, B.LOG)
        assert tag_of(text, ivs, "</output>").block_type in (B.TEXT, B.LOG)
        assert tag_of(text, ivs, "import re").block_type == B.IMPORT
    plain = tagger.intervals(CODE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    same_tags(CODE, plain, 0, text, tagger.intervals(text, SpanInfo(kind=K.TEXT)), text.index(CODE), len(CODE))


def test_raw_dump_opening_with_a_module_docstring_and_aliased_imports(tagger):
    """A file shown raw from its first line (argparse: a prose module docstring, ``__all__``, ``import os as _os``)
    tags as the same file in a known language: the docstring and its aliased imports are code, not text."""
    head = Path(argparse.__file__).read_text().splitlines(keepends=True)
    code = "".join(head[:next(i for i, ln in enumerate(head) if ln.startswith("class _AttributeHolder"))])
    assert "import os as _os" in code and len(code) > 2000
    plain = tagger.intervals(code, SpanInfo(kind=K.FILE_VIEW, language="python"))
    text = f"<returncode>0</returncode>\n<output>\n{code}</output>"
    for wrapped, kind in ((code, K.TOOL_OUTPUT), (text, K.TEXT)):
        ivs = tagger.intervals(wrapped, SpanInfo(kind=kind))
        covered(wrapped, ivs)
        assert tag_of(wrapped, ivs, "Command-line parsing library").block_type == B.DOCSTRING
        assert tag_of(wrapped, ivs, "import os as _os").block_type == B.IMPORT
        assert tag_of(wrapped, ivs, "from gettext import").block_type == B.IMPORT
        same_tags(code, plain, 0, wrapped, ivs, wrapped.index(code), len(code))


def test_a_title_underline_is_no_fence(tagger):
    """A reStructuredText module docstring (``requests.adapters`` over ``~~~~~~~~~~~~~~~~~``, as Pygments and Requests
    write theirs) holds a line of tildes: it underlines the title and opens no fence, so the file around it is read
    whole; a fence of tildes after a line of another length, or with an info string, is still one."""
    code = ('"""\n    pkg.formatters.term\n    ~~~~~~~~~~~~~~~~~~~\n\n    Formatter for terminal output.\n"""\n\n'
            "from pkg.formatter import Formatter\n\n\nclass TermFormatter(Formatter):\n"
            '    """Colours by token type."""\n\n    def format(self, tokens, out):\n        for tok in tokens:\n'
            "            out.write(tok)\n")
    assert fence_segments(code) == [(0, len(code), None, False)]
    yaml = f"path: pkg/term.py\ncontent: |\n{textwrap.indent(code, '  ')}"
    for text, kind, lang in ((code, K.FILE_VIEW, "python"), (yaml, K.FILE_VIEW, "python"), (code, K.TOOL_OUTPUT, None)):
        ivs = tagger.intervals(text, SpanInfo(kind=kind, language=lang))
        covered(text, ivs)
        assert tag_of(text, ivs, "Formatter for terminal output").block_type == B.DOCSTRING, text[:20]
        assert tag_of(text, ivs, "TermFormatter").block_type == B.CLASS_DECLARATION
        assert tag_of(text, ivs, "format(self").block_type == B.FUNCTION_SIGNATURE
    for fenced in ("Run it:\n~~~\nmake test\n~~~\n", "Title\n~~~~~python\nx = 1\n~~~~~\n"):
        assert [seg[3] for seg in fence_segments(fenced)] == [False, True, False], fenced


@pytest.mark.parametrize("fmt", ["{n:>6}\t{line}", "{n:6d}  {line}", "{n:>4} | {line}", "{n}: {line}",
                                 "{n:>6}→{line}", "{n} | {line}", "{n:>4}   │ {line}", "L{n}: {line}", "{n}:\t{line}"])
def test_numbered_views_of_any_format(tagger, fmt):
    start, end = 40, 200
    view = "".join(fmt.format(n=i, line=line) for i, line in enumerate(LINES[start - 1:end], start))
    assert numbered_rows(view) is not None
    ivs = tagger.intervals(view, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(view, ivs)
    found = 0
    for name, kind in definitions(SOURCE):
        m = re.search(rf"(?:def|class)\s+{name}\b", view)
        if m:
            found += 1
            assert tag_at(ivs, m.start() + m.group(0).index(name)).block_type == kind, (fmt, name)
    assert found >= 3
    assert tag_at(ivs, 0).block_type == B.NONE  # the line number
    rows = numbered_rows(view)
    assert all(view[code] not in "\t→" for _s, code, e in rows if 0 <= code < e)  # the separator is not the code's


def test_blame_rows_whose_code_opens_a_parenthesis(tagger):
    """``git blame -s``: a row whose code is a parenthesised tuple (``abc1234 140)    ([2, 3], 4)``) is line 140 with
    its code, not a file named ``140)`` on line 4; the rows' numbers go up, so the view is read as numbered and the
    method below it keeps its header."""
    code = ["class Pair:", "    cases = [", "        ([2, 3], 4),", "        ([5], 6),", "    ]", "",
            "    def __getitem__(self, i):", "        return self.cases[i]"]
    view = "".join(f"{'aea3f3f' if k % 2 else '54e82bf'} {n:>3}) {line}\n" for k, (n, line) in enumerate(
        zip(range(138, 146), code)))
    rows = numbered_rows(view)
    assert rows is not None and all(view[c:e].rstrip("\n") == line for (_s, c, e), line in zip(rows, code))
    ivs = tagger.intervals(view, SpanInfo(kind=K.TOOL_OUTPUT))
    assert tag_of(view, ivs, "__getitem__").block_type == B.FUNCTION_SIGNATURE


def test_a_result_on_its_labels_line_keeps_its_indentation(tagger):
    """A ReAct scratchpad writes the tool's result after ``Observation: `` on the label's own line: a view that starts
    inside a class (``Observation:     def lookup(...)``) is code from the char after the label's space, indented as
    it was; a label before a sentence, or inside a fence, is no cut."""
    text = ("Thought: I should read it.\nAction: read_file\nAction Input: {\"path\": \"ttk.py\"}\n"
            "Observation:     def lookup(self, style, option, state=None):\n        return self.tk.call(style)\n\n"
            "    def layout(self, style):\n        return style\nThought: done")
    cut = text.index("    def lookup")
    assert label_cuts(text) == [cut]
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    assert tag_of(text, ivs, "lookup(self").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "layout(self").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "Observation").block_type == B.TEXT
    assert label_cuts("Note: the value x = 1 is kept.\nIt stays so.\n") == []
    assert label_cuts("```\nOutput: x = f(1)\n    y = 2\n```\n") == []


def test_search_hits_over_several_files_are_code_of_each_files_language(tagger):
    """``grep -rn``/``git grep -n`` output: every hit is a line of code in its file's language, context runs
    (``-C``) parse together, the ``path:12:`` prefix is NONE and the ``--`` between groups is not code."""
    hits = [f"lib/textwrap.py:{i}:{line}" for i, line in enumerate(LINES, 1)
            if line.lstrip().startswith(("def ", "class "))]
    at = next(i for i, line in enumerate(LINES) if "def _split(" in line)
    context = [f"lib/textwrap.py{'-:'[k == at]}{k + 1}{'-:'[k == at]}{LINES[k]}" for k in range(at - 1, at + 3)]
    js = ["web/app.js:3:export function render(state, el) {\n", "web/app.js:9:const helper = (x) => x + 1;\n"]
    text = "".join(hits[:6]) + "--\n" + "".join(context) + "--\n" + "".join(js)
    assert grep_rows(text) is not None
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    names = [re.search(r"(?:def|class) (\w+)", h).group(1) for h in hits[:6]] + ["_split"]
    for name in names:
        m = re.search(rf"(?:def|class) {name}\b", text)
        assert tag_at(ivs, m.start() + m.group(0).index(name)).block_type in SIGNATURES, name
    assert tag_at(ivs, 0).block_type == B.NONE  # the path:line prefix
    assert tag_of(text, ivs, "render").block_type == B.FUNCTION_SIGNATURE  # the .js hit parsed as JavaScript
    assert tag_of(text, ivs, "--\n").block_type in (B.TEXT, B.LOG)
    body = text.index(LINES[at + 1].strip(), text.index("def _split("))
    assert tag_at(ivs, body).block_type not in SIGNATURES | {B.LOG, B.TEXT}  # a context line of the function


def test_ctags_cross_reference_lines_are_definitions(tagger):
    """``ctags -x`` (name, kind, line, file, the definition's line): each entry's code is read in its file's
    language, so every listed definition is one; a table of words and numbers is not a listing."""
    entries = [(i, line.strip()) for i, line in enumerate(LINES, 1) if line.lstrip().startswith(("def ", "class "))
               and line.rstrip().endswith(":")][:8]
    names = [re.search(r"(?:def|class) (\w+)", c).group(1) for _i, c in entries]
    text = "".join(f"{name:<18} {'class' if c.startswith('class') else 'member':<9} {i:>4} lib/textwrap.py  {c}\n"
                   for name, (i, c) in zip(names, entries))
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    for name, (_i, code) in zip(names, entries):
        kind = B.CLASS_DECLARATION if code.startswith("class") else B.FUNCTION_SIGNATURE
        assert tag_at(ivs, text.index(code) + code.index(name)).block_type == kind, name
    assert tag_at(ivs, 0).block_type == B.NONE
    table = "apples   fruit   12 notes.txt  bought on monday\npears    fruit   30 notes.txt  for the cake\n"
    assert not [t for _s, _e, t in tagger.intervals(table, SpanInfo(kind=K.TOOL_OUTPUT)) if t.block_type in SIGNATURES]


def test_one_files_search_hits_with_context_are_code_of_the_file_the_command_names(tagger):
    """``grep -n -A3 pattern lib/textwrap.py``: ``12:code`` for a match, ``13-code`` for a context line, no path
    on the lines; the language comes from the call (the span) or from the command echoed above the hits. A
    context line whose code looks like a diagnostic (``    ValueError: ...`` in a docstring) stays in its run."""
    defs = [k for k, line in enumerate(LINES) if line.lstrip().startswith("def ")][:3]
    groups = ["".join(f"{k + 1}{':' if k == at else '-'}{LINES[k]}" for k in range(at, at + 4)) for at in defs]
    hits = "--\n".join(groups)
    for text, info in ((hits, SpanInfo(kind=K.FILE_VIEW, language="python")),
                       ("$ grep -n -A3 'def ' lib/textwrap.py\n" + hits + "[exit 0]\n", SpanInfo(kind=K.TEXT))):
        assert bare_grep_rows(text) is not None and grep_rows(text) is None and numbered_rows(text) is None
        ivs = tagger.intervals(text, info)
        covered(text, ivs)
        for at in defs:
            name = re.search(r"def (\w+)", LINES[at]).group(1)
            assert tag_of(text, ivs, f"def {name}").block_type in SIGNATURES, name
            assert tag_of(text, ivs, f"{at + 2}-").block_type == B.NONE  # the context line's number
    doc = ['def parse(text):\n', '    """Read text.\n', '\n', '    ValueError: when text is empty.\n', '    """\n',
           '    return text.split()\n']
    text = "".join(f"{40 + k}{'-:'[k == 0]}{line}" for k, line in enumerate(doc))
    assert len(bare_grep_rows(text)[0]) == len(doc)  # one run
    ivs = tagger.intervals(text, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert tag_of(text, ivs, "return text").block_type == B.FUNCTION_BODY
    assert tag_of(text, ivs, "ValueError").block_type == B.DOCSTRING
    with_path = "".join(f"pkg/a.py{'-:'[k == 0]}{40 + k}{'-:'[k == 0]}{line}" for k, line in enumerate(doc))
    assert len(grep_rows(with_path)[0]) == len(doc)
    # no context lines, numbers that skip, too few hits, times of day: not one file's hits
    assert bare_grep_rows("12:x = 1\n40:y = 2\n77:z = 3\n") is None
    assert bare_grep_rows("1- first step\n2- second\n") is None
    assert bare_grep_rows("10:32:01 start\n10:32:02 stop\n11-x\n12-y\n") is None


def test_aider_repository_map_is_code_of_each_files_language(tagger):
    """Aider's repo map: ``path:`` headers, ``│code`` lines, ``⋮...`` where lines were left out."""
    defs = [line for line in LINES if line.lstrip().startswith(("def ", "class "))][:8]
    parts = ["Here are summaries of some files present in my git repository.\n",
             "Do not propose changes to these files, treat them as *read-only*.\n\n", "lib/textwrap.py:\n"]
    for line in defs:
        parts += ["⋮...\n", f"│{line}"]
    parts += ["⋮...\n\n", "web/app.js:\n", "⋮...\n", "│export function render(state, el) {\n", "⋮...\n"]
    text = "".join(parts)
    assert outline_rows(text) is not None
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    covered(text, ivs)
    for line in defs:
        name = re.search(r"(?:def|class) (\w+)", line).group(1)
        at = text.index(line) + line.index(name)
        assert tag_at(ivs, at).block_type in SIGNATURES, name
    assert tag_of(text, ivs, "render").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "│").block_type == B.NONE
    assert tag_of(text, ivs, "⋮...").block_type == B.TEXT
    assert tag_of(text, ivs, "Here are summaries").block_type == B.TEXT
    assert outline_rows("│ a table cell\n│ another cell\n") is None  # box drawing without elisions


def test_swe_agent_search_file_hits_are_numbered_lines(tagger):
    hits = [(i, line) for i, line in enumerate(LINES, 1) if line.lstrip().startswith("def ")][:4]
    text = (f'Found {len(hits)} matches for "def " in /repo/lib/textwrap.py:\n'
            + "".join(f"Line {i}:{line}" for i, line in hits)
            + 'End of matches for "def " in /repo/lib/textwrap.py\n')
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    for _i, line in hits:
        name = re.search(r"def (\w+)", line).group(1)
        assert tag_at(ivs, text.index(line) + line.index(name)).block_type in SIGNATURES, name  # some are cut
    assert tag_of(text, ivs, "Found").block_type in (B.TEXT, B.LOG)


def test_lines_with_colons_are_not_search_hits():
    assert grep_rows("note: 12: see above\nfoo.py is fine\n") is None
    assert grep_rows("a.py:3:x = 1\nthen a long line of prose about it\nand another line of prose\n"
                     "and a third one here\n") is None  # one hit among prose
    diagnostics = ["pkg/a.py:3:80: E501 line too long (88 > 79 characters)\n",  # flake8
                   "pkg/a.py:12: error: Incompatible return value type (got \"int\", expected \"str\")\n",  # mypy
                   "pkg/a.py:40: note: Revealed type is \"builtins.int\"\n",
                   "/repo/tests/test_a.py:8: AssertionError: assert -1 == 5\n",  # pytest --tb=line
                   "tests/test_a.py:8: in test_add\n"]
    assert grep_rows("".join(diagnostics)) is None


def test_prose_with_numbers_is_not_a_view():
    assert numbered_rows("1: buy milk\nthen some words here\nand more words\n") is None
    assert numbered_rows("1 apple\n2 pear\n3 plum\n") is None
    assert numbered_rows("  12 a.py\n  40 b.py\n  52 total\n") is None  # wc -l
    assert numbered_rows("deadbeef fix the parser (12) and more\ncafebabe another 13) x\n") is None  # git log
    assert numbered_rows("2019  was a year\n2018  was another\n2020  and this\n") is None  # numbers go down
    assert numbered_rows("3\tdef\n1\tclass\n2\tother\n") is None


EXAMPLES = '''"""Checks for typing members."""

import typing


def is_member(obj, name):
    """Whether ``obj`` is the member.

    ```pycon
    >>> is_member(typing.Any, "Any")
    True
    ```
    """
    return getattr(typing, name, None) is obj


is_any = make_check("Any")
is_any.__doc__ = """
Return whether the argument is `Any`.

```pycon
>>> is_any(typing.Any)
True
```
"""

LIMIT = 10


def check_all(objs):
    return [is_member(o, "Any") for o in objs]
'''


def test_a_docstrings_example_fence_stays_inside_the_file(tagger):
    """A file whose docstrings hold Markdown examples (```` ```pycon ```` ... ```` ``` ````, indented or not), shown in
    a fence (Cursor's ```` ```12:40:path ```` info string, Copilot's ```` ```python ```` under a ``# filepath:``
    comment) or as a JSON string whose ``<file>`` wrapper and ``<`` are escaped the way Go writes them: the
    examples' marks neither close the outer fence nor open new ones, so the code after them keeps its signatures and
    module bindings, and the wrapper's tag lines are not code."""
    assert language_for_fence("12:40:pkg/checks.py") == language_for_fence("python:checks.py") == "python"
    assert language_for_fence("title=web/app.ts") == "typescript" and language_for_fence("1:40:notes") is None
    assert line_label("<file>\n") == line_label('<file path="a.py">') == line_label("</file>") == LOG_LINE
    assert line_label("<tool_name>read</tool_name>") == LOG_LINE and line_label("  <div>") != LOG_LINE
    cursor = f"Contents of pkg/checks.py, lines 1-31:\n\n```1:31:pkg/checks.py\n{EXAMPLES}```\n"
    copilot = (f'<attachment filePath="/repo/pkg/checks.py">\n```python\n# filepath: /repo/pkg/checks.py\n{EXAMPLES}'
               "```\n</attachment>")
    go = json.dumps({"content": f"<file>\n{EXAMPLES}</file>", "is_error": False}).replace("<", "\\u003c")
    assert [seg[3] for seg in fence_segments(cursor)] == [False, True, False]
    assert fence_segments(EXAMPLES) == [(0, len(EXAMPLES), None, False)]
    for text, kind in ((cursor, K.TOOL_OUTPUT), (copilot, K.TEXT), (go, K.TOOL_OUTPUT)):
        ivs = tagger.intervals(text, SpanInfo(kind=kind))
        covered(text, ivs)
        assert tag_of(text, ivs, "Whether ``obj``").block_type == B.DOCSTRING, text[:20]
        assert tag_of(text, ivs, "check_all(objs)").block_type == B.FUNCTION_SIGNATURE, text[:20]
        assert tag_of(text, ivs, "is_any = make_check").block_type == B.GLOBAL, text[:20]
        assert tag_of(text, ivs, "LIMIT = 10").block_type == B.GLOBAL, text[:20]
    go_ivs = tagger.intervals(go, SpanInfo(kind=K.TOOL_OUTPUT))
    assert tag_of(go, go_ivs, "u003cfile").block_type not in (B.STATEMENT, B.GLOBAL, B.FUNCTION_BODY)


BARE_EXAMPLES = '''class Transport:
    """
    Mount it on a client:

    ```
    client = Client(transport=Transport(app=app))
    ```

    Arguments:

    ```
    * `app` - The application.
    ```
    """

    def __init__(self, app):
        self.app = app

    def handle_request(self, request):
        return self.app(request)
'''


def test_a_docstrings_bare_fences_stay_inside_the_file(tagger):
    """A class docstring's own bare ```` ``` ```` pairs, indented with the docstring, inside a file pasted in a fence
    at column 0 (Aider): a mark indented four or more columns past the opening one is code, as in Markdown, so the
    methods after the docstring keep their signatures. A close indented less than that still closes."""
    for opener in ("```python", "```", "transport.py\n```"):
        text = f"{opener}\n{BARE_EXAMPLES}```\n\nThe bug is in `handle_request`."
        assert [seg[3] for seg in fence_segments(text)] == [False, True, False], opener
        ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
        for name in ("__init__", "handle_request"):
            assert tag_of(text, ivs, f"def {name}").block_type == B.FUNCTION_SIGNATURE, (opener, name)
    listed = "1. Run it:\n\n   ```bash\n   make test\n   ```\n2. Read the log."
    assert [seg[3] for seg in fence_segments(listed)] == [False, True, False]

def test_aider_style_fence_takes_the_language_from_the_path_above(tagger):
    text = f"pkg/wrap.py\n```\n{CODE}```\n\nPlease fix the bug in `fill`."
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    check_python(text, CODE, ivs)
    assert tag_of(text, ivs, "Please fix").block_type == B.TEXT
    assert tag_of(text, ivs, "pkg/wrap.py").block_type == B.TEXT


def test_diff_hunks_tag_both_sides(tagger):
    old = LINES[100:190]
    new = [ln.replace("def _munge_whitespace(self, text):", "def _munge_whitespace(self, text, tabs=8):")
           for ln in old]
    at = next(i for i, ln in enumerate(new) if "expandtabs(" in ln)
    new.insert(at + 1, "        # a new comment line\n")
    diff = "".join(difflib.unified_diff(old, new, "a/lib/textwrap.py", "b/lib/textwrap.py", n=3))
    assert "+    def _munge_whitespace(self, text, tabs=8):" in diff
    text = "diff --git a/lib/textwrap.py b/lib/textwrap.py\n" + diff
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    added = text.index("+    def _munge_whitespace")
    removed = text.index("-    def _munge_whitespace")
    assert tag_at(ivs, added + 9).block_type == B.FUNCTION_SIGNATURE
    assert tag_at(ivs, removed + 9).block_type == B.FUNCTION_SIGNATURE
    assert tag_at(ivs, added).block_type == B.NONE  # the sign
    assert tag_of(text, ivs, "# a new comment").block_type == B.COMMENT
    assert tag_of(text, ivs, "diff --git").block_type in (B.TEXT, B.LOG)
    assert tag_of(text, ivs, "@@ ").block_type in (B.TEXT, B.LOG)


def test_numbered_diff_tags_both_sides(tagger):
    """An edit tool's result shown as a numbered diff (Claude Code: ``  12 -  old``, ``  12 +  new``, context lines
    with a blank sign) under a line of prose: both sides are code, the numbers and signs are not; a numbered listing
    with no sign stays a listing, and prose with numbers is not a diff."""
    old = "    def _munge_whitespace(self, text):"
    new = "    def _munge_whitespace(self, text, tabs=8):"
    body = ["        if self.expand_tabs:", "            text = text.expandtabs(self.tabsize)", "        return text"]
    rows = [f"{100:>6} - {old}", f"{100:>6} + {new}"] + [f"{101 + i:>6}   {ln}" for i, ln in enumerate(body)]
    text = "  ⎿  Updated lib/textwrap.py with 1 addition and 1 removal\n" + "\n".join("     " + r for r in rows)
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    assert tag_of(text, ivs, "def _munge_whitespace(self, text, tabs").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "def _munge_whitespace(self, text)").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "text = text.expandtabs").block_type in (B.FUNCTION_BODY, B.CONTROL_FLOW)
    assert tag_of(text, ivs, "100 +").block_type == B.NONE
    assert tag_of(text, ivs, "Updated").block_type in (B.TEXT, B.LOG)
    listing = "\n".join(f"{i:>6}  {ln}" for i, ln in enumerate(body, 1))
    assert numbered_hunks(listing) == [] and numbered_hunks("1 - eggs\n2 - milk\n3 - bread") == []


def test_json_string_holding_a_file(tagger):
    payload = json.dumps({"path": "src/wrap.py", "content": CODE, "lines": 160})
    for kind in (K.TOOL_OUTPUT, K.TEXT):
        ivs = tagger.intervals(payload, SpanInfo(kind=kind))
        covered(payload, ivs)
        for name, btype in definitions(CODE):
            m = re.search(rf"(?:def|class)\s+{name}\b", payload)
            assert tag_at(ivs, m.start() + m.group(0).index(name)).block_type == btype, name
        assert tag_of(payload, ivs, '"path"').block_type not in SIGNATURES
    # inside a wrapper (Hermes' <tool_response>), numbered, and known to be a Python file's view: still decoded
    numbered = "".join(f"{i}\t{ln}" for i, ln in enumerate(CODE.splitlines(keepends=True), 298))
    wrapped = "<tool_response>\n" + json.dumps({"name": "read_file", "content": numbered}) + "\n</tool_response>"
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        check_python(wrapped, CODE, tagger.intervals(wrapped, span))
    # source code holding a short JSON literal with escaped lines is code, its string not read as a file
    source = CODE + 'FIXTURE = \'{"body": "first line of the fixture\\nsecond line\\nthird line of it"}\'\n'
    ivs = tagger.intervals(source, SpanInfo(kind=K.FILE_VIEW, language="python"))
    check_python(source, CODE, ivs)
    inner, const = tag_of(source, ivs, "second line"), tag_of(source, ivs, "FIXTURE =")
    assert (inner.block_type, inner.block_id) == (const.block_type, const.block_id)  # one block: the constant
    # an OpenAI-style call whose argument writes a file: the call is TOOL_CALL, the file is code
    call = json.dumps({"type": "function", "function": {"name": "write_file", "arguments": {
        "path": "a/b.py", "content": "import os\n\ndef build(root, strict=False):\n    return os.path.join(root)\n"}}})
    ivs = tagger.intervals(call, SpanInfo(kind=K.TEXT))
    assert tag_of(call, ivs, '"type"').block_type == B.TOOL_CALL
    assert tag_of(call, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE


def test_json_string_cut_before_its_closing_quote(tagger):
    """A JSON result cut at a size limit (no closing quote, maybe a cut escape, maybe a note on the next line) still
    holds a file: the key's value is decoded up to the cut and its definitions are signatures. Without a key before
    it, an unclosed quote opens no string."""
    payload = json.dumps({"path": "src/wrap.py", "content": CODE})
    cut = payload.index("def _munge_whitespace(") + 200
    for text in (payload[:cut], payload[:payload.index("\\n", cut) + 1], payload[:cut] + "\n[output truncated]"):
        (string,) = keyed_strings(text)
        assert string.key == "content" and CODE.startswith(string.value.rstrip("\\"))
        ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
        covered(text, ivs)
        for name in ("TextWrapper", "__init__", "_munge_whitespace"):
            assert tag_of(text, ivs, f" {name}").block_type in SIGNATURES, (name, text[-30:])
    unkeyed = 'Note: "' + "\\n".join(["def f(x):", "    return x", "def g():", "    pass"]) + " and more"
    assert keyed_strings(unkeyed) == [] and json_strings(unkeyed) == ()

def test_json_string_with_chars_past_the_bmp(tagger):
    """``json.dumps`` writes an emoji as a surrogate pair's two escapes: they decode to one char, a lone one to
    U+FFFD, and the file is read as code (the pair once left the whole span untagged: UTF-8 cannot encode it)."""
    source = CODE.replace('"""', '"""Wraps \U0001F600 text. ', 1) + 'BAD = "\udcff"\n'
    payload = json.dumps({"path": "src/wrap.py", "content": source})
    assert "\\ud83d\\ude00" in payload and "\\udcff" in payload
    (string,) = [s for s in keyed_strings(payload) if s.key == "content"]
    assert string.value == source.replace("\udcff", "\ufffd")
    k = string.value.index("\U0001F600")
    assert payload[string.offsets[k]:string.offsets[k + 1]] == "\\ud83d\\ude00"
    offsets = [m.span() for m in re.finditer(r"\w+|[^\w\s]", payload)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a span left untagged warns
        tags = tagger.tag(payload, offsets, SpanInfo(kind=K.TOOL_OUTPUT))
    for name, btype in definitions(CODE):
        m = re.search(rf"(?:def|class)\s+{name}\b", payload)
        start = m.start() + m.group(0).index(name)
        assert tags[[s for s, _ in offsets].index(start)].block_type == btype, name
    # a text holding a lone surrogate itself (undecodable bytes read with surrogateescape) is tagged too
    raw = CODE + "# \udcff\n"
    offsets = [m.span() for m in re.finditer(r"\w+|[^\w\s]", raw)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tags = tagger.tag(raw, offsets, SpanInfo(kind=K.FILE_VIEW, language="python"))
        ivs = tagger.intervals(raw, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert any(t.block_type == B.FUNCTION_SIGNATURE for t in tags)
    covered(raw, ivs)
    assert tag_of(raw, ivs, "def _munge_whitespace").block_type == B.FUNCTION_SIGNATURE


WRAPPERS = {  # how agents and tool protocols hand a file back, none of them rendered by the bench's styles
    "crlf": lambda c: c.replace("\n", "\r\n"),
    "tab_indent": lambda c: c.replace("    ", "\t"),
    "markdown_indented": lambda c: "".join("    " + ln if ln.strip() else ln for ln in c.splitlines(keepends=True)),
    "fence_lang_path": lambda c: f"```python src/wrap.py\n{c}```\n",
    "fence_lang_colon_path": lambda c: f"```python:src/wrap.py\n{c}```\n",
    "tilde_fence": lambda c: f"~~~python\n{c}~~~\n",
    "xml_file": lambda c: f'<file path="src/wrap.py">\n{c}</file>\n',
    "document": lambda c: f"<document>\n<source>src/wrap.py</source>\n<document_content>\n{c}</document_content>\n"
                          "</document>\n",
    "function_results": lambda c: f"<function_results>\n{c}</function_results>\n",
    "mcp_result": lambda c: json.dumps({"content": [{"type": "text", "text": c}], "isError": False}),
    "tool_result_numbered": lambda c: json.dumps({"type": "tool_result", "tool_use_id": "toolu_1", "content": [
        {"type": "text", "text": "".join(f"{i:>6}\u2192{ln}" for i, ln in enumerate(c.splitlines(keepends=True), 1))}]}),
    "json_indented": lambda c: json.dumps({"path": "src/wrap.py", "content": c}, indent=2),
    "html_pre": lambda c: '<pre><code class="language-python">' + c.replace("&", "&amp;").replace("<", "&lt;")
                          .replace(">", "&gt;") + "</code></pre>",
    "head_banner": lambda c: f"==> src/wrap.py <==\n{c}",
    "harmony": lambda c: f"<|start|>functions.read_file to=assistant<|message|>{c}<|end|>",
    "intro_sentence": lambda c: f"Here is the file you asked for:\n\n{c}\n(end of file)\n",
    "git_blame": lambda c: "".join(f"{'^' if i == 1 else ''}{i * 7919:08x} (Jane Doe 2024-01-02 10:11:12 +0000 {i:>4}) {ln}"
                                   for i, ln in enumerate(c.splitlines(keepends=True), 1)),
    "less_numbered": lambda c: "".join(f"{i:>7} {ln}" for i, ln in enumerate(c.splitlines(keepends=True), 1)),
    "pdb_listing": lambda c: "".join(f"{i:>3}  {'->' if i == 9 else '  '}\t{ln}"
                                     for i, ln in enumerate(c.splitlines(keepends=True), 1)),
    "json_line_array": lambda c: json.dumps({"path": "src/wrap.py", "lines": c.split("\n")}),
    "json_line_array_indented": lambda c: json.dumps({"lines": c.split("\n"), "total": c.count("\n")}, indent=2),
    "json_line_objects": lambda c: json.dumps({"path": "src/wrap.py", "lines": [
        {"line": i, "text": ln} for i, ln in enumerate(c.split("\n"), 1)]}),
    "ipython_readlines": lambda c: "Out[4]: [" + ",\n ".join(repr(ln) for ln in c.splitlines(keepends=True)) + "]",
    "print_readlines": lambda c: repr(c.splitlines(keepends=True)) + "\n",
    "repr_result": lambda c: repr(c),
    "ipython_out_string": lambda c: f"In [3]: open('src/wrap.py').read()\nOut[3]: {c!r}\n",
    "bytes_repr": lambda c: repr(c.encode()),
    "repr_double_quoted": lambda c: repr(c.replace('"', "'")),  # a file with no double quote: repr() writes "..."
    "json_string_result": lambda c: json.dumps(c),  # a result sent as the JSON string itself, no object around it
    "json_in_json": lambda c: json.dumps({"type": "function_call_output", "call_id": "call_1",
                                          "output": json.dumps({"path": "src/wrap.py", "content": c})}),
    "crlf": lambda c: c.replace("\n", "\r\n"),
    "select_string": lambda c: "".join(f"src\\pkg\\wrap.py:{i}:{ln}" for i, ln in enumerate(c.splitlines(keepends=True), 1)),
    "html_export": lambda c: ('<div class="tool-result"><div class="filename">src/wrap.py</div><pre><code class='
                              f'"language-python">{html.escape(c)}</code></pre></div>'),
    "html_highlighted": lambda c: '<div class="highlight"><pre><span></span>' + "".join(
        f'<span class="n">{tok}</span>' if i % 2 else html.escape(tok) for i, tok in enumerate(re.split(r"(\w+)", c)))
        + "</pre></div>",
    "quoted": lambda c: "".join("> " + ln if ln.strip() else ">\n" for ln in c.splitlines(keepends=True)),
    "org_example": lambda c: f"#+RESULTS:\n#+begin_example\n{c}#+end_example\n",
    "org_src": lambda c: f"#+begin_src python :tangle src/wrap.py\n{c}#+end_src\n",
    "terminal_screen": lambda c: (f"root@4c1d8e2a9b7f:/app# sed -n '1,400p' src/wrap.py\n"
                                  + "\n".join(ln[i:i + 64] for ln in c.split("\n") for i in range(0, len(ln) or 1, 64))
                                  + "\nroot@4c1d8e2a9b7f:/app# "),
    "powershell_screen": lambda c: ("PS C:\\repo> Get-Content src\\wrap.py\r\n" + "\r\n".join(
        ln[i:i + 72] for ln in c.split("\n") for i in range(0, len(ln) or 1, 72)) + "\r\nPS C:\\repo> "),
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_definitions_found_in_any_wrapper(tagger, wrapper):
    text = WRAPPERS[wrapper](CODE)
    for kind in (K.TOOL_OUTPUT, K.TEXT):
        ivs = tagger.intervals(text, SpanInfo(kind=kind))
        covered(text, ivs)
        check_python(text, CODE, ivs)


def test_numbered_view_under_a_terminal_ui_glyph(tagger):
    """A view as Claude Code's terminal shows it: ``  ⎿  `` before the first numbered row, five spaces before the
    others; the first row is a row too, so a definition there keeps its header."""
    body = "def build(root, strict=False):\n    if strict:\n        return os.path.join(root)\n    return root\n"
    text = "  ⎿  " + "\n     ".join(f"{i:>6}\t{ln}" for i, ln in enumerate(body.split("\n"), 19))
    rows = numbered_rows(text)
    assert rows is not None and rows[0][1] == text.index("def build")
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    assert tag_of(text, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "return os").block_type == B.FUNCTION_BODY


def test_terminal_colours_do_not_hide_code(tagger):
    """A view printed with colours (``bat --color=always``, ``grep --color=always``): every char of the code
    gets the tag it gets without the escapes, and each escape goes with the char before it."""
    lines = CODE.splitlines(keepends=True)
    plain = "".join(f"{i:>4} │ {ln}" for i, ln in enumerate(lines, 1))
    colour = "".join(f"\x1b[38;5;238m{i:>4}\x1b[0m \x1b[38;5;238m│\x1b[0m \x1b[38;5;81m{ln.rstrip(chr(10))}\x1b[0m\n"
                     for i, ln in enumerate(lines, 1))
    for kind in (K.TOOL_OUTPUT, K.TEXT):
        a, b = tagger.intervals(plain, SpanInfo(kind=kind)), tagger.intervals(colour, SpanInfo(kind=kind))
        covered(colour, b)
        check_python(colour, CODE, b)
        for i, ln in enumerate(lines, 1):  # the code of each line, without and with the escapes around it
            if ln.strip():
                pa = plain.index(f"{i:>4} │ {ln}") + len(f"{i:>4} │ ")
                pb = colour.index(f"\x1b[38;5;81m{ln.rstrip(chr(10))}\x1b[0m") + len("\x1b[38;5;81m")
                same_tags(plain, a, pa, colour, b, pb, len(ln.rstrip("\n")))
    at = colour.index("\x1b[0m", colour.index("class TextWrapper"))
    assert tag_at(b, at).block_type == tag_at(b, at - 1).block_type  # the reset after the header
    hits = "".join(f"\x1b[35mlib/textwrap.py\x1b[m\x1b[36m:\x1b[m\x1b[32m{i}\x1b[m\x1b[36m:\x1b[m{ln}"
                   for i, ln in enumerate(lines, 1) if ln.lstrip().startswith(("def ", "class ")))
    ivs = tagger.intervals(hits, SpanInfo(kind=K.TOOL_OUTPUT))
    check_python(hits, CODE, ivs)


def same_lines(tagger: StructureTagger, code: str, doc: str, ivs: Intervals, depth: bool = True) -> None:
    """Each line of ``code``, shown in ``doc`` indented two spaces under its block scalar's key line, carries at its
    first char the block type (and depth) it has in the plain view of ``code``."""
    plain = tagger.intervals(code, SpanInfo(kind=K.FILE_VIEW, language="python"))
    at, pos = doc.index(": |") + doc[doc.index(": |"):].index("\n") + 1, 0
    for line in code.splitlines(keepends=True):
        if line.strip():
            k = len(line) - len(line.lstrip())
            x, y = tag_at(plain, pos + k), tag_at(ivs, at + 2 + k)
            assert (x.block_type, x.depth if depth else 0) == (y.block_type, y.depth if depth else 0), line
        pos += len(line)
        at += len(line) + 2 * bool(line.strip())


def test_yaml_block_scalar_holding_a_file(tagger):
    """A YAML result (``content: |`` and the file indented under it) is read as the file: every definition is
    tagged, the keys are not; the same file shown plain gets the same tags."""
    body = "".join("  " + line if line.strip() else line for line in CODE.splitlines(keepends=True))
    doc = f"path: src/wrap.py\nlines: 160\ncontent: |\n{body}truncated: false\n"
    rows = yaml_block_rows(doc)
    assert rows is not None and sum(c >= 0 for _s, c, _e in rows) == CODE.count("\n")
    for kind, lang in ((K.TOOL_OUTPUT, None), (K.TEXT, None), (K.TOOL_OUTPUT, "python")):  # python: the call's path
        ivs = tagger.intervals(doc, SpanInfo(kind=kind, language=lang))
        covered(doc, ivs)
        check_python(doc, CODE, ivs)
        for key in ("path:", "content:", "truncated:"):
            assert tag_of(doc, ivs, key).block_type not in SIGNATURES | {B.IMPORT}
    for lang in (None, "python"):
        same_lines(tagger, CODE, doc, tagger.intervals(doc, SpanInfo(kind=K.TOOL_OUTPUT, language=lang)))
    # a view starting inside a function opens deeper than it goes on: with the indentation indicator a YAML emitter
    # writes (``|2-``) and without it, the block is the whole view (without it, how deep the view starts is unknown:
    # the least indented line is taken for the top level, so only the depths may differ)
    start = next(i for i, ln in enumerate(LINES) if "def _split(self, text)" in ln) + 3
    mid = "".join(LINES[start:start + 80])
    names = re.findall(r"^\s*def (\w+)", mid, re.MULTILINE)
    assert LINES[start].startswith("        ") and len(names) >= 2
    for header in ("content: |", "content: |2-"):
        doc = f"path: src/wrap.py\n{header}\n" + "".join("  " + ln if ln.strip() else ln for ln in mid.splitlines(True))
        ivs = tagger.intervals(doc, SpanInfo(kind=K.TOOL_OUTPUT, language="python"))
        for name in names:
            assert tag_of(doc, ivs, f"def {name}").block_type == B.FUNCTION_SIGNATURE, (header, name)
        same_lines(tagger, mid, doc, ivs, depth=header.endswith("-"))
    # a list item's block scalar, and YAML with no block (or too short a one) is not read this way
    assert yaml_block_rows("- name: run\n  script: |\n    pip install .\n    pytest -q\n    echo done\n") is not None
    assert yaml_block_rows("name: x\nsteps:\n  - run: make\n") is None
    assert yaml_block_rows("note: |\n  one line\nnext: 2\n") is None
    assert yaml_block_rows("| a | b |\n|---|---|\n| 1 | 2 |\n") is None


def test_json_string_lines_end_where_the_escapes_end(tagger):
    """A file in a JSON string has its lines: the token holding each escape's last char is marked ``ends_line``
    (three-char tokens, so escapes straddle tokens); source code's own ``"\\n"`` literals and raw text are not."""
    payload = json.dumps({"output": CODE})
    offsets = [(i, min(i + 3, len(payload))) for i in range(0, len(payload), 3)]
    tags = tagger.tag(payload, offsets, SpanInfo(kind=K.TOOL_OUTPUT))
    marked = [i for i, t in enumerate(tags) if t.ends_line]
    escapes = [m.end() - 1 for m in re.finditer(r"\\\\n|\\n", payload) if m.group() == "\\n"]
    assert len(escapes) == CODE.count("\n") > 10
    assert marked == sorted({e // 3 for e in escapes})
    # JSON text inside a JSON string (the Responses API's function_call_output): the escapes of the inner string
    # (``\\\\n``, three chars) end the lines, the outer one's own escapes (its quotes) do not
    payload = json.dumps({"type": "function_call_output", "output": json.dumps({"path": "a.py", "content": CODE})})
    offsets = [(i, min(i + 3, len(payload))) for i in range(0, len(payload), 3)]
    tags = tagger.tag(payload, offsets, SpanInfo(kind=K.TOOL_OUTPUT))
    marked = [i for i, t in enumerate(tags) if t.ends_line]
    escapes = [m.end() - 1 for m in re.finditer(r"(?<!\\)(?:\\{4})*\\\\n", payload)]  # 4k+2 backslashes: a break
    assert len(escapes) == CODE.count("\n") and marked == sorted({e // 3 for e in escapes})
    code = 'def show(rows):\n    print("header\\nrow\\nrow\\nrow and some more text to pass forty chars")\n'
    for text in (CODE, code):
        offs = [(i, min(i + 3, len(text))) for i in range(0, len(text), 3)]
        assert not any(t.ends_line for t in tagger.tag(text, offs, SpanInfo(kind=K.TOOL_OUTPUT)))


def test_json_array_of_lines_is_a_file_whose_lines_end_at_the_separators(tagger):
    """A file sent one line per array item is read as the file: the separator between two items is its line break
    (the token holding the next item's opening quote ``ends_line``); arrays of names, words or argv are left alone."""
    payload = json.dumps({"path": "src/wrap.py", "lines": CODE.split("\n")})
    (arr,) = keyed_strings(payload)
    assert arr.value == CODE and arr.key == "lines"
    assert all(payload[arr.offsets[k]] == CODE[k] for k in range(len(CODE)) if CODE[k] not in '\n"\\\t')
    offsets = [(i, min(i + 3, len(payload))) for i in range(0, len(payload), 3)]
    marked = [i for i, t in enumerate(tagger.tag(payload, offsets, SpanInfo(kind=K.TOOL_OUTPUT))) if t.ends_line]
    breaks = [arr.offsets[k + 1] - 1 for k, c in enumerate(CODE) if c == "\n"]
    assert marked == sorted({b // 3 for b in breaks}) and len(marked) > 10
    for other in ({"files": ["src/a.py", "src/b.py", "tests/test_a.py"]},
                  {"command": ["bash", "-lc", "sed -n '1,80p' src/wrap.py"]},
                  {"notes": ["The parser is slow on big files", "Retry the request later", "Ask the user first"]},
                  {"hits": [{"file": "a.py", "line": 3}, {"file": "b.py", "line": 9}, {"file": "c.py", "line": 12}]},
                  {"rows": [{"text": "def f():", "n": 1}, {"n": 2, "code": "    return 1"}, {"text": "x = 2"}]}):
        assert keyed_strings(json.dumps(other)) == []
    # a printed Python list is a file only when its items end in line breaks, as readlines() keeps them
    assert keyed_strings("[['def', 'A', ['(', 'z', ')'], ':', [['A1'], ['x', '=', '1']]]]") == []
    (arr,) = keyed_strings(repr(CODE.splitlines(keepends=True)))
    assert arr.value == CODE.removesuffix("\n")
    # one object per line: its string field is the line, and the rest up to the next line's first char the break
    objects = json.dumps({"path": "src/wrap.py", "lines": [{"n": i, "text": ln} for i, ln in enumerate(CODE.split("\n"))]})
    (arr,) = keyed_strings(objects)
    assert arr.value == CODE and arr.key == "lines"
    assert all(objects[arr.offsets[k]] == CODE[k] for k in range(len(CODE)) if CODE[k] not in '\n"\\\t')


def test_view_starting_mid_function(tagger):
    full = tagger.intervals(SOURCE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    split = next(i for i, ln in enumerate(LINES) if "def _split(self, text)" in ln)
    body = next(i for i in range(split, len(LINES)) if "if self.break_on_hyphens" in LINES[i])
    for start in (body, split + 12):  # in the body; inside the docstring
        piece = "".join(LINES[start:start + 150])
        assert piece.startswith("        ")
        offset = sum(len(ln) for ln in LINES[:start])
        first_def = piece.index("\n    def ") + 1
        for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
            ivs = tagger.intervals(piece, span)
            covered(piece, ivs)
            # from the next definition on, the tags match the whole file's
            same_tags(SOURCE, full, offset + first_def, piece, ivs, first_def, len(piece) - first_def)
            lead = {tag_at(ivs, k) for k in range(first_def) if not piece[k].isspace()}
            assert all(t.depth >= 2 and t.block_type not in SIGNATURES for t in lead)
            if start == body:  # the leading body lines are one block, as deep as in the whole file
                assert len({t.block_id for t in lead}) == 1
                same_tags(SOURCE, full, offset, piece, ivs, 0, first_def)


def _tabbed(text: str) -> str:
    """``text`` indented with a tab per four leading spaces (the rest stay spaces)."""
    return "".join("\t" * (n // 4) + " " * (n % 4) + ln.lstrip(" ")
                   for ln in text.splitlines(keepends=True) for n in [len(ln) - len(ln.lstrip(" "))])


def test_view_starting_mid_function_indented_with_tabs(tagger):
    """textwrap indented with tabs, viewed from inside a method: the scopes the view starts in reopen indented as the
    view is (headers in spaces would not line up with its tabs, and the parse would fail), so every definition after
    is a signature; also when the view starts four levels deep on a comment and an ``else`` clause (fails when the
    reopened headers are written in spaces)."""
    split = next(i for i, ln in enumerate(LINES) if "def _split(self, text)" in ln)
    body = next(i for i in range(split, len(LINES)) if "if self.break_on_hyphens" in LINES[i])
    clause = next(i for i, ln in enumerate(LINES) if "# Nope, this line is full." in ln)
    assert LINES[clause + 1].strip() == "else:" and LINES[clause].startswith(" " * 16)
    for start in (body, clause):
        piece = _tabbed("".join(LINES[start:start + 60]))
        for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
            ivs = tagger.intervals(piece, span)
            covered(piece, ivs)
            defs = [m.end() - 1 for m in re.finditer(r"^\t?def ", piece, re.MULTILINE)]
            assert defs and all(tag_at(ivs, at).block_type == B.FUNCTION_SIGNATURE for at in defs), (start, span)
            assert tag_of(piece, ivs, "else:" if start == clause else "if self").block_type not in SIGNATURES


def test_view_starting_inside_a_statement(tagger):
    """A view that starts on the last lines of a statement begun above it (the end of ``__init__``'s parameter list,
    ``placeholder=' [...]'):``): the brackets they close were never opened, so parsed as they are they are errors
    that pull the body after them to the top level (its bindings read as module globals). Their body is body."""
    full = tagger.intervals(SOURCE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    init = next(i for i, ln in enumerate(LINES) if "def __init__(self," in ln)
    start = next(i for i in range(init, len(LINES)) if "replace_whitespace=True," in LINES[i])
    piece = "".join(LINES[start:start + 60])
    offset = sum(len(ln) for ln in LINES[:start])
    first_def = piece.index("\n    def ") + 1
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(piece, span)
        covered(piece, ivs)
        assert tag_of(piece, ivs, "self.width = width").block_type == B.FUNCTION_BODY
        assert all(t.block_type != B.GLOBAL for _s, _e, t in ivs)
        body = piece.index("self.width")
        same_tags(SOURCE, full, offset + body, piece, ivs, body, len(piece) - body)
    assert first_def > body


BRACE_SNIPPETS = {
    "javascript": ("    return total + item.price;\n  }, 0);\n}\n\nfunction formatPrice(value, currency = 'EUR') {\n"
                   "  const rounded = Math.round(value * 100) / 100;\n  return `${rounded} ${currency}`;\n}\n\n"
                   "module.exports = { formatPrice };\n", "formatPrice(value"),
    "go": ("\t\treturn nil, err\n\t}\n\treturn out, nil\n}\n\nfunc (s *Store) Get(key string, fallback int) (int, error) {\n"
           "\tv, ok := s.items[key]\n\tif !ok {\n\t\treturn fallback, nil\n\t}\n\treturn v, nil\n}\n", "Get(key"),
    "rust": ("        self.items.len()\n    }\n\n    pub fn get(&self, key: &str, fallback: i64) -> i64 {\n"
             "        let mut v = fallback;\n        if let Some(x) = self.items.get(key) {\n            v = *x;\n"
             "        }\n        v\n    }\n}\n", "get(&self"),
    "typescript": ("      this.view.invalidate()\n    }\n  }\n\n  _update_margin(width: number): void {\n"
                   "    this.editor.setMargin(width)\n  }\n\n  _update_code(): void {\n"
                   "    if (this.editor.getValue() != this.model.code) {\n"
                   "      this.model.code = this.editor.getValue()\n"
                   "    }\n  }\n", "_update_margin(width"),
    "java": ("        return total;\n    }\n\n    public int lookup(String key, int fallback) {\n"
             "        Integer v = items.get(key);\n        return v == null ? fallback : v;\n    }\n}\n", "lookup(String"),
}


@pytest.mark.parametrize("language", sorted(BRACE_SNIPPETS))
def test_brace_languages_mid_block_and_guessed(tagger, language):
    code, needle = BRACE_SNIPPETS[language]
    for lang in (language, None):
        ivs = tagger.intervals(code, SpanInfo(kind=K.FILE_VIEW, language=lang))
        covered(code, ivs)
        assert tag_of(code, ivs, needle).block_type == B.FUNCTION_SIGNATURE, (language, lang)
        first = tag_at(ivs, len(code) - len(code.lstrip()))
        assert first.block_type not in SIGNATURES and first.depth >= 1, (language, lang, first)
    assert language in language_candidates(code) or language == "java"


def test_language_hints_searched_word_first_match_as_written():
    text = "".join(code for code, _needle in BRACE_SNIPPETS.values()) + SOURCE + (
        "athis.x = 1; this.y = 2\nmySystem.out; System.out.println(x)\nrenew Foo(); new Foo()\nNoneType None\n"
        "if err != nil {\nfmt.Println(x)\nlet mut v = 1;\nconsole.log(x); require('x')\n")
    rewritten = 0
    for patterns in _LANG_HINTS.values():
        for pattern in patterns:
            fast = _word_first(pattern)
            rewritten += fast != pattern
            found = [m.span() for m in re.finditer(fast, text, re.MULTILINE)]
            assert found == [m.span() for m in re.finditer(pattern, text, re.MULTILINE)], pattern
            assert found or fast == pattern, pattern  # the text shows every hint opening on a word
    assert rewritten >= 10


def test_real_javascript_file_without_language(tagger):
    path = Path(__import__("matplotlib").__file__).parent / "backends/web_backend/js/mpl.js" \
        if __import__("importlib").util.find_spec("matplotlib") else None
    if path is None or not path.exists():
        pytest.skip("matplotlib's mpl.js not installed")
    code = path.read_text()[:20_000]
    code = code[: code.rindex("\n") + 1]
    guessed = tagger.intervals(code, SpanInfo(kind=K.TOOL_OUTPUT))
    named = tagger.intervals(code, SpanInfo(kind=K.FILE_VIEW, language="javascript"))
    same_tags(code, named, 0, code, guessed, 0, len(code))


def test_prose_stays_prose(tagger):
    text = ("The parser fails when the input is empty. I think `parse()` should return an empty list\n"
            "instead of raising. Steps to reproduce: call parse with an empty string and look at the\n"
            "traceback. Thanks for looking into it!\n")
    ivs = tagger.intervals(text, SpanInfo(kind=K.ISSUE))
    assert {t.block_type for _s, _e, t in ivs} == {B.TEXT}
    assert code_regions(text, 0, len(text)) == []


@pytest.mark.parametrize("line", ["import os as _os", "from gettext import gettext as _, ngettext", "from . import views",
                                  "from .models import (", "import React from 'react';", 'import { a, b } from "./x"'])
def test_import_lines_are_code_however_plain_their_words(line):
    assert line_label(line) == CODE_LINE


@pytest.mark.parametrize("kind", [K.TOOL_OUTPUT, K.TEXT])
def test_annotated_module_bindings_are_code_however_plain_their_words(tagger, kind):
    """``name: Type = value`` (PEP 526) at a line's start is a binding, as ``name = value`` is: a run of them in a
    span nothing declares as code is code, its lines module constants; a sentence with a colon and an equals sign is
    not."""
    text = ("The module's settings:\n\nlogger: logging.Logger = logging.getLogger(__name__)\n"
            "WithArgsTypes: tuple[Any, ...] = (typing._GenericAlias, types.GenericAlias)\n"
            "timeout: float | None = None\n\nThat is all.\n")
    ivs = tagger.intervals(text, SpanInfo(kind=kind))
    assert [tag_of(text, ivs, name).block_type for name in ("logger", "WithArgsTypes", "timeout")] == [B.GLOBAL] * 3
    assert tag_of(text, ivs, "That").block_type != B.GLOBAL
    assert line_label("Note: the value = 3") == PROSE_LINE


@pytest.mark.parametrize("line", [
    "if sys.version_info >= (3, 13):  # pragma: no cover", "try:  # the fast path", "except ImportError:  # py2",
    '_tensor_classes: set[type["torch.Tensor"]] = set()', "visible_prompt_func: Callable[[str], str] = input",
    "del __name, __obj", "__name, __obj = None, None", "DEBUG = False", "ERROR = 40", "    assert x in kwargs",
    "async for chunk in response:",
])
def test_module_statements_found_in_real_files_are_code(line):
    """First lines of statements that read as prose or log before (from a sweep of 400 installed files with ``ast``):
    a clause with a trailing comment, an annotation with nested brackets, ``del``, a tuple assignment, a constant
    named like a log level."""
    assert line_label(line) == CODE_LINE


@pytest.mark.parametrize("line", ["DEBUG: starting the worker", "ERROR tests/test_a.py", "FAILED tests/a.py::t - x",
                                  "INFO loaded 3 files"])
def test_log_lines_stay_log(line):
    assert line_label(line) == LOG_LINE


def test_sentences_that_open_with_import_are_prose():
    assert line_label("import the data before you run it, then check the logs.") == PROSE_LINE


def test_a_label_over_a_raw_dump_is_not_code(tagger):
    """The capitalised labels an agent puts over a result (smolagents' ``Observation:`` and ``Execution logs:``,
    ReAct's ``Thought:``) are its header, not code: the file under them reads as it does alone (its module docstring
    a docstring). Clause headers and lower-case keys still read as code."""
    for label in ("Observation:", "Execution logs:", "Thought:", "Output:\n"):
        assert line_label(label) == PROSE_LINE, label
    for code in ("else:", "try:", "finally:", "dependencies:", "    Meta:", "case Color.RED:"):
        assert line_label(code) != PROSE_LINE, code
    code = "".join(LINES[:next(i for i, ln in enumerate(LINES) if ln.startswith("class TextWrapper"))])
    assert code.startswith('"""')
    text = f"Observation:\nExecution logs:\n{code}"
    plain = tagger.intervals(code, SpanInfo(kind=K.FILE_VIEW, language="python"))
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    covered(text, ivs)
    assert tag_of(text, ivs, "Observation").block_type == B.TEXT
    same_tags(code, plain, 0, text, ivs, text.index(code), len(code))


# ------------------------------------------------------------------------------ tool calls
CALLS = {
    "function": ('view_file(path="pkg/mod.py", start_line=19, end_line=107)', "pkg/mod.py"),
    "command": ("cat pkg/mod.py", "pkg/mod.py"),
    "sed": ("sed -n '1,80p' src/lib/util.ts", "src/lib/util.ts"),
    "open": ("open_file pkg/mod.py 120", "pkg/mod.py"),
    "json": ('{"name": "read_file", "arguments": {"path": "pkg/mod.py"}}', "pkg/mod.py"),
    "tool_use": ('{"type": "tool_use", "id": "t1", "name": "str_replace_editor", "input": {"command": "view", '
                 '"path": "/repo/app/main.go"}}', "/repo/app/main.go"),
    "tool_calls": ('{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '
                   '"{\\"command\\": \\"nl -ba lib/core.rs\\"}"}}]}', "lib/core.rs"),
    "xml": ("<tool_call>\n<name>view</name>\n<path>pkg/mod.py</path>\n</tool_call>", "pkg/mod.py"),
    "thought": ("THOUGHT: I need to see the helper first.\n\n```bash\nnl -ba pkg/mod.py | sed -n '10,60p'\n```",
                "pkg/mod.py"),
    "discussion": ("DISCUSSION\nThe parser lives in pkg/parse.py; let me open the helper it calls.\n\n```\n"
                   "open pkg/mod.py 40\n```", "pkg/mod.py"),
    "gemini": ('{"functionCall": {"name": "read_file", "args": {"absolute_path": "/repo/pkg/mod.py"}}}',
               "/repo/pkg/mod.py"),
    "bat": ("bat --paging=never pkg/mod.py", "pkg/mod.py"),
    "cline": ("<thinking>\nThe helper is next.\n</thinking>\n\n<read_file>\n<path>pkg/mod.py</path>\n</read_file>",
              "pkg/mod.py"),
    "codex": ('{"name": "shell", "arguments": {"command": ["bash", "-lc", "sed -n \'1,80p\' pkg/mod.py"], '
              '"workdir": "/repo"}}', "pkg/mod.py"),
    "react": ('Thought: the helper is next.\nAction: read_file\nAction Input: {"path": "pkg/mod.py"}', "pkg/mod.py"),
    "smolagents": ('Thought: I need the helper.\nCode:\n```py\nsource = read_file("pkg/mod.py")\nprint(source)\n'
                   '```<end_code>', "pkg/mod.py"),
    "gemini_python": ('print(default_api.read_file(absolute_path="/repo/pkg/mod.py"))', "/repo/pkg/mod.py"),
    "terminal_ui": ("⏺ Bash(cat -n pkg/mod.py | sed -n '19,80p')", "pkg/mod.py"),
    "terminal_ui_search": ('⏺ Search(pattern: "build(", path: "pkg/mod.py")', "pkg/mod.py"),
}


@pytest.mark.parametrize("style", sorted(CALLS))
def test_tool_calls_in_any_syntax(tagger, style):
    text, path = CALLS[style]
    assert path in call_paths(text)
    assert call_language(text) == {"py": "python", "ts": "typescript", "go": "go", "rs": "rust"}[path.rsplit(".", 1)[1]]
    assert tool_call_spans(text)
    for kind in (K.TEXT, K.TOOL_CALL, K.PLAN):
        ivs = tagger.intervals(text, SpanInfo(kind=kind))
        covered(text, ivs)
        call_pos = text.index(path)
        assert tag_at(ivs, call_pos).block_type == B.TOOL_CALL, (style, kind)
    if style == "thought":
        assert tag_of(text, ivs, "THOUGHT").block_type == B.TEXT
    if style == "smolagents":  # the code action is the call: nothing in it is pinned as a module constant
        assert tag_of(text, ivs, "source =").block_type == B.TOOL_CALL
    if style == "react":
        assert tag_of(text, ivs, "Thought:").block_type == B.TEXT
        assert tag_of(text, ivs, "Action:").block_type == B.TOOL_CALL


def test_plain_sentences_are_not_calls():
    assert tool_call_spans("I will look at the parser next, then run the tests.") == []
    assert tool_call_spans("The value is (a, b) and the rest follows.") == []
    assert tool_call_spans("⏺ I will read the parser (pkg/parse.py) next.") == []
    # XML-ish wrappers that are not tool elements: a thought, a file in a result
    assert tool_call_spans("<thinking>\nI should read pkg/mod.py next.\n</thinking>") == []
    assert tool_call_spans("<file><path>pkg/mod.py</path>\n<content>\nx = 1\n</content>\n</file>") == []


def test_a_call_standing_alone_in_a_pasted_file_is_code():
    """A file pasted raw into a message (a repomix pack): a line that only calls (``        self._destroy()``) under
    an indented line or a block's header is the body it sits in, not a function-call style tool call; a call at
    column 0, or indented under prose or a list item, still is one."""
    text = ("Here is the file.\n\nclass Cursor:\n    def __del__(self):\n        self._destroy()\n\n"
            "    def close(self):\n        for region in self._rlist:\n            region.release()\n")
    assert tool_call_spans(text) == []
    tagged = StructureTagger().intervals(text, SpanInfo(kind=K.TEXT))
    assert tag_of(text, tagged, "self._destroy()").block_type == B.FUNCTION_BODY
    assert tag_of(text, tagged, "region.release()").block_type == B.FUNCTION_BODY
    for call in ('view_file(path="pkg/mod.py", start_line=1)', 'Next:\n  run_tests(path="tests")',
                 '- read the parser first\n  view_file(path="pkg/parse.py")'):
        assert tool_call_spans(call) != [], call


def test_a_short_snippet_calling_a_command_word_is_code():
    """A message of at most three lines with no call found falls back to command lines (``go test ./...``, an
    interpreter agent's ``open(path).readlines()`` cell); a command word called inside a block (``go()`` under
    ``class A:``) is code."""
    for code in ("class A:\n    go()\n", "def build(cfg):\n    make(cfg)\n"):
        assert tool_call_spans(code) == [], code
    for command in ("go test ./...", "find . -name '*.py'", "$ go build", "cd .. && ls",
                    "```python\nopen('pkg/mod.py').readlines()[0:80]\n```"):
        assert tool_call_spans(command) != [], command
    # a fence's first line (SWE-agent): a dot after a space is an argument, a dot after the word an attribute
    assert is_command("find . -name '*.py'") and not is_command("git.Repo(root)") and not is_command("open(path)")


NEW_DEF = "def build(root, strict=False):\n    if strict:\n        return os.path.join(root)\n    return root"


@pytest.mark.parametrize("call", [
    "I'll update it.\n\n<function=str_replace_editor>\n<parameter=command>str_replace</parameter>\n"
    f"<parameter=path>/workspace/pkg/mod.py</parameter>\n<parameter=old_str>def build(root):</parameter>\n"
    f"<parameter=new_str>{NEW_DEF}</parameter>\n</function>",
    f"<write_to_file>\n<path>pkg/mod.py</path>\n<content>\nimport os\n\n{NEW_DEF}\n</content>\n</write_to_file>",
    f"<replace_in_file>\n<path>pkg/mod.py</path>\n<diff>\n------- SEARCH\ndef build(root):\n=======\n{NEW_DEF}\n"
    "+++++++ REPLACE\n</diff>\n</replace_in_file>",
    "Applying the fix.\n<function_calls>\n<invoke name=\"write\">\n<parameter name=\"path\">pkg/mod.py</parameter>\n"
    f"<parameter name=\"content\">{NEW_DEF}</parameter>\n</invoke>\n</function_calls>",
], ids=["openhands", "cline_write", "cline_replace", "anthropic_xml"])
def test_code_carried_in_xml_parameters(tagger, call):
    """An XML call's code parameter (``new_str``, ``content``, ``diff``) is code in the language of the path
    the call names; the call's own lines stay TOOL_CALL."""
    assert tool_call_spans(call)
    ivs = tagger.intervals(call, SpanInfo(kind=K.TEXT))
    covered(call, ivs)
    assert tag_of(call, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(call, ivs, "return os.path").block_type == B.FUNCTION_BODY
    assert tag_of(call, ivs, "<path>" if "<path>" in call else "<parameter").block_type == B.TOOL_CALL


@pytest.mark.parametrize("call", [
    f"REPLACE pkg/mod.py\n{NEW_DEF}\nEND",
    f"patch('pkg/mod.py', \"\"\"\nimport os\n\n{NEW_DEF}\n\"\"\")",
], ids=["block", "triple_quoted"])
def test_definition_carried_unquoted_in_a_call(tagger, call):
    """A call span whose first line is the command and whose next lines are the definition it writes (a custom
    ``REPLACE path``/``END`` block, a triple-quoted argument): the definition is code in the path's language, the
    command stays TOOL_CALL; a multi-line command with no definition stays a call."""
    ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
    covered(call, ivs)
    assert tag_of(call, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(call, ivs, "return os.path").block_type == B.FUNCTION_BODY
    assert tag_of(call, ivs, call.split("\n")[0]).block_type == B.TOOL_CALL
    script = "set -e\ncd /repo\npip install -e .\npython -m pytest -x tests/test_mod.py\n"
    assert {t.block_type for _s, _e, t in tagger.intervals(script, SpanInfo(kind=K.TOOL_CALL))} == {B.TOOL_CALL}


@pytest.mark.parametrize("action", [
    f"Thought: I will replace it.\nCode:\n```py\nnew_code = '''{NEW_DEF}'''\nreplace_definition('pkg/mod.py', new_code)\n"
    "```<end_code>",
    f"Rationale: rewrite it.\n$ python - <<'PY'\nimport pathlib\np = pathlib.Path('pkg/mod.py')\n"
    f'p.write_text(edit(p.read_text(), """\n{NEW_DEF}\n"""))\nPY',
], ids=["smolagents", "heredoc"])
def test_code_passed_in_a_python_string(tagger, action):
    """A code action that passes a definition in a triple-quoted literal: the literal is code; a docstring
    and a literal holding prose stay what they were."""
    ivs = tagger.intervals(action, SpanInfo(kind=K.TEXT))
    covered(action, ivs)
    assert tag_of(action, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(action, ivs, "return os.path").block_type == B.FUNCTION_BODY
    source = 'def f():\n    """def g(x): is how a docstring may start\n    and go on."""\n    q = """\n    select 1\n    """\n'
    ivs = tagger.intervals(source, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert tag_of(source, ivs, "def g").block_type == B.DOCSTRING
    assert tag_of(source, ivs, "select 1").block_type == B.FUNCTION_BODY


def test_code_in_a_one_line_python_string(tagger):
    """A code action that assigns a definition as a one-line literal with ``\\n`` escapes (its repr): the literal is
    code whose lines end at the escapes; a literal holding lines of prose stays what it was."""
    action = f"```python\nnew = {NEW_DEF!r}\nreplace_definition('pkg/mod.py', new)\n```"
    ivs = tagger.intervals(action, SpanInfo(kind=K.TOOL_CALL))
    covered(action, ivs)
    assert tag_of(action, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(action, ivs, "return os.path").block_type == B.FUNCTION_BODY
    offsets = [(i, i + 1) for i in range(len(action))]
    marked = [i for i, t in enumerate(tagger.tag(action, offsets, SpanInfo(kind=K.TOOL_CALL))) if t.ends_line]
    assert [i for i in marked if action[i - 1:i + 1] == "\\n"] and all(action[i] in "n\n" for i in marked)
    # the literal as a call's argument, with quotes of both kinds inside (a quote in it opens no JSON string)
    source = 'def build(root, strict=False):\n    if not root:\n        raise ValueError("no \'root\'")\n' \
             "    def walk(top):\n        return os.path.join(top)\n    return walk(root)\n"
    call = f">>> replace_def('a/b.py', {source!r})"
    ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
    assert tag_of(call, ivs, "replace_def").block_type == B.TOOL_CALL
    assert tag_of(call, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(call, ivs, "walk(top)").block_type != B.TOOL_CALL
    prose = "```python\nmsg = 'class starts at nine\\nbring the notes\\nand a pen\\n'\nsend(msg)\n```"
    ivs = tagger.intervals(prose, SpanInfo(kind=K.TOOL_CALL))
    assert tag_of(prose, ivs, "starts at nine").block_type not in SIGNATURES


@pytest.mark.parametrize("call", [
    f"THOUGHT: rewrite it.\n\n```bash\ncat <<'EOF' > pkg/mod.py\n{NEW_DEF}\nEOF\n```",
    f"```bash\npython3 - <<'PY'\nimport os\n\n{NEW_DEF}\nPY\n```",
    f"cat > pkg/mod.py <<-EOF\n{NEW_DEF}\n\tEOF",
    f"```powershell\n@'\n{NEW_DEF}\n'@ | Set-Content -Path src\\pkg\\mod.py\n```",
], ids=["heredoc_in_fence", "python_stdin", "heredoc_dash", "powershell_here_string"])
def test_code_fed_to_a_command_through_a_heredoc(tagger, call):
    """A heredoc or a PowerShell here-string is code in the language of the path or the interpreter the command
    names; the command lines around it stay TOOL_CALL."""
    ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
    covered(call, ivs)
    assert tag_of(call, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(call, ivs, "return os.path").block_type == B.FUNCTION_BODY
    head = next(w for w in ("cat", "python3", "@'") if w in call)
    assert tag_of(call, ivs, head).block_type == B.TOOL_CALL


def test_heredocs_that_hold_no_code(tagger):
    """A commit message fed through a heredoc is not code, and a shell fence other than bash inside a call is the
    call's commands. An unclosed heredoc is no heredoc: the definition under it is read by content, as under any
    command line."""
    for call in ("```bash\ngit commit -F - <<'EOF'\nFix the parser for empty input\n\nIt used to crash.\nEOF\n```",
                 "```powershell\nGet-Content src\\pkg\\mod.py | Select-Object -First 40\n```"):
        ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
        covered(call, ivs)
        assert not [call[s:e] for s, e, t in ivs if t.block_type in SIGNATURES]
    unclosed = f"cat > pkg/mod.py <<'EOF'\n{NEW_DEF}\n"
    ivs = tagger.intervals(unclosed, SpanInfo(kind=K.TOOL_CALL))
    assert tag_of(unclosed, ivs, "cat >").block_type == B.TOOL_CALL
    assert tag_of(unclosed, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE


def test_apply_patch_envelope_is_a_diff(tagger):
    """Codex CLI's ``apply_patch``: ``*** Update File:`` hunks opened by a bare ``@@`` or an anchor, and an
    added file's lines; each in the language of its file, inside the JSON call that carries it."""
    patch = ("*** Begin Patch\n*** Update File: pkg/mod.py\n@@ class Builder:\n-    def build(self, root):\n"
             "+    def build(self, root, strict=False):\n         return root\n@@\n-LIMIT = 1\n+LIMIT = 2\n"
             "*** Add File: web/app.ts\n+export function render(el: Element): void {\n+  el.remove();\n+}\n"
             "*** End Patch")
    for text in (patch, json.dumps({"name": "shell", "arguments": {"command": ["apply_patch", patch]}})):
        ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_CALL if text[0] == "{" else K.TEXT))
        covered(text, ivs)
        assert tag_of(text, ivs, "build(self, root, strict").block_type == B.FUNCTION_SIGNATURE
        assert tag_of(text, ivs, "build(self, root)").block_type == B.FUNCTION_SIGNATURE
        assert tag_of(text, ivs, "render(el").block_type == B.FUNCTION_SIGNATURE
        assert tag_of(text, ivs, "*** Update").block_type not in SIGNATURES


def test_plain_fence_is_a_call_only_when_it_holds_a_command(tagger):
    edit = ("DISCUSSION\nFix the bound.\n\n```\nedit 12:14\ndef clamp(n, limit):\n    if n > limit:\n"
            "        raise ValueError(n)\nend_of_edit\n```")
    assert tool_call_spans(edit) == [(edit.index("```"), len(edit))]
    ivs = tagger.intervals(edit, SpanInfo(kind=K.TEXT))
    assert tag_of(edit, ivs, "edit 12").block_type == B.TOOL_CALL
    assert tag_of(edit, ivs, "end_of_edit").block_type == B.TOOL_CALL
    assert tag_of(edit, ivs, "clamp").block_type == B.FUNCTION_SIGNATURE  # the code the command carries
    assert tag_of(edit, ivs, "Fix the").block_type == B.TEXT
    for code in ("Like this:\n\n```\nopen(path).read()\nx = 1\n```", "Like this:\n\n```\nfind = 3\n```",
                 "Like this:\n\n```\nresult = parse(text)\n```",
                 "Fix:\n```python\nx = 1\n```\nfind the line above and replace it.\n```\nmore = 2\n```"):  # a closing fence
        assert tool_call_spans(code) == [], code


# ------------------------------------------------------------------------------ test logs
LOGS = {
    "pytest": ("============================= test session starts ==============================\n"
               "collected 3 items\n\ntests/test_a.py .F.                                  [100%]\n\n"
               "=================================== FAILURES ===================================\n"
               "E       assert 2 == 3\ntests/test_a.py:12: AssertionError\n"
               "FAILED tests/test_a.py::test_thing - assert 2 == 3\n", "E       assert 2 == 3", "collected 3"),
    "unittest": (".F.\n======================================================================\n"
                 "FAIL: test_parse (tests.test_parser.ParserTest)\n"
                 "----------------------------------------------------------------------\n"
                 "Traceback (most recent call last):\n  File \"tests/test_parser.py\", line 9, in test_parse\n"
                 "    self.assertEqual(parse(''), [])\nAssertionError: None != []\n\n"
                 "----------------------------------------------------------------------\n"
                 "Ran 3 tests in 0.002s\n\nFAILED (failures=1)\n", "FAIL: test_parse", "Ran 3 tests"),
    "jest": (" FAIL  src/price.test.js\n  price\n    ✓ rounds (3 ms)\n    ✕ formats with currency (2 ms)\n\n"
             "  ● price › formats with currency\n\n    Expected: \"1 EUR\"\n    Received: \"1.00 EUR\"\n\n"
             "Tests:       1 failed, 1 passed, 2 total\n", "● price", "Tests:"),
    "go": ("=== RUN   TestGet\n--- FAIL: TestGet (0.00s)\n    store_test.go:14: got 0, want 1\nFAIL\n"
           "FAIL\texample.com/store\t0.003s\n", "--- FAIL", "=== RUN"),
    "cargo": ("running 2 tests\ntest tests::adds ... ok\ntest tests::gets ... FAILED\n\nfailures:\n\n"
              "---- tests::gets stdout ----\nthread 'tests::gets' panicked at src/lib.rs:20:9:\n"
              "assertion `left == right` failed\n\ntest result: FAILED. 1 passed; 1 failed\n",
              "thread 'tests::gets' panicked", "test tests::adds ... ok"),
    "mocha": ("\n  Parser\n    ✔ parses numbers\n    1) parses strings\n\n  1 passing (12ms)\n  1 failing\n\n"
              "  1) Parser\n       parses strings:\n     AssertionError: expected 'a' to equal 'b'\n",
              "AssertionError: expected", "1 passing"),
    "rspec": ("..F\n\nFailures:\n\n  1) Parser parses strings\n     Failure/Error: expect(parse('a')).to eq 1\n"
              "       expected: 1\n            got: nil\n\nFinished in 0.01 seconds (files took 0.1 seconds to load)\n"
              "3 examples, 1 failure\n", "Failure/Error", "Finished in"),
    "maven": ("[INFO]  T E S T S\n[INFO] Running com.example.ParserTest\n[ERROR] Tests run: 3, Failures: 1, "
              "Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE!\n[ERROR] com.example.ParserTest.parses"
              "  Time elapsed: 0.01 s  <<< FAILURE!\norg.opentest4j.AssertionFailedError: expected: <1> but was: <2>\n",
              "org.opentest4j.AssertionFailedError", "[INFO] Running"),
    "tap": ("TAP version 13\n# Subtest: parses numbers\nok 1 - parses numbers\nnot ok 2 - parses strings\n"
            "  ---\n  error: 'Expected values to be strictly equal'\n  ...\n1..2\n# pass 1\n# fail 1\n",
            "not ok 2", "ok 1 - parses"),
}


@pytest.mark.parametrize("runner", sorted(LOGS))
def test_test_logs_recognised_by_content(tagger, runner):
    text, error, plain = LOGS[runner]
    assert looks_like_test_log(text)
    for kind in (K.TEXT, K.TOOL_OUTPUT):
        ivs = tagger.intervals(text, SpanInfo(kind=kind))
        covered(text, ivs)
        assert tag_of(text, ivs, error).block_type == B.ERROR, (runner, kind)
        assert tag_of(text, ivs, plain).block_type == B.LOG, (runner, kind)
    # the same log as the value of a key that usually holds a file: a notebook's stream output (one line per item),
    # a tool result's "content" string
    for wrapped in (json.dumps({"outputs": [{"name": "stdout", "output_type": "stream",
                                             "text": text.splitlines(keepends=True)}]}, indent=1),
                    json.dumps({"type": "tool_result", "content": text})):
        ivs = tagger.intervals(wrapped, SpanInfo(kind=K.TOOL_OUTPUT))
        covered(wrapped, ivs)
        blocks = {tag_at(ivs, k).block_type for k in range(len(wrapped)) if not wrapped[k].isspace()}
        assert not blocks & (SIGNATURES | {B.FUNCTION_BODY, B.DOCSTRING, B.CONTROL_FLOW}), (runner, blocks)
        assert tag_of(wrapped, ivs, plain).block_type == B.LOG, runner


def test_code_is_not_a_test_log():
    assert not looks_like_test_log(CODE)
    assert not looks_like_test_log("total 4\n-rw-r--r-- 1 root root 10 a.py\n")


@pytest.mark.parametrize("source", ["textwrap", "argparse"])
def test_views_from_any_line_keep_every_signature(tagger, source):
    """A 30-line numbered view of a real module starting at any line inside a function (plain clause headers
    such as ``if x is None:``, ``elif``/``else``/``except`` continuing a statement the view starts inside):
    every complete ``def`` header in it is still a signature."""
    import importlib

    lines = Path(importlib.import_module(source).__file__).read_text().splitlines(keepends=True)
    starts = [i for i, ln in enumerate(lines) if re.match(r" {4,}(?:if|elif|else|except|return|for)\b", ln)]
    assert len(starts) > 40
    for start in starts[:: max(1, len(starts) // 60)]:
        piece = lines[start:start + 30]
        numbered = "".join(f"{start + k + 1:>6}\t{ln}" for k, ln in enumerate(piece))
        for view in (numbered, "".join(piece)):  # cat -n, raw
            ivs = tagger.intervals(view, SpanInfo(kind=K.TOOL_OUTPUT))
            for m in re.finditer(r"^(?: *\d+\t)? *def (\w+)\(.*\):\n", view, re.M):  # one-line headers
                tag = tag_at(ivs, m.start(1))
                assert tag.block_type == B.FUNCTION_SIGNATURE, (source, start + 1, m.group(1), tag)


# ------------------------------------------------------------------------------ media and notations
PROMPT = "root@4c1d8e2a9b7f:/app# "


def test_terminal_screen_commands_output_and_typed_heredoc(tagger):
    """A tmux screen (Terminal-Bench's Terminus): prompt lines are the calls, the output after one is code in the
    language of the path its command names, a line the screen wrapped reads as one line, and a heredoc typed after
    ``> `` continuation prompts is code."""
    code = ('class Column:\n    def describe(self, dtype):\n        raise ValueError(f"Data type {dtype} is not '
            'supported by the interchange protocol, sorry")\n\n    def size(self) -> int:\n        return 3\n')
    lines = code.split("\n")
    width = 64
    shown = "\n".join(ln[i:i + width] for ln in lines for i in range(0, len(ln) or 1, width))
    for prompt, ps2 in [(PROMPT, "> "), ("dev@MacBook-Pro repo % ", "heredoc> "), ("bash-5.2$ ", "> "), ("", "> ")]:
        screen = (f"New Terminal Output:\n\n{prompt or '$ '}sed -n '1,6p' pkg/col.py\n{shown}\n{prompt or '$ '}cat > "
                  f"/tmp/fix.py << 'EOF'\n{ps2}def build(root, strict=False):\n{ps2}    return root\n{ps2}EOF\n{prompt}")
        screen_tags(tagger, screen)


def screen_tags(tagger, screen: str) -> None:
    """The calls, definitions and a joined wrap of the screen in the test above, whatever kind of span holds it."""
    for kind in (K.TEXT, K.TOOL_OUTPUT, K.FILE_VIEW):
        ivs = tagger.intervals(screen, SpanInfo(kind=kind))
        covered(screen, ivs)
        assert tag_of(screen, ivs, "sed -n").block_type == B.TOOL_CALL, kind
        assert tag_of(screen, ivs, "cat > /tmp").block_type == B.TOOL_CALL, kind
        assert tag_of(screen, ivs, "Column:").block_type == B.CLASS_DECLARATION, kind
        assert tag_of(screen, ivs, "size(self)").block_type == B.FUNCTION_SIGNATURE, kind  # after the wrapped line
        assert tag_of(screen, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE, kind
        rest = screen.index("supported by")  # the wrapped part goes with the line it was cut from
        assert tag_at(ivs, rest).block_id == tag_of(screen, ivs, "raise ValueError").block_id


def test_powershell_screen_with_a_here_string(tagger):
    """A PowerShell terminal's screen (CRLF, ``PS C:\\...> `` prompts): the prompt lines are calls, the file after
    ``Get-Content`` is code, the here-string typed behind ``>> `` is code in the language of the path it is saved to."""
    ps = "PS C:\\Users\\dev\\repo> "
    screen = (f"{ps}Get-Content src\\pkg\\mod.py | Select-Object -First 30\n{CODE[:CODE.index('class TextWrapper') + 300]}\n{ps}@'\n"
              + "".join(">> " + ln + "\n" for ln in NEW_DEF.split("\n"))
              + f">> '@ | Set-Content tmp\\new_def.py\n{ps}python -m pytest tests\\test_mod.py\n").replace("\n", "\r\n")
    for kind in (K.TEXT, K.TOOL_OUTPUT):
        ivs = tagger.intervals(screen, SpanInfo(kind=kind))
        covered(screen, ivs)
        assert tag_of(screen, ivs, "Get-Content").block_type == B.TOOL_CALL, kind
        assert tag_of(screen, ivs, "python -m pytest").block_type == B.TOOL_CALL, kind
        assert tag_of(screen, ivs, "class TextWrapper").block_type == B.CLASS_DECLARATION, kind
        assert tag_of(screen, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE, kind

def test_terminal_transcript_inside_a_fence(tagger):
    """A transcript pasted in a ``console`` fence: the fence holds, its prompt line is the call and the log after it
    a log."""
    log, error, plain = LOGS["pytest"]
    text = f"The suite fails:\n\n```console\n{PROMPT}python -m pytest -x tests/\n{log}{PROMPT}\n```\n\nAny idea why?"
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    covered(text, ivs)
    assert tag_of(text, ivs, "python -m pytest").block_type == B.TOOL_CALL
    assert tag_of(text, ivs, error).block_type == B.ERROR
    assert tag_of(text, ivs, plain).block_type == B.LOG


def test_terminus_keystrokes_are_a_call_with_their_heredoc_code(tagger):
    reply = json.dumps({"analysis": "The helper is wrong.", "plan": "Rewrite it.", "commands": [
        {"keystrokes": f"cat > pkg/mod.py << 'EOF'\n{NEW_DEF}\nEOF\n", "duration": 0.1},
        {"keystrokes": "python -m pytest -x tests/\n", "duration": 5.0}], "task_complete": False}, indent=2)
    assert tool_call_spans(reply)
    ivs = tagger.intervals(reply, SpanInfo(kind=K.TEXT))
    covered(reply, ivs)
    assert tag_of(reply, ivs, '"commands"').block_type == B.TOOL_CALL
    assert tag_of(reply, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(reply, ivs, "cat > pkg").block_type == B.TOOL_CALL
    assert not tool_call_spans(json.dumps({"name": "demo", "commands": ["build", "test"]}))  # a config, not a call


def test_calls_written_as_yaml_or_as_a_notebook_cell_carry_code(tagger):
    """A call in YAML (an MCP client's log) carries the new definition in a block scalar, a notebook cell sent as
    nbformat JSON carries it one line per item of ``source``: code in the language of the path named, the keys and
    a command's block stay call lines."""
    block = "".join("    " + line if line.strip() else line for line in NEW_DEF.splitlines(keepends=True))
    yaml_call = f"tool: replace_symbol\nargs:\n  path: pkg/mod.py\n  code: |\n{block}\n  dry_run: false\n"
    cell = json.dumps({"cell_type": "code", "metadata": {},
                       "source": ["%%writefile pkg/mod.py\n", *NEW_DEF.splitlines(keepends=True)]}, indent=1)
    for call in (yaml_call, cell):
        ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
        covered(call, ivs)
        assert tag_of(call, ivs, "build(root, strict").block_type == B.FUNCTION_SIGNATURE, call
        body = next(line.strip().strip('",').removesuffix("\\n") for line in NEW_DEF.splitlines()[1:] if line.strip())
        assert tag_of(call, ivs, body).block_type not in {B.TOOL_CALL, B.TEXT}, body
    ivs = tagger.intervals(yaml_call, SpanInfo(kind=K.TOOL_CALL))
    for key in ("tool:", "path:", "dry_run:"):
        assert tag_of(yaml_call, ivs, key).block_type == B.TOOL_CALL, key
    shell = "tool: shell\nargs:\n  cmd: |\n    cd pkg\n    python -m pytest -x tests/\n"
    ivs = tagger.intervals(shell, SpanInfo(kind=K.TOOL_CALL))
    assert {tag_at(ivs, k).block_type for k in range(len(shell)) if not shell[k].isspace()} == {B.TOOL_CALL}


def test_org_mode_blocks_and_results(tagger):
    """An Emacs org-mode agent (gptel, org-babel): a ``#+begin_src sh`` block is a call, a tangled source block is
    code, short results behind ``: `` and long ones in ``#+begin_example`` are read by content."""
    call = "*** Reading the helper\n#+begin_src sh :results output\nsed -n '1,20p' pkg/mod.py\n#+end_src"
    assert tool_call_spans(call)
    ivs = tagger.intervals(call, SpanInfo(kind=K.TEXT))
    assert tag_of(call, ivs, "sed -n").block_type == B.TOOL_CALL
    assert tag_of(call, ivs, "Reading").block_type == B.TEXT
    edit = f"*** New definition\n#+begin_src python :tangle pkg/mod.py\n{NEW_DEF}\n#+end_src"
    ivs = tagger.intervals(edit, SpanInfo(kind=K.TEXT))
    assert tag_of(edit, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE
    short = "#+RESULTS:\n" + "\n".join(": " + ln if ln else ":" for ln in NEW_DEF.split("\n"))
    ivs = tagger.intervals(short, SpanInfo(kind=K.TEXT))
    covered(short, ivs)
    assert tag_of(short, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(short, ivs, "return os.path").block_type == B.FUNCTION_BODY
    log = f"#+RESULTS:\n#+begin_example\n{LOGS['pytest'][0]}#+end_example"
    ivs = tagger.intervals(log, SpanInfo(kind=K.TEXT))
    assert tag_of(log, ivs, "E       assert").block_type == B.ERROR
    assert tag_of(log, ivs, "collected 3").block_type == B.LOG


def test_test_log_in_a_plain_fence_is_a_log(tagger):
    """A log pasted in a fence without a language (a user's message, Goose's results) is a log, not code."""
    for runner in ("pytest", "jest", "go"):
        text, error, plain = LOGS[runner]
        fenced = f"The tests fail:\n\n```\n{text}```\n"
        ivs = tagger.intervals(fenced, SpanInfo(kind=K.TEXT))
        assert tag_of(fenced, ivs, error).block_type == B.ERROR, runner
        assert tag_of(fenced, ivs, plain).block_type == B.LOG, runner


def test_html_escaped_view_tags_like_the_plain_one(tagger):
    """A view escaped as HTML (quotes too) gets, char for char, the tags of the same view shown plain."""
    plain = f"```python\n{CODE}```\n"
    page = f'<div class="tool-result"><pre><code class="language-python">{html.escape(CODE)}</code></pre></div>'
    a, b = tagger.intervals(plain, SpanInfo(kind=K.TOOL_OUTPUT)), tagger.intervals(page, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(page, b)
    assert tag_of(page, b, "&quot;&quot;&quot;").block_type == B.DOCSTRING
    for name in ("class TextWrapper", "def __init__", "def _munge_whitespace"):
        assert tag_of(page, b, name).block_type == tag_of(plain, a, name).block_type, name
    line = "        self.width = width"
    same_tags(plain, a, plain.index(line), page, b, page.index(line), len(line))


def _panel(title: str, rows: list[str], width: int = 100) -> str:
    """``rows`` in a rich ``Panel`` (box-drawn, the right border padded out to ``width``)."""
    inner = width - 4
    top = "\u256d\u2500 " + title + " " + "\u2500" * (inner - len(title) - 1) + "\u256e"
    body = ["\u2502 " + row.ljust(inner) + " \u2502" for row in rows]
    return "\n".join([top, *body, "\u2570" + "\u2500" * (inner + 2) + "\u256f"])


@pytest.mark.parametrize("frame", ["panel", "compose", "stamp", "stamp_bracket"])
def test_views_behind_a_frame_are_read_inside_it(tagger, frame):
    """A view drawn inside a frame: a rich panel (``│ `` before each row, the padding and `` │`` after it), a
    ``docker compose logs`` label (``sandbox-1  | ``), a CI log's timestamp: every definition is tagged as one, the
    frame's chars are NONE and a signature's right border is not pinned with it."""
    lines = CODE.split("\n")
    if frame == "panel":
        text = _panel("textwrap.py", [f"{i:>5} \u2502 {ln}" for i, ln in enumerate(lines, 1)], width=120)
    elif frame == "compose":
        text = "\n".join(f"sandbox-1  | {ln}" for ln in ["+ cat textwrap.py", *lines])
    elif frame == "stamp":
        text = "\n".join(f"2026-11-30T14:{i // 60 % 60:02d}:{i % 60:02d}.{i * 7919 % 10**7:07d}Z {ln}"
                         for i, ln in enumerate(lines))
    else:
        text = "\n".join(f"[14:{i // 60 % 60:02d}:{i % 60:02d}] {ln}" for i, ln in enumerate(lines))
    for kind in (K.TOOL_OUTPUT, K.TEXT):
        ivs = tagger.intervals(text, SpanInfo(kind=kind, language="python" if kind == K.TOOL_OUTPUT else None))
        covered(text, ivs)
        check_python(text, CODE, ivs)
        sig = text.index("def _munge_whitespace(")
        assert tag_at(ivs, text.rindex("\n", 0, sig) + 2).block_type == B.NONE  # inside the frame's prefix
        if frame == "panel":
            assert tag_at(ivs, text.index("\u2502", sig) - 1).block_type == B.NONE  # the padding before the border
            assert tag_at(ivs, text.index("\u2502", sig)).block_type == B.NONE


def test_a_wrapped_numbered_line_is_joined(tagger):
    """A view whose display wrapped long lines (bat, a panel: the rest behind a blank gutter in the code column): the
    joined code holds each line whole, so a docstring cut by the wrap still closes where it does."""
    lines = CODE.split("\n")
    width = 30
    rows = [f"{i if k == 0 else '':>4} \u2502 {ln[k:k + width]}" for i, ln in enumerate(lines, 1)
            for k in range(0, max(len(ln), 1), width)]
    text = "\n".join(rows)
    got = numbered_rows(text)
    assert got is not None
    assert "".join(text[c:e] for _s, c, e in got if c >= 0) == CODE
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT, language="python"))
    covered(text, ivs)
    check_python(text, CODE, ivs)
    plain = tagger.intervals(CODE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    for needle in ("class TextWrapper", "def _munge_whitespace", "self.width = width"):
        assert tag_of(text, ivs, needle).block_type == tag_of(CODE, plain, needle).block_type, needle
    aside = numbered_rows("  1 \u2502 x = 1\n  2 \u2502 y = 2\n  \u2502 note\n  3 \u2502 z = 3\n")
    assert aside is not None and aside[2][1] == -1 and aside[1][2] == aside[2][0]  # not in the code column: no wrap


def test_frames_need_the_same_prefix_on_most_lines(tagger):
    """A label counts only when most lines carry the same one; a Markdown table or a single boxed line is no
    frame."""
    table = "name | type\n---- | ----\nroot | str\nstrict | bool\n"
    assert framed_rows(table) is None
    mixed = "web-1  | started\ndb-1   | ready\nweb-1  | GET /\ndb-1   | vacuum\nworker-1 | idle\n"
    assert framed_rows(mixed) is None
    assert framed_rows("\u2502 one boxed line \u2502\nand prose after it\nand more prose\n") is None
    rows = framed_rows(_panel("t", ["x = 1", "y = 2"]))
    assert rows is not None and [r[1] >= 0 for r in rows] == [False, True, True, False]
    assert [_panel("t", ["x = 1", "y = 2"])[c:ce] for _s, c, ce, _e in rows[1:3]] == ["x = 1", "y = 2"]


def test_quoted_blocks_are_read_inside_the_quote(tagger):
    """A quoted reply (``> `` before each line, an issue comment or an e-mail) is read by content inside the quote:
    code is code, prose stays prose; a doctest's ``>>>`` lines are no quote."""
    quoted = "> " + NEW_DEF.replace("\n", "\n> ") + "\n\nThis breaks when strict is set."
    ivs = tagger.intervals(quoted, SpanInfo(kind=K.TEXT))
    covered(quoted, ivs)
    assert tag_of(quoted, ivs, "build(root").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(quoted, ivs, "return os.path").block_type == B.FUNCTION_BODY
    prose = "> I tried the parser on an empty file.\n> It crashed with a KeyError.\n\nSame here."
    ivs = tagger.intervals(prose, SpanInfo(kind=K.TEXT))
    assert {t.block_type for _s, _e, t in ivs} <= {B.TEXT, B.NONE}
    assert prefixed_rows(">>> wrap('a b', 1)\n['a', 'b']\n>>> fill('a')\n'a'\n") is None


def test_pdb_listing_is_a_numbered_view(tagger):
    """pdb's ``list`` (debug-gym): the number, a breakpoint's ``B``, the current line's ``->``, a tab, the code; the
    code column starts after the tab, so top-level code stays top-level."""
    lines = CODE.split("\n")
    text = "(Pdb) l 1, 60\n" + "\n".join(
        f"{str(i).rjust(3):<4}{'B' if i == 3 else ' '}{'->' if i == 4 else '  '}\t{ln}"
        for i, ln in enumerate(lines[:60], 1)) + "\n(Pdb) "
    rows = numbered_rows(text)
    assert rows is not None
    assert [text[c:e] for _s, c, e in rows[1:5]] == [ln + "\n" for ln in lines[:4]]
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT, language="python"))
    covered(text, ivs)
    plain = tagger.intervals(CODE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    for needle in ("import re", "__all__", "_whitespace = "):
        assert tag_of(text, ivs, needle).block_type == tag_of(CODE, plain, needle).block_type, needle


def test_the_language_of_a_view_ending_inside_a_docstring_is_found(tagger):
    """A view cut inside a long docstring, its language unnamed (the call names no path): the grammar is tried with
    the string closed after the view, as the parse itself does, so the guess does not fail on the open string."""
    start = SOURCE.index("class TextWrapper")
    doc = SOURCE.index('"""', start)
    view = SOURCE[:SOURCE.index("\n", SOURCE.index("\n", doc) + 400)] + "\n"
    assert view.count('"""') % 2 == 1
    ivs = tagger.intervals(view, SpanInfo(kind=K.TOOL_OUTPUT))
    assert tag_of(view, ivs, "Object for wrapping").block_type == B.DOCSTRING
    assert tag_of(view, ivs, "__all__").block_type == B.GLOBAL


def test_a_markdown_indented_block_is_read_without_its_margin(tagger):
    """A chat exported to Markdown shows results as indented code blocks (four spaces, no fence) under a label: the
    margin is a frame, so a file's module-level names stay module-level and a test log's error lines are errors. A
    block whose margin holds no top-level line (a method shown alone) keeps its indent."""
    indent = "\n".join(("    " + ln) if ln else "" for ln in CODE.split("\n"))
    text = f"Contents of `textwrap.py`:\n\n{indent}\n"
    assert line_label("Contents of `textwrap.py`:\n") == PROSE_LINE
    plain = tagger.intervals(CODE, SpanInfo(kind=K.FILE_VIEW, language="python"))
    for kind, lang in ((K.FILE_VIEW, "python"), (K.TOOL_OUTPUT, None)):
        ivs = tagger.intervals(text, SpanInfo(kind=kind, language=lang))
        covered(text, ivs)
        check_python(text, CODE, ivs)
        assert tag_of(text, ivs, "Contents of").block_type == B.TEXT
        for needle in ("__all__", "_whitespace = ", "Text wrapping and filling"):
            assert tag_of(text, ivs, needle).block_type == tag_of(CODE, plain, needle).block_type, needle
    log, error, _head = LOGS["pytest"]
    shown = "Output:\n\n" + "\n".join("    " + ln if ln else "" for ln in log.split("\n"))
    ivs = tagger.intervals(shown, SpanInfo(kind=K.TEST_LOG))
    assert tag_of(shown, ivs, error).block_type == B.ERROR
    assert indented_rows("Lines 10-14 of a.py:\n\n    def f(self):\n        return 1\n") is None


def test_a_docstring_holding_the_other_triple_quote_stays_one_region():
    """``'''`` inside a ``\"\"\"`` docstring (a mention, an example's data) neither opens nor closes it: the docstring's
    prose lines stay inside the code region."""
    code = ('"""Quote helpers; a value may hold \'\'\' or any other mark.\n\n'
            "The quoting keeps the text as it is and only adds the marks around it.\n"
            "Use it for every value that goes into the generated module source.\n"
            '"""\nimport os\n\n\ndef quote(s):\n    return os.fspath(s)\n')
    assert code_regions(code, 0, len(code)) == [(0, len(code))]


def test_a_markdown_call_carries_its_indented_code(tagger):
    """A call as a Markdown chat shows it (``**replace** `a.py` with:`` and the definition indented below): the first
    line is the call, the definition is code in the path's language, however its docstring reads (a line in it that
    looks like a call is not one)."""
    call = ('**replace** `pkg/helpers.py` with:\n\n    def indented(a, strict=False):\n        """Wrap a block.\n\n'
            "        Example:\n\n            tree = parse(text)\n            tree.pprint()\n\n"
            '        More words about the block and the stack it keeps.\n        """\n        return a\n')
    assert tool_call_spans("**read_file** `pkg/mod.py` lines 1-80") != []
    ivs = tagger.intervals(call, SpanInfo(kind=K.TOOL_CALL))
    covered(call, ivs)
    assert tag_of(call, ivs, "replace").block_type == B.TOOL_CALL
    assert tag_of(call, ivs, "indented(a").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(call, ivs, "More words").block_type == B.DOCSTRING
    assert tag_of(call, ivs, "return a").block_type == B.FUNCTION_BODY


def test_a_view_from_deep_in_a_method_reopens_every_scope(tagger):
    """A view that starts three levels into a method, where the level between shows only a call and an item
    assignment (``cur_line.append(...)``, ``chunks[-1] = ...``): every level is reopened, so the next method's header
    is a signature."""
    start = next(i for i, ln in enumerate(LINES) if ln.startswith("                if hyphen > 0"))
    view = "".join(LINES[start:start + 30])
    assert re.search(r"^    def _wrap_chunks\(", view, re.M)
    ivs = tagger.intervals(view, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert tag_of(view, ivs, "_wrap_chunks(self").block_type == B.FUNCTION_SIGNATURE


def test_markup_lines_between_pieces_of_a_file_are_not_code(tagger):
    """A code-search tool's file context (moatless-tools: ``<span id='Foo.bar'>`` pieces in one bare fence): an element
    alone on its line, attributes in either quote, is neither code nor a break in it; each piece reads as it would
    alone (the class's docstring a docstring)."""
    text = ("<file_context>\npkg/mod.py\n```\n\n<span id='imports'>\nimport os\n\nLIMIT = 10\n</span>\n\n"
            "<span id='Foo'>\n\n\nclass Foo:\n    \"\"\"A foo.\"\"\"\n    ...\n</span>\n\n<span id='Foo.bar'>\n\n"
            "    def bar(self, x):\n        \"\"\"Bar it.\"\"\"\n        return os.path.join(x)\n</span>\n```\n"
            "</file_context>\n")
    assert line_label("<span id='Foo.bar'>\n") == LOG_LINE
    ivs = tagger.intervals(text, SpanInfo(kind=K.TEXT))
    covered(text, ivs)
    want = {"class Foo": B.CLASS_DECLARATION, "A foo.": B.DOCSTRING, "bar(self": B.FUNCTION_SIGNATURE,
            "Bar it.": B.DOCSTRING, "LIMIT": B.GLOBAL, "span id='Foo'": B.TEXT, "/span>\n\n<span id='Foo.bar": B.TEXT}
    for needle, block in want.items():
        assert tag_of(text, ivs, needle).block_type == block, needle


@pytest.mark.parametrize("head, anchor, skip, name", [
    ("### pkg/textwrap.py\n...\n", "                if hyphen > 0", 0, "_wrap_chunks(self"),
    ("...\n\n", "                if hyphen > 0", 0, "_wrap_chunks(self"),
    ("# filepath: pkg/textwrap.py\n", "chunks = self.wordsep_re.split(text)", 1, "_fix_sentence_endings(self"),
])
def test_a_path_comment_or_an_elision_line_does_not_close_a_view_s_scopes(tagger, head, anchor, skip, name):
    """A piece of a file opening on a comment at column 0 (Agentless's ``### path``, Copilot's ``# filepath:``) or on a
    ``...`` standing for the lines left out: neither ends the scopes the piece starts inside (Python ignores a
    comment's indent; no statement is followed by deeper code), so the next method's header is a signature (here
    after an ``else:`` that must reopen its ``if``). A stub body's ``...`` (code at its indent or less after it) is
    still code."""
    start = next(i for i, ln in enumerate(LINES) if anchor in ln) + skip
    view = head + "".join(LINES[start:start + 30])
    ivs = tagger.intervals(view, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert tag_of(view, ivs, name).block_type == B.FUNCTION_SIGNATURE
    if "..." in head:
        assert tag_of(view, ivs, "...").block_type == B.TEXT
    stub = "class Reader(Protocol):\n    def read(self) -> bytes:\n        ...\n\n    def close(self) -> None: ...\n"
    ivs = tagger.intervals(stub, SpanInfo(kind=K.FILE_VIEW, language="python"))
    assert tag_of(stub, ivs, "...").block_type == B.FUNCTION_BODY
    assert tag_of(stub, ivs, "close(self").block_type == B.FUNCTION_SIGNATURE


VIEW_CUT_INSIDE_A_CALL = '''\
    mapping = {
        name: ("cid" + str(n).zfill(5) if n else ".notdef")
        for n, name in enumerate(topDict.charset)
    }
    topDict.charset = [
        "cid" + str(n).zfill(5) if n else ".notdef" for n in range(len(topDict.charset))
    ]
    charStrings.charStrings = {
        mapping[name]: v for name, v in charStrings.charStrings.items()
    }

    topDict.ROS = ("Adobe", "Identity", 0)


def convertCFF2ToCFF(font, *, updatePostTable=True):
    if "CFF2" not in font:
        raise ValueError("Input font does not contain a CFF2 table.")
    cff = font["CFF2"].cff
    _convertCFF2ToCFF(cff, font)
    del font["CFF2"]
    table = font["CFF "] = newTable("CFF ")
    table.cff = cff

    if updatePostTable and "post" in font:
        # Only version supported for fonts with CFF table is 0x00030000 not 0x20000
        post = font["post"]
        if post.formatType == 2.0:
            post.formatType = 3.0


def main(args=None):
    """Convert CFF2 OTF font to CFF OTF font"""
    if args is None:
        import sys

        args = sys.argv[1:]

    import argparse

    parser = argparse.ArgumentParser(
        "fonttools cffLib.CFF2ToCFF",
        description="Convert a non-variable CFF2 font to CFF.",
    )
    parser.add_argument(
        "input", metavar="INPUT.ttf", help="Input OTF file with CFF table."
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUTPUT.ttf",
        default=None,
        help="Output instance OTF file (default: INPUT-CFF2.ttf).",
    )
    parser.add_argument(
        "--no-recalc-timestamp",
'''
VIEW_CUT_INSIDE_A_STRING = '''\
        self.value += self._funcs[3](p0, p1, p2, p3)


AreaPen = partial(GreenPen, func=1)


def printGreenPen(penName, funcs, file=sys.stdout, docstring=None):
    if docstring is not None:
        print('"""%s"""' % docstring)

    print(
        """from fontTools.pens.basePen import BasePen

class %s(BasePen):

    def __init__(self, glyphset=None):
'''


@pytest.mark.parametrize("piece", [VIEW_CUT_INSIDE_A_CALL, VIEW_CUT_INSIDE_A_STRING], ids=["call", "string"])
def test_view_cut_inside_a_statement(tagger, piece):
    """A view cut inside a call's arguments, or inside a string passed to a call after a one-line ``'\"\"\"%s\"\"\"'``
    (fontTools' cffLib and symfont, as the bench's views cut them): its definitions are still signatures and its
    statements bodies, not a string or an error swallowing them."""
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(piece, span)
        covered(piece, ivs)
        for m in re.finditer(r"^def (\w+)\(", piece, re.M):
            assert tag_at(ivs, m.start(1)).block_type == B.FUNCTION_SIGNATURE, (m.group(1), span.kind)
        for line in ("topDict.ROS", "del font", "self.value"):
            if line in piece:
                assert tag_of(piece, ivs, line).block_type == B.FUNCTION_BODY, line


def test_view_cut_inside_a_call_in_a_method(tagger):
    """A view that starts inside one method and ends inside a call of the next, after an operator (matplotlib's
    ``get_inner_bbox``, as smolagents printed it): the brackets close at the indent of the line that opened them, so
    the method's scopes stay open; closed at column 0 they ended the class first, the reading that put the view
    inside strings won, and the header was read as a docstring."""
    text = ("        return bbox\n\n    def get_inner_bbox(self, rows=0, cols=0):\n        \"\"\"\n"
            "        Return the inner bounding box.\n        \"\"\"\n        rows = np.atleast_1d(rows)\n\n"
            "        bbox = Bbox.from_extents(\n            (self.lefts[cols[0]].value() +\n"
            "                self.margins['left'][cols[0]].value() +\n")
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(text, span)
        covered(text, ivs)
        assert tag_of(text, ivs, "get_inner_bbox").block_type == B.FUNCTION_SIGNATURE, span.kind
        assert tag_of(text, ivs, "rows = np").block_type == B.FUNCTION_BODY, span.kind


def test_a_path_naming_a_test_runner_is_not_a_test_run(tagger):
    """``cat Lib/unittest/case.py`` shows a file; ``python -m unittest`` runs tests."""
    assert not looks_like_test_log(CODE, "cat Lib/unittest/case.py")
    assert not looks_like_test_log(CODE, "sed -n '1,80p' src/pytest/__init__.py")
    assert not looks_like_test_log(CODE, 'view_file(path="unittest/util.py")')
    for command in ("python -m unittest -v", "cd repo && pytest -x tests/", '{"command": "npm test"}', "go test ./..."):
        assert looks_like_test_log("", command), command


def test_observation_starting_on_a_docstrings_close(tagger):
    """A mini-swe-agent observation whose ``sed -n`` view starts on the line closing a docstring: ``</output>`` after
    the code is markup, so the reading that opens the string before the view wins over the one that reads everything
    after that line as a string (closed after ``</output>``), which parsed with no errors either."""
    code = ('    """\n    if enabled():\n        warn_present()\n\n\nclass Finder:\n'
            '    def find_spec(self, fullname, path, target=None):\n        if path is not None:\n'
            '            return None\n        method = getattr(self, "spec_for_" + fullname, lambda: None)\n'
            '        return method()\n\n    def spec_for_pip(self):\n        # the hook runs once\n'
            '        return None\n\n')
    text = f"<returncode>0</returncode>\n<output>\n{code}</output>"
    ivs = tagger.intervals(text, SpanInfo(kind=K.FILE_VIEW, language="python"))
    covered(text, ivs)
    assert tag_of(text, ivs, "find_spec(").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "spec_for_pip(").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "warn_present()").block_type != B.DOCSTRING


@pytest.mark.parametrize("module", ["pkgutil", "asyncio.tasks", "shutil", "ctypes", "importlib._bootstrap_external",
                                    "pydoc"])
def test_views_of_real_modules_cut_like_the_bench_keep_their_signatures(tagger, module):
    """Views of the bench's recall targets cut as its views are (from 3-25 lines above a ``def`` to 12-75 below:
    inside statements, strings and calls at both ends; ``scripts/tagger_views.py`` runs this over whole trees): the
    ``def`` is a signature in every one. The first two held a miss before views cut inside a call were read whole,
    the others before a module-level ``else:``/``elif`` reopened as an ``if`` and a view starting inside a string
    had the statement after the string's close read as the tail of one begun above it."""
    import importlib

    from codeagent.bench.build import find_functions, parse_source

    path = Path(importlib.import_module(module).__file__)
    sf = parse_source(path, path.name)
    targets = find_functions(sf)
    assert len(targets) >= 3
    for func in targets:
        for above, below in ((3, 12), (8, 40), (14, 75), (20, 12), (25, 40)):
            start = max(1, func.lineno - above)
            text = "\n".join(sf.lines[start - 1:func.lineno + below])
            ivs = tagger.intervals(text, SpanInfo(kind=K.FILE_VIEW, language="python"))
            tag = tag_at(ivs, text.index(f"def {func.name}(") + 4)
            assert tag.block_type == B.FUNCTION_SIGNATURE, (module, func.name, start, func.lineno + below, tag)


def test_view_cut_inside_a_headers_brackets(tagger):
    """A view whose last line is an ``if (`` header cut inside its brackets (pydoc's ``getdocloc``): closed, the
    header still needs its colon and a body, or the error takes the method with it."""
    piece = ("\n    docmodule = docclass = docroutine = fail\n\n"
             "    def getdocloc(self, object, basedir=sysconfig.get_path('stdlib')):\n"
             '        """Return the location of module docs or None"""\n\n'
             "        try:\n            file = inspect.getabsfile(object)\n        except TypeError:\n"
             "            file = '(built-in)'\n\n"
             '        docloc = os.environ.get("PYTHONDOCS", self.PYTHONDOCS)\n\n'
             "        basedir = os.path.normcase(basedir)\n        if (isinstance(object, type(os)) and\n"
             "            (object.__name__ in ('errno', 'exceptions', 'gc', 'imp',")
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(piece, span)
        covered(piece, ivs)
        assert tag_of(piece, ivs, "getdocloc(").block_type == B.FUNCTION_SIGNATURE, span.kind
        assert tag_of(piece, ivs, "basedir = os.path").block_type == B.FUNCTION_BODY, span.kind


VIEW_TO_A_DOCSTRING = '''        else:
            return args[:]              # don't modify caller's list

    def check_values(self, values, args):
        return (values, args)

    def parse_args(self, args=None, values=None):
        """
        parse_args(args : [string] = sys.argv[1:],
                   values : Values = None)
        -> (values : Values, args : [string])

        Parse the command-line options found in 'args' (default:
        sys.argv[1:]).  Any errors result in a call to 'error()', which
        by default prints the usage message to stderr and calls
        sys.exit() with an error message.'''
"""optparse's ``parse_args`` as a view cuts it: from inside a method to inside a docstring."""


@pytest.mark.parametrize("wrap", [
    lambda v: f"<\uff5ctool\u2581outputs\u2581begin\uff5c><\uff5ctool\u2581output\u2581begin\uff5c>{v}"
              "<\uff5ctool\u2581output\u2581end\uff5c>",
    lambda v: f"<|start_header_id|>ipython<|end_header_id|>\n\n{v}<|eot_id|>",
    lambda v: f'<tool_result name="read_file"><![CDATA[\n{v}\n]]></tool_result>',
], ids=["deepseek_template", "llama_template", "cdata"])
def test_a_view_behind_a_medium_reads_as_the_plain_view(tagger, wrap):
    """A view carried by another model's chat template (the result glued to its tokens) or a CDATA section: the
    definitions are signatures and the first line a body, as in the plain view; before, the tokens and marks read as
    code and the docstring the view ends in swallowed it."""
    expect_tags(tagger, wrap(VIEW_TO_A_DOCSTRING), {
        "check_values": B.FUNCTION_SIGNATURE, "parse_args": B.FUNCTION_SIGNATURE, "return (values": B.FUNCTION_BODY,
        "Parse the command-line": B.DOCSTRING})


def expect_tags(tagger: StructureTagger, text: str, expected: dict[str, BlockType], language: str = "python",
                kind: SegmentKind = K.TOOL_OUTPUT) -> None:
    """``text`` tagged as a tool's output naming no language and as a ``kind`` span naming ``language``: each needle
    has its block type."""
    for span in (SpanInfo(kind=K.TOOL_OUTPUT), SpanInfo(kind=kind, language=language)):
        ivs = tagger.intervals(text, span)
        covered(text, ivs)
        for needle, block_type in expected.items():
            assert tag_of(text, ivs, needle).block_type == block_type, (needle, span.language)


def test_ripgrep_json_rows_read_as_the_file(tagger):
    """``rg --json -C`` output (one JSON object per line, each line of the file in ``data.lines.text``) is the file's
    lines: its definitions are signatures (the fields between two lines stand for the line break, as in an array of
    line objects), and the rows around them are not code."""
    code = SOURCE[SOURCE.index("    def _fix_sentence_endings"):SOURCE.index("    def fill(")]
    rows = [json.dumps({"type": "begin", "data": {"path": {"text": "textwrap.py"}}})]
    for n, line in enumerate(code.split("\n"), 330):
        kind = "match" if line.lstrip().startswith("def ") else "context"
        rows.append(json.dumps({"type": kind, "data": {"path": {"text": "textwrap.py"}, "lines": {"text": line + "\n"},
                                                      "line_number": n, "absolute_offset": 40 * n, "submatches": []}}))
    rows.append(json.dumps({"type": "end", "data": {"path": {"text": "textwrap.py"}, "stats": {"matches": 5}}}))
    text = "\n".join(rows)
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    names = re.findall(r"^    def (\w+)\(", code, re.M)
    assert len(names) >= 4
    for name in names:
        assert tag_of(text, ivs, f"def {name}(").block_type == B.FUNCTION_SIGNATURE, name
    assert tag_of(text, ivs, '"begin"').block_type not in SIGNATURES | {B.FUNCTION_BODY}


VIEW_FROM_A_HEADERS_LAST_LINE = '''                   value in ('a', 'A', 'i', 'I', 'd', 'D'):
                    type = value.upper()
            (fp, retrlen) = self.ftpcache[key].retrfile(file, type)
            headers = ""
            return addinfourl(fp, headers, "ftp:" + url)
        except ftperrors() as exp:
            raise URLError(f'ftp error: {exp}') from exp

    def open_data(self, url, data=None):
        """Use "data" URL."""
        if not isinstance(url, str):
            raise URLError('data error: proxy support for data protocol currently not implemented')
        try:
            [type, data] = url.split(',', 1)
        except ValueError:
            raise OSError('data error', 'bad data URL')
'''
"""urllib.request's ``open_ftp`` as a view cuts it: its first line ends an ``if`` header continued from above."""
VIEW_TO_A_DECORATOR = '''    if value < peak:
        slope = 1 / (peak - start)
        return (value - start) * slope, slope
    slope = -1 / (end - peak)
    return (value - end) * slope, slope


def _evaluate(z, slopes, deltas, supports, columns=None):
    """Piecewise-linear values at z."""
    out = []
    for i in range(len(z)):
        out.append(deltas[i] * slopes[i])
    return out


@cython.locals(
    n=cython.int,
    slope=cython.double,
)'''
"""fontTools' avar mapping as a view cuts it: it ends on a decorator whose ``def`` is past the cut."""
VIEW_TO_A_DOCSTRINGS_OPEN = '''                axisValRec.RangeMaxValue = axisVal.get(
                    "rangeMaxValue", AXIS_VALUE_POSITIVE_INFINITY
                )
            else:
                raise ValueError("Can't determine format for AxisValue")

            axisValues.append(axisValRec)
    return axisRecords, axisValues


def _buildAxisValuesFormat4(locations, axes, ttFont):
    axisTagToIndex = {}
    for axisRecordIndex, axisDict in enumerate(axes):
        axisTagToIndex[axisDict["tag"]] = axisRecordIndex
    return axisTagToIndex


def buildMathTable(
    ttFont,
    constants=None,
    italicsCorrections=None,
):
    """'''
"""fontTools' otlLib builder as a view cuts it: it ends on the quote opening a docstring (the view's only one)."""


@pytest.mark.parametrize("piece", [VIEW_FROM_A_HEADERS_LAST_LINE, VIEW_TO_A_DECORATOR, VIEW_TO_A_DOCSTRINGS_OPEN],
                         ids=["header_tail", "decorator", "docstring_open"])
def test_views_cut_at_a_statements_edge(tagger, piece):
    """A view whose first line ends a compound header begun above it, or that ends on a decorator whose ``def`` is
    cut off, or on the quote opening a docstring: every ``def`` is a signature and the lines under it its body. The
    header's tail was an error, the lone decorator one too; the lone quote read as a string from the view's start to
    it (a tie of no errors with the string closed after it)."""
    for span in (SpanInfo(kind=K.FILE_VIEW, language="python"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(piece, span)
        covered(piece, ivs)
        names = re.findall(r"^[ \t]*def (\w+)\(", piece, re.M)
        for name in names:
            assert tag_of(piece, ivs, f"def {name}(").block_type == B.FUNCTION_SIGNATURE, (name, span.kind)
        body = {"header_tail": "raise URLError('data", "decorator": "out.append", "docstring_open": "axisTagToIndex["}
        line = next(v for k, v in body.items() if v in piece)
        assert tag_of(piece, ivs, line).block_type == B.FUNCTION_BODY, (line, span.kind)


def test_a_vim_screen_reads_as_the_file_it_shows(tagger):
    """vim's screen of a file shorter than the window: ``~`` on each line past the end and the message and ruler
    under them are no code, so a view ending inside a dict literal is closed as the plain view is."""
    code = ("        output.write(s)\n\ndef writedoc(thing, forceload=0):\n"
            '    """Write HTML documentation to a file in the current directory."""\n'
            "    object, name = resolve(thing, forceload)\n    print('wrote', name + '.html')\n\n"
            "def writedocs(dir, pkgpath='', done=None):\n    if done is None: done = {}\n    return done\n\n"
            "class Helper:\n    keywords = {\n        'False': '',\n        'and': 'BOOLEAN',")
    text = code + "\n~\n~\n~\n" + '"pydoc.py" 1881L, 3519B' + " " * 20 + "1791,1           Top"
    expect_tags(tagger, text, {"writedoc(": B.FUNCTION_SIGNATURE, "writedocs(": B.FUNCTION_SIGNATURE,
                                      "Helper": B.CLASS_DECLARATION, "object, name": B.FUNCTION_BODY})


JS_FROM_A_METHOD_TO_A_METHOD = """    await this.npm.config.save(where)
  }

  async get (keys) {
    if (!keys.length) {
      return this.list()
    }
    const out = []
    for (const key of keys) {
      const val = this.npm.config.get(key)
      if (isPrivate(key, val)) {
        throw new Error(`The ${key} option is protected`)
      }
      out.push(`${key}=${val}`)
    }
    return out.join('\\n')
  }

  async list () {
    const msg = []
    for (const [where, { data, source }] of this.npm.config.data.entries()) {
      if (where === 'default') {"""
"""A class's methods as a view cuts them: from inside one method to inside another, no semicolons."""
JS_FROM_A_DOC_COMMENT = """     * Often referred to as the Network Address.
     * @returns {Address4}
     */
    startAddress() {
        return Address4.fromBigInt(this._startAddress());
    }
    /**
     * The first host address in the range given by this address's subnet
     * @returns {Address4}
     */
    startAddressExclusive() {
        const adjust = BigInt('1');
        return Address4.fromBigInt(this._startAddress() + adjust);
    }
    /**
     * The last address in the range given by this address' subnet"""
"""Methods as a view cuts them: from inside a JSDoc comment to inside the next one."""
JS_FIELDS_AND_METHODS = """  static usage = ['<text>']
  static params = ['long']

  async exec (args) {
    if (!args.length) {
      throw this.usageError()
    }

    const docPath = path.resolve(this.npm.npmRoot, 'docs/content')
    let files = await glob(`${globify(docPath)}/*/*.md`)
    files = files.sort((a, b) => a.localeCompare(b, 'en'))
    const data = await this.readFiles(files)
    if (!data.trim()) {"""
"""A class body as a view cuts it: its fields, then a method cut inside an ``if``."""
JS_A_CLASS_CLOSED = """    symlink;
    syscall = 'symlink';
    code = 'TAR_SYMLINK_ERROR';
    constructor(symlink, path) {
        super('TAR_SYMLINK_ERROR: Cannot extract through symbolic link');
        this.symlink = symlink;
        this.path = path;
    }
    get name() {
        return 'SymlinkError';
    }
}
"""
"""The end of a class as a view shows it: fields, a constructor and a getter, then the class's close."""


@pytest.mark.parametrize("piece", [JS_FROM_A_METHOD_TO_A_METHOD, JS_FROM_A_DOC_COMMENT, JS_FIELDS_AND_METHODS,
                                   JS_A_CLASS_CLOSED], ids=["method_to_method", "doc_comment", "fields", "class_end"])
def test_javascript_views_cut_inside_a_class_keep_their_methods(tagger, piece):
    """A JavaScript view cut inside a class (npm's sources, as the bench cuts views): every method header is a
    signature and the statements under it its body, whether or not the path named the language. Before, a method
    cut open at the view's end, a class the view starts inside without closing, a JSDoc comment the view starts in,
    or one closing brace read as a function's, left the headers as calls (0 to 60% of methods read, by npm's files)."""
    for span in (SpanInfo(kind=K.FILE_VIEW, language="javascript"), SpanInfo(kind=K.TOOL_OUTPUT)):
        ivs = tagger.intervals(piece, span)
        covered(piece, ivs)
        names = re.findall(r"^[ \t]+(?:static\s+)?(?:async\s+)?(?:get\s+)?(?!(?:if|for)\b)(\w+)\s*\([^)\n]*\)\s*\{$",
                           piece, re.M)
        assert names
        for name in names:
            assert tag_of(piece, ivs, f"{name} (" if f"{name} (" in piece else f"{name}(").block_type \
                == B.FUNCTION_SIGNATURE, (name, span.language)
        body = next(line for line in ("return this.list()", "const adjust", "throw this.usageError", "this.symlink =")
                    if line in piece)
        assert tag_of(piece, ivs, body).block_type == B.FUNCTION_BODY, (body, span.language)


@pytest.mark.parametrize("wrap", [
    lambda args: f"```json\n{args}\n```",
    lambda args: ("<\uff5ctool\u2581calls\u2581begin\uff5c><\uff5ctool\u2581call\u2581begin\uff5c>function"
                  f"<\uff5ctool\u2581sep\uff5c>replace\n```json\n{args}\n```<\uff5ctool\u2581call\u2581end\uff5c>"),
    lambda args: f"Thought: the check is missing.\nAction:\n```json\n{{\"action\": \"replace\", \"input\": {args}}}\n```",
], ids=["fence", "deepseek", "react"])
def test_a_calls_json_fence_holds_its_arguments(tagger, wrap):
    """A call whose arguments sit in a ```` ```json ```` fence (DeepSeek's template, a ReAct action): the JSON string
    holding a definition is decoded and read as code, header and body, as without the fence; before, the fence was
    read as code in a language with no grammar and the whole escaped string was one signature line."""
    code = ('def asksaveasfile(mode="w", **options):\n    if not mode:\n        raise ValueError("mode is required")\n'
            "    return open(mode)\n")
    text = wrap(json.dumps({"path": "tkinter/filedialog.py", "code": code}))
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_CALL))
    covered(text, ivs)
    assert tag_of(text, ivs, "asksaveasfile").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "raise ValueError").block_type == B.FUNCTION_BODY
    assert tag_of(text, ivs, '"path"').block_type == B.TOOL_CALL


@pytest.mark.parametrize("shape", ["dict", "object", "double_quoted"])
def test_a_printed_dict_or_object_holding_a_file(tagger, shape):
    """A tool's result printed by Python (a dict's ``repr``, a dataclass's: ``Observation(content='...', exit=0)``):
    the string value holding the file, its line breaks escaped, is read as the file, as a JSON string is; before, the
    whole result was one line of text (no definition found)."""
    code = SOURCE[SOURCE.index("    def _split_chunks"):SOURCE.index("    def fill(")]
    content = code.replace("'", '"') if shape != "double_quoted" else code + "    # it's\n"
    text = (repr({"path": "textwrap.py", "content": content, "lines": 40}) if shape != "object"
            else f"Observation(content={content!r}, exit_code=0)")
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    for name in ("_split_chunks", "wrap"):
        assert tag_of(text, ivs, f"def {name}(").block_type == B.FUNCTION_SIGNATURE, name
    assert tag_of(text, ivs, "'path'" if shape != "object" else "exit_code").block_type not in SIGNATURES


@pytest.mark.parametrize("medium", ["escaped_element", "no_break_spaces"])
def test_escaped_or_web_copied_views_read_as_the_plain_view(tagger, medium):
    """A view inside one element holding escaped text (``<result>...&lt;...&quot;...</result>``, the first line glued
    to the tag), or copied from a web page with its indentation in no-break spaces: the definitions are signatures
    and the lines under them bodies, as in the plain view."""
    import shutil

    if medium == "escaped_element":
        view = "".join(LINES[150:236])  # inside `_munge_whitespace` to inside `_handle_long_word`
        text = f"<result>{html.escape(view)}</result>"
    else:
        view = "".join(Path(shutil.__file__).read_text().splitlines(True)[1357:1406])  # into `chown` and out
        text = "".join("\u00a0" * (len(ln) - len(ln.lstrip(" "))) + ln.lstrip(" ") for ln in view.splitlines(True))
    ivs = tagger.intervals(text, SpanInfo(kind=K.TOOL_OUTPUT))
    covered(text, ivs)
    names = re.findall(r"def (\w+)\(", view)
    assert len(names) >= 2
    for name in names:
        assert tag_of(text, ivs, f"def {name}(").block_type == B.FUNCTION_SIGNATURE, (medium, name)



GO_TEST_AFTER_A_TABLE = """\
}

func TestParseHTTPVersion(t *testing.T) {
	for _, tt := range parseHTTPVersionTests {
		major, minor, ok := ParseHTTPVersion(tt.vers)
		if ok != tt.ok || major != tt.major {
			t.Errorf("failed to parse %q", tt.vers)
		}
	}
}
"""
"""The end of a Go test file's table of cases, then the test reading it (net/http's request_test.go)."""


@pytest.mark.parametrize("rows", [
    "".join(f'\t{{"HTTP/{i}.{j}", {i}, {j}, {str(i < 2).lower()}}},\n' for i in range(3) for j in range(3)),
    '\t"Accept": "text/html",\n\t"Host":   "example.com",\n' * 2,
], ids=["slice", "map"])
def test_go_views_cut_inside_a_table_of_cases_keep_the_test(tagger, rows):
    """A Go view starting inside a composite literal (table-driven tests; Go's own sources, cut as the bench cuts
    views): the test after the table is a signature and its body, whether or not the path named the language.
    Before, the rows were read as a function's body and the test's header after their close as more of it (7 of 375
    views of net/http and strings)."""
    expect_tags(tagger, rows + GO_TEST_AFTER_A_TABLE,
                {"TestParseHTTPVersion": B.FUNCTION_SIGNATURE, "major, minor": B.FUNCTION_BODY}, "go", K.FILE_VIEW)



@pytest.mark.parametrize("line, view, language, label", [
    ("\tcase '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '-': // number",
     "func unquote(c byte) int {{\n\tswitch c {{\n{line}\n\t\treturn 1\n\t}}\n\treturn 0\n}}\n", "go", WEAK_LINE),
    ("    Escapes are 'a', 'b', 'f', 'n', 'r', 't', 'v', 'x', 'u', 'U' and '0' (octal) -> see below",
     'def unquote(c):\n    """Undo an escape.\n\n{line}\n    """\n    return 0\n', "python", WEAK_LINE),
], ids=["go", "python"])
def test_a_row_of_quoted_characters_is_read_at_once(line, view, language, label):
    """A line of quoted characters that is no sentence (Go's ``case '0', '1', ...`` in encoding/json's decoder, a
    docstring's list of escapes): the
    sentence pattern fails it without trying every way to split its quotes. Before, such a line took minutes (the
    backtracking doubles with each quote) and a view holding one hung the tagger. The alarm only stops a hang."""
    import signal

    def stop(signum, frame):
        raise TimeoutError(line)

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(20)
    try:
        assert line_label(line) == label
        text = view.format(line=line)
        for span in (SpanInfo(kind=K.FILE_VIEW, language=language), SpanInfo(kind=K.TOOL_OUTPUT)):
            ivs = StructureTagger().intervals(text, span)
            assert tag_of(text, ivs, "unquote").block_type == B.FUNCTION_SIGNATURE, span.language
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_search_rows_numbered_from_zero(tagger):
    """Rows numbered from 0 in the shape of ``grep -n -A1`` output (``0:code`` a hit, ``1-code`` context: a 0-based
    listing, ``nl -v0``): read as hits like any other. Before, a first row numbered 0 was taken for the next line of
    a hit on line -1, and the tagger raised IndexError on every span opening that way (found by fuzzing)."""
    text = ("0:def load(path):\n1-    with open(path) as f:\n2:        return f.read()\n3-\n4:def save(path, data):\n"
            "5-    pass\n")
    assert bare_grep_rows(text) is not None
    for span in (SpanInfo(kind=K.TOOL_OUTPUT), SpanInfo(kind=K.ISSUE)):
        ivs = tagger.intervals(text, span)
        covered(text, ivs)
        assert tag_of(text, ivs, "load").block_type == B.FUNCTION_SIGNATURE, span.kind
        assert tag_of(text, ivs, "save").block_type == B.FUNCTION_SIGNATURE, span.kind


TS_FROM_A_CALLS_ARGUMENTS = """\
      this.model.data,
      this._state,
      (s: string) => this.run_script(s),
      this_obj,
    )
  }

  get_records(property_name: string, index: boolean = true): unknown[] {
    return dict_to_records(this.model.data.property(property_name), index)
  }

  override disconnect_signals(): void {
    super.disconnect_signals()
  }
}
"""
"""A TypeScript class as a view cut inside a call's arguments shows it (panel's reactive_html.ts): the call's last
arguments and its close, the method's close, two more methods, the class's close."""


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_brace_views_cut_inside_a_calls_arguments_keep_the_methods_after(tagger, language):
    """A brace-language view starting inside a call's arguments: the ``)`` closing a call opened before the view
    is blanked with the arguments for the parse (``_brace_tail``), so the methods after it read as methods. Before,
    the stray ``)`` broke the parse and the first method's header read as a statement (JavaScript: the same code
    without its types)."""
    piece = TS_FROM_A_CALLS_ARGUMENTS
    if language == "javascript":
        piece = re.sub(r": (?:string|boolean|void|unknown\[\])", "", piece).replace("override ", "")
    ivs = tagger.intervals(piece, SpanInfo(kind=K.FILE_VIEW, language=language))
    covered(piece, ivs)
    assert tag_of(piece, ivs, "get_records").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(piece, ivs, "return dict_to_records").block_type == B.FUNCTION_BODY
    assert tag_of(piece, ivs, "disconnect_signals(").block_type == B.FUNCTION_SIGNATURE
