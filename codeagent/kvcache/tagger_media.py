"""Text that reached the agent through a medium that changed it: terminal colours, HTML escaping, a terminal
screen's hard wraps and continuation prompts. Each ``clean_*`` gives the text the tagger reads and, for each of its
chars (and its end), the index of the source char it came from, or None when the medium left no mark.

A removed piece of source (an escape sequence, a wrap's line break, a ``> `` prompt) goes with the char before it; a
piece replaced by other text (``&lt;`` by ``<``, ``<pre><code class="language-py">`` by a fence line) maps every char of
the replacement to the piece's start, so an interval of the clean text maps back onto whole source pieces.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from codeagent.kvcache.tagger_calls import closes_heredoc, heredoc_delimiter

Cleaned = tuple[str, list[int]]
"""The clean text and, for each of its chars plus its end, the source index."""


def _splice(text: str, edits: list[tuple[int, int, str]]) -> Cleaned:
    """``text`` with each source range ``[start, end)`` of ``edits`` (sorted, disjoint) replaced by its text, and the map
    back: a replacement's chars map to its range's start, a range replaced by nothing goes with the char before it."""
    pieces: list[str] = []
    back: list[int] = []
    pos = 0
    for start, end, new in edits:
        pieces.append(text[pos:start])
        back.extend(range(pos, start))
        pieces.append(new)
        back.extend([start] * len(new))
        pos = end
    pieces.append(text[pos:])
    back.extend(range(pos, len(text)))
    back.append(len(text))
    return "".join(pieces), back


def _rewrite(text: str, pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> Cleaned:
    """``text`` with every match of ``pattern`` replaced by ``replace(match)``, and the map back."""
    return _splice(text, [(m.start(), m.end(), replace(m)) for m in pattern.finditer(text)])


def compose(outer: list[int], inner: list[int]) -> list[int]:
    """The map back of a text cleaned twice: ``inner`` maps the second clean text onto the first, ``outer`` the
    first onto the source."""
    return [outer[i] for i in inner]


# ------------------------------------------------------------------------------ terminal colours
_ANSI = re.compile(r"\x1b\[[0-9;:?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")
"""A terminal escape: a colour or cursor sequence (CSI) or a title or hyperlink (OSC)."""


def clean_ansi(text: str) -> Cleaned | None:
    """``text`` without terminal escapes (``bat``, ``grep --color``, ``git diff --color``)."""
    if "\x1b" not in text:
        return None
    clean, back = _rewrite(text, _ANSI, lambda m: "")
    return (clean, back) if len(clean) < len(text) else None


# ------------------------------------------------------------------------------ HTML
_ENTITY = r"&(?:lt|gt|amp|quot|apos|nbsp|#\d{1,7}|#[xX][0-9a-fA-F]{1,6});"
_HTML = re.compile(
    r"(?P<open><pre\b[^>]*>[ \t]*(?:<code\b(?P<attrs>[^>]*)>)?)"
    r"|(?P<close>(?:</code>[ \t]*)?</pre>)"
    rf"|(?P<entity>{_ENTITY})"
    r"|(?P<inline></?(?:code|kbd|samp|tt)\b[^>]*>)"
    r"|(?P<block></?(?:div|p|br|li|ul|ol|h[1-6]|table|thead|tbody|tr|td|th|blockquote|section|article|details"
    r"|summary|header|footer|main|hr)\b[^>]*/?>)"
    r"|(?P<tag></?(?:span|b|i|em|strong|a|small|mark|sub|sup|u|s|del|ins|abbr|time|font)\b[^>]*>)",
    re.IGNORECASE,
)
_ENTITIES = re.compile(_ENTITY)
_OPENS_WITH_TAG = re.compile(r"\s*<")
_CODE_TAG = re.compile(r"<(?:pre|code)\b[^>]*>", re.IGNORECASE)
_LANG_CLASS = re.compile(r"""class=["'][^"']*?\b(?:language|lang)-([\w+#.-]+)""", re.IGNORECASE)


def _escapes(text: str) -> bool:
    """The text holds escaped text: at least two entities (in its first 200K chars)."""
    return len(_ENTITIES.findall(text, 0, 200_000)) >= 2


def _html_piece(m: re.Match[str]) -> str:
    if m.group("open") is not None:
        lang = _LANG_CLASS.search(m.group("attrs") or m.group("open"))
        return f"\n```{lang.group(1) if lang else ''}\n"
    if m.group("close") is not None:
        return "\n```\n"
    if m.group("entity") is not None:
        return html.unescape(m.group("entity"))
    if m.group("inline") is not None:
        return "`"
    return "\n" if m.group("block") is not None else ""


def clean_html(text: str) -> Cleaned | None:
    """A span written as HTML with its text escaped (a chat exported from a web UI, a page an agent fetched): the
    entities decoded, ``<pre>``/``<pre><code class="language-x">`` blocks as Markdown fences in that language,
    inline ``<code>`` as backticks, block elements as line breaks, other tags removed. Only a span that opens with a
    tag and holds a ``<pre>`` or ``<code>`` element and at least two escaped entities, or a code element naming its
    language (``class="language-py"``: a short file with one ``-&gt;`` or none), is read so: a file whose docstrings
    show HTML (``<div>this &lt;div&gt; ...``) stays as it is."""
    if not _OPENS_WITH_TAG.match(text) or not _CODE_TAG.search(text) or not (
            _escapes(text) or _LANG_CLASS.search(text)):
        return None
    return _rewrite(text, _HTML, _html_piece)


_XML = re.compile(rf"(?P<cdata><!\[CDATA\[|\]\]>)|(?P<entity>{_ENTITY})"
                  r"|(?P<tag><[?!/]?[A-Za-z_][\w:.-]*(?:\s[^<>]*)?/?>)")
_XML_DECL = re.compile(r"\s*<\?xml\b")


def _xml_piece(m: re.Match[str]) -> str:
    return html.unescape(m.group("entity")) if m.group("entity") is not None else ""


def clean_xml(text: str) -> Cleaned | None:
    """An XML document (a JUnit report, ``<?xml`` first) holding escaped text (two entities or a CDATA section): the
    tags and CDATA marks removed, the entities decoded, so a test log or a file inside reads as itself. Entities
    inside a CDATA section are its own text and stay. A document of markup alone (``pom.xml``) stays as it is."""
    if not _XML_DECL.match(text) or ("<![CDATA[" not in text and not _escapes(text)):
        return None
    edits: list[tuple[int, int, str]] = []
    in_cdata = False
    for m in _XML.finditer(text):
        if m.group("cdata") is not None:
            in_cdata = m.group("cdata") == "<![CDATA["
        elif in_cdata:
            continue
        edits.append((m.start(), m.end(), _xml_piece(m)))
    return _splice(text, edits)


_ESCAPED_ELEMENT = re.compile(r"\s*(<([A-Za-z_][\w:.-]*)(?:\s[^<>]*)?>)([^<]*)(</\2>)\s*\Z")


def clean_escaped_element(text: str) -> Cleaned | None:
    """One element holding escaped text and nothing else (``<result>def f(a, b):\\n    return a &lt; b</result>``, a
    tool protocol that escapes what it carries): its tags removed (the first line of what it holds often follows
    the opening tag on its line) and its entities decoded. An element holding other elements (a page) or text with
    fewer than two entities stays as it is."""
    m = _ESCAPED_ELEMENT.match(text) if text.lstrip()[:1] == "<" and "&" in text else None
    entities = list(_ENTITIES.finditer(text, m.start(3), m.end(3))) if m else []
    if len(entities) < 2:
        return None
    edits = [(e.start(), e.end(), html.unescape(e.group())) for e in entities]
    return _splice(text, [(m.start(1), m.end(1), ""), *edits, (m.start(4), m.end(4), "")])


_NBSP_INDENT = re.compile(r"^[ \t]*\u00a0", re.MULTILINE)
_NBSP = re.compile("\u00a0")


def clean_nbsp(text: str) -> Cleaned | None:
    """Text copied from a web page, its spaces turned into no-break spaces (``\\u00a0``, which no parser takes for
    indentation): each made a space again, when some line is indented with them."""
    if "\u00a0" not in text or not _NBSP_INDENT.search(text):
        return None
    return _rewrite(text, _NBSP, lambda m: " ")


_CDATA = re.compile(r"<!\[CDATA\[|\]\]>")


def clean_cdata(text: str) -> Cleaned | None:
    """A CDATA section outside an XML document (a tool's result as ``<result><![CDATA[ ... ]]></result>``): its marks
    removed, so its first and last lines read as they were written. Only a ``]]>`` closing an opened section is a
    mark (``a[b[0]]>1`` is Python)."""
    if "<![CDATA[" not in text:
        return None
    edits: list[tuple[int, int, str]] = []
    opened = False
    for m in _CDATA.finditer(text):
        if (m.group() == "<![CDATA[") != opened:
            edits.append((m.start(), m.end(), ""))
            opened = not opened
    return _splice(text, edits) if edits else None


# ------------------------------------------------------------------------------ another model's chat template
_TEMPLATE_TOKEN = (r"(?:<\|[A-Za-z_][\w.\-\u2581]{0,40}\|>|<\uff5c[^\uff5c\n<>]{1,60}\uff5c>|<(?:start|end)_of_turn>"
                   r"|</?s>|\[/?(?:INST|TOOL_CALLS|TOOL_RESULTS|AVAILABLE_TOOLS|SYSTEM_PROMPT|TOOL_CONTENT)\])")
_TEMPLATE_RUN = re.compile(rf"^{_TEMPLATE_TOKEN}+(?:[\w.\-]+{_TEMPLATE_TOKEN}*)?(?=\r?$)|^{_TEMPLATE_TOKEN}+"
                           rf"|{_TEMPLATE_TOKEN}+(?=\r?$)", re.MULTILINE)
"""Another model's chat-template tokens (ChatML's ``<|im_start|>``, Llama's ``<|eot_id|>``, DeepSeek's
``<｜tool▁output▁begin｜>``, Gemma's ``<end_of_turn>``, Mistral's ``[TOOL_RESULTS]``) that open or end a line: a prompt a
client rendered itself, where a tool's result follows its tokens on the same line. A line of tokens and a role
(``<|start_header_id|>ipython<|end_header_id|>``, ``<|im_start|>tool``) goes whole."""


_TEMPLATE_MARKS = ("|>", "\uff5c>", "_of_turn>", "<s>", "</s>", "INST]", "TOOL_", "_TOOLS]", "_PROMPT]")
"""What any template token holds: a text with none of them has none (checked before the pattern runs)."""


def clean_template(text: str) -> Cleaned | None:
    """A prompt rendered with another model's chat template (sent whole by a client): the template's tokens that
    open or end a line removed, so a file shown right after ``<｜tool▁output▁begin｜>`` starts on its own first line
    and one ending with ``<|eot_id|>`` ends on its last. Tokens inside a line (``"<|endoftext|>"`` in a tokenizer's
    source) stay."""
    if not any(mark in text for mark in _TEMPLATE_MARKS):
        return None
    clean, back = _rewrite(text, _TEMPLATE_RUN, lambda m: "")
    return (clean, back) if len(clean) < len(text) else None


# ------------------------------------------------------------------------------ a full-screen editor
_FILLER = re.compile(r"^~[ \t]*$", re.MULTILINE)
"""vi's and less's mark for a screen line past the end of the buffer."""
_RULER = r"\d+,\d+(?:-\d+)?[ \t]+(?:Top|Bot|All|\d+%)"
_EDITOR_STATUS = re.compile(rf'(?:"[^"\n]+"(?:[ \t]+\[[\w ]+\])*[ \t]+\d+L,[ \t]+\d+[BC]|--[ \t]*[A-Z]+[ \t]*--)?[ \t]*'
                            rf"(?:{_RULER})?[ \t]*\r?\Z")
"""The last line of vim's screen: its message (``"pkg/mod.py" 120L, 3456B``, ``-- INSERT --``) and ruler (``19,1
Top``)."""


def clean_filler(text: str) -> Cleaned | None:
    """An editor's screen (vim, ``less``): the ``~`` that marks each line past the end of the file removed (the line
    kept, blank), and vim's message and ruler under them; no language has a line of ``~`` alone, and parsed as code
    either is an error at the end of the file."""
    if "\n~" not in text:
        return None
    edits = [(m.start(), m.end(), "") for m in _FILLER.finditer(text)]
    if not edits:
        return None
    last = text.rfind("\n") + 1
    status = _EDITOR_STATUS.match(text, last)
    if last > edits[-1][1] and status and status.end() > last:
        edits.append((last, status.end(), ""))
    return _splice(text, edits)


# ------------------------------------------------------------------------------ a terminal screen
PROMPT = re.compile(
    r"^(?:(?:\([\w.\-]+\) )?[\w.\-]+@[\w.\-]+(?::[^\n#$]{0,200}[#$]| [\w.\-~/]{1,200} ?[%>#$]) "
    r"|(?:ba|z|k|da)?sh-\d+(?:\.\d+)*[#$] "
    r"|PS (?:[A-Za-z]:\\|/)[^\n>]{0,200}> "
    r"|[A-Za-z]:\\[^\n<>|\"]{0,200}>(?=\S|$)"
    r"|\u279c {1,2}[\w.\-~]+(?: git:\([^)\n]*\))?(?: \u2717)? )", re.MULTILINE)
"""A shell prompt opening a line of a terminal screen, one that names its user and host (bash's
``root@4c1d8e2a9b7f:/app# `` and ``(venv) dev@box:~/src$ ``, zsh's ``dev@MacBook-Pro repo % ``, fish's
``dev@box ~/repo> ``), its shell (``bash-5.2$ ``), its drive or folder (PowerShell's ``PS C:\\repo> ``,
``PS /home/dev> ``, cmd's ``C:\\repo>``) or oh-my-zsh's arrow (``\u279c  repo git:(main) \u2717 ``)."""
_MARKS = ("@", "sh-", "PS ", ":\\", "\u279c", "$ ")
"""What any prompt holds: a text with none of them is no screen (checked before the patterns run)."""
_BARE_PROMPT = re.compile(r"^\$ (?=\S)", re.MULTILINE)
"""A bare ``$ `` prompt: a screen's only when it heads the span."""
_HEAD = re.compile(r"\s*(?:[^\n]{0,80}:[ \t]*\r?\n\s*)?")
"""Blank lines and at most one short line ending with a colon (``Terminal:``) before the first prompt of a screen."""


def prompts(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each shell prompt opening a line of ``text``, when it reads as a terminal screen: any
    prompt :data:`PROMPT` matches, and bare ``$ `` ones when one heads the span, after blank lines and at most a
    short line ending with a colon (``$ make test`` opening a pasted transcript; a ``$`` line in a file's docstring is
    no prompt)."""
    if not any(mark in text for mark in _MARKS):
        return []
    found = [m.span() for m in PROMPT.finditer(text)]
    if "$ " in text and _BARE_PROMPT.match(text, _HEAD.match(text).end()):
        found = sorted(found + [m.span() for m in _BARE_PROMPT.finditer(text)])
    return found


_PS2 = re.compile(r"(?:>>|(?:heredoc|dquote|quote)?>) ?")
"""A continuation prompt before a line typed into an open heredoc: bash's ``> ``, zsh's ``heredoc> ``, PowerShell's
``>> ``."""
_MIN_WIDTH = 40


_LINE_OPENER = re.compile(r"(?:def|class|async|import|from|return|if|for|while|with|try|@|#|//|/\*|\}|\)|\])(?:\b|\s|$)")


_PADDED = re.compile(r"([^\w\s])\1\1$|\[\s*\d+%\]$")
"""The end of a line a program padded to the screen's width itself: a rule (pytest's ``=== FAILURES ===``), a
progress column (``[100%]``)."""


_ROW = re.compile(r"\d+[:\-]")
"""The opening of a listing's row: a search hit's or its context line's number (``464:``, ``465-``), a clock time."""


def _goes_on(full: str, line: str) -> bool:
    """Whether ``line`` is the rest of ``full``, a line as long as the screen is wide: a wrap cuts anywhere, so the
    rest starts at a character (a line of its own after a full-width one most often starts indented or with a
    keyword, a decorator, a comment, a closing bracket or a listing row's number), or ``full`` leaves a
    double-quoted string open; a line a program padded to the width (a rule, a progress column) is a line of its
    own."""
    if not line or _PADDED.search(full) or _ROW.match(line):
        return False
    if full.replace('"""', "").count('"') % 2:
        return True
    return not line[0].isspace() and not _LINE_OPENER.match(line)


def _wrap_width(lines: list[str]) -> int | None:
    """The width a screen hard-wrapped its lines at: the longest line's length, when two or more lines have it."""
    widths = [len(line) for line in lines]
    width = max(widths, default=0)
    return width if width >= _MIN_WIDTH and widths.count(width) >= 2 else None


def clean_terminal(text: str) -> Cleaned | None:
    """A terminal screen (a tmux capture: shell prompts open some of its lines): lines the terminal wrapped at its
    width joined back, and the ``> `` continuation prompts before the lines of a heredoc typed at a prompt removed,
    so a command's output and the code typed into it read as they were written."""
    starts = {start for start, _end in prompts(text)}
    if not starts:
        return None
    lines = text.split("\n")
    width = _wrap_width(lines)
    drop: list[tuple[int, int]] = []  # source ranges to remove
    pos = 0
    delimiter: str | None = None
    wrapped = False  # the line before was cut at the screen's width: this one goes on with it
    for i, line in enumerate(lines):
        end = pos + len(line)
        if delimiter is not None and not wrapped:
            m = _PS2.match(line)
            if m is None:
                delimiter = None
            else:
                drop.append((pos, pos + m.end()))
                if closes_heredoc(line[m.end():], delimiter):
                    delimiter = None
        if delimiter is None and not wrapped and pos in starts:
            delimiter = heredoc_delimiter(line)
        cr = line.endswith("\r")
        wrapped = (width is not None and len(line) == width and i + 1 < len(lines)
                   and _goes_on(line[:-1] if cr else line, lines[i + 1]))
        if wrapped:
            drop.append((end - cr, end + 1))  # the wrap's line break
        pos = end + 1
    return _splice(text, [(s, e, "") for s, e in drop]) if drop else None


def clean(text: str) -> Cleaned | None:
    """``text`` cleaned of every medium found in it (colours, then HTML or XML or one element's escaped text, CDATA
    marks, another model's template tokens, an editor's filler lines, a web page's no-break spaces, then a
    terminal's wraps), or None when none was."""
    out: Cleaned | None = None
    for step in (clean_ansi, clean_html, clean_xml, clean_escaped_element, clean_cdata, clean_template, clean_filler,
                 clean_nbsp, clean_terminal):
        got = step(out[0] if out else text)
        if got is not None:
            out = got if out is None else (got[0], compose(out[1], got[1]))
    return out
