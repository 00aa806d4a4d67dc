"""Text changed by the medium that carried it: colours, HTML escaping, a terminal screen's wraps and prompts. The
clean text is what the medium hid, and every clean char maps back onto the source char (or piece) it came from."""

from __future__ import annotations

import html
import textwrap
from pathlib import Path

from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tagger_media import (
    clean, clean_ansi, clean_cdata, clean_escaped_element, clean_filler, clean_html, clean_nbsp, clean_template,
    clean_terminal, clean_xml, prompts,
)
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo

SOURCE = Path(textwrap.__file__).read_text()
PROMPT = "root@4c1d8e2a9b7f:/app# "


def maps_back(text: str, got: tuple[str, list[int]]) -> None:
    """Every clean char that the medium did not make comes from the source char its map names."""
    plain, back = got
    assert len(back) == len(plain) + 1 and back[-1] == len(text)
    assert back == sorted(back)
    kept = sum(plain[i] == text[back[i]] for i in range(len(plain)))
    assert kept >= 0.8 * len(plain)


def test_colours_removed():
    text = "\x1b[32mdef\x1b[0m f(x):\n    return x\n"
    plain, back = clean_ansi(text)
    assert plain == "def f(x):\n    return x\n"
    assert text[back[plain.index("f(x)")]:].startswith("f(x)")
    assert clean_ansi("def f(x):\n") is None


def test_html_export_decoded_to_a_fence():
    code = SOURCE[:3000]
    text = ('<div class="tool-result"><div class="filename">lib/textwrap.py</div><pre><code class="language-py">'
            + html.escape(code) + "</code></pre></div>")
    got = clean_html(text)
    maps_back(text, got)
    plain, back = got
    assert "\n```py\n" + code + "\n```\n" in plain
    quote = plain.index('"""')  # a decoded quote maps back onto its whole entity
    assert text[back[quote]:back[quote + 1]] == "&quot;"
    assert "<pre" not in plain and "&quot;" not in plain


def test_html_left_alone_where_it_is_not_an_escaped_page():
    docstring = 'def f():\n    """<div>this &lt;div&gt; has no class</div>"""\n    return "&amp;"\n'
    assert clean_html(docstring) is None  # a file whose docstring shows HTML
    assert clean_html("<p>Use <code>read(path)</code> to read a file.</p>") is None  # no escaped text
    assert clean(docstring) is None


def test_xml_report_read_as_its_text():
    """A JUnit report (``pytest --junitxml``): tags and attributes gone, entities decoded, a CDATA section's text kept
    as it is (its ``&lt;`` is its own)."""
    log = "    def test_parse():\n>       assert parse('a<b') == {\"a\": 1}\nE       AssertionError\n"
    text = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" failures="1">'
            f'<testcase classname="tests.test_p" name="test_parse"><failure message="AssertionError: x &lt; y">'
            f'{html.escape(log)}</failure><system-out><![CDATA[a &lt; b\n]]></system-out></testcase></testsuite>'
            "</testsuites>")
    got = clean_xml(text)
    maps_back(text, got)
    plain, back = got
    assert plain == log + "a &lt; b\n"
    assert text[back[plain.index(">       assert")]:].startswith("&gt;       assert")
    assert clean_xml(log) is None and clean_xml("<p>x &lt; y</p>") is None  # no XML declaration: not a document
    pom = '<?xml version="1.0"?>\n<project>\n  <groupId>org.example</groupId>\n  <name>a &amp; b</name>\n</project>\n'
    assert clean_xml(pom) is None  # markup, one entity: a file of its own, not a carrier of text


def test_a_code_element_naming_its_language_is_read_with_one_entity_or_none():
    """A web UI's export of a short file: a ``<code class="language-py">`` element whose text escapes one ``->``
    (or nothing) is read as code in that language, its header a signature; a page with one entity and no such element
    stays as it is."""
    code = "import os\n\n\ndef flags(character: str) -> int:"
    for body in (html.escape(code), "import os\n\n\ndef flags(character):"):
        text = ('<div class="tool-result"><div class="filename">utils.py</div><pre><code class="language-py">'
                f"{body}</code></pre></div>")
        got = clean_html(text)
        assert got is not None and "```py\n" in got[0] and "def flags(character" in got[0]
        ivs = StructureTagger().intervals(text, SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
        at = text.index("flags(")
        assert next(t for s, e, t in ivs if s <= at < e).block_type == BlockType.FUNCTION_SIGNATURE
    assert clean_html("<div><pre>a -&gt; b</pre></div>") is None


def test_terminal_wraps_joined_and_continuation_prompts_removed():
    long = '    raise ValueError(f"Data type {dtype} not supported by the interchange protocol at all")'
    full = "    def _dtype_from_pandasdtype(self, dtype) -> tuple[DtypeKind, int, str]:"  # a line of its own
    assert len(full) < len(long)
    width = len(full)
    cut = [long[i:i + width] for i in range(0, len(long), width)]
    screen = "\n".join([PROMPT + "sed -n '1,40p' pkg/col.py", full, '        """Docs."""', *cut,
                        "        return x", PROMPT + "cat > /tmp/fix.py << 'EOF'", "> def f(x):", ">     return x",
                        "> EOF", PROMPT])
    got = clean_terminal(screen)
    maps_back(screen, got)
    plain = got[0]
    assert long in plain  # the wrapped line joined back
    assert full + '\n        """Docs."""' in plain  # a full-width line followed by an indented one stays a line
    assert "\ndef f(x):\n    return x\nEOF\n" in plain  # the heredoc as it was typed
    assert clean_terminal("def f(x):\n> not a prompt\n") is None  # no shell prompt: not a screen
    rule = "=" * 30 + " test session starts " + "=" * 29
    ruled = "\n".join([PROMPT + "pytest", rule, "collected 3 items", rule.replace("test session starts", "FAILURES  "
                       "       "), "E   assert 1 == 2", PROMPT])
    assert clean_terminal(ruled) is None  # pytest pads its rules to the screen's width: they are no wraps


def test_a_listing_row_after_a_line_as_long_as_the_longest_is_no_wrap():
    """A pasted ``grep -n -A`` transcript whose command is as long as its longest hit: two lines of the same greatest
    length read like a screen's width, but the rows after them open with their numbers: no line was wrapped, and
    the definition in the hits is a signature."""
    cmd = '$ grep -n -A5 -m1 -F "# The values can be deduced by examining" profile.py'
    hit = "464:    # These values can be deduced by examining the callees and callers"
    assert len(hit) == len(cmd)
    rows = [hit, "465-    # of each function.", "466-", "467-    def calibrate(self, m, verbose=0):",
            "468-        saved_bias = self.bias", "469-        return self._calibrate_inner(m, verbose)", "[exit 0]"]
    text = "\n".join([cmd, *rows])
    assert clean_terminal(text) is None
    tags = StructureTagger().intervals(text, SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    at = text.index("calibrate")
    assert next(t for s, e, t in tags if s <= at < e).block_type == BlockType.FUNCTION_SIGNATURE


PROMPTS = ["root@4c1d8e2a9b7f:/app# ", "(venv) dev@box:~/src$ ", "dev@MacBook-Pro repo % ", "dev@box ~/repo> ",
           "bash-5.2$ ", "sh-5.1# ", "PS C:\\Users\\dev\\repo> ", "PS /home/dev/repo> ", "C:\\Users\\dev\\repo>",
           "\u279c  repo git:(main) \u2717 ", "\u279c  repo "]


def test_prompts_of_every_shell_and_only_prompts():
    """A prompt opening a line is found whatever the shell (bash, zsh, fish, PowerShell, cmd, oh-my-zsh); a bare
    ``$ `` only when it heads the span; emails, matrix products and paths inside a line are no prompts."""
    for prompt in PROMPTS:
        text = f"Terminal:\n{prompt}cat pkg/mod.py\ndef f(x):\n    return x\n{prompt}"
        start = text.index(prompt)
        assert prompts(text) == [(start, start + len(prompt)), (text.rindex(prompt), len(text))], prompt
    assert prompts("$ make test\nok\n$ ls\n") == [(0, 2), (15, 17)]
    assert prompts("\n\nRun this:\n$ make test\n") == [(12, 14)]
    deep = "\"\"\"A tool.\n\n$ tool --help\n\"\"\"\n"  # an example in a docstring
    for text in (deep, "x@y # a matrix product\n", "jane@example.com said it costs $ 5\n", "see C:\\x> y\n",
                 "a\nb\nc\n$ make\n", "$100 is the price\n"):
        assert prompts(text) == [], text


def test_continuation_prompts_of_zsh_and_powershell_and_crlf_wraps():
    """zsh's ``heredoc> `` and PowerShell's ``>> `` go like bash's ``> ``; a screen with CRLF line ends joins its
    wraps without leaving the ``\\r`` inside the line."""
    zsh = "dev@MacBook-Pro repo % "
    screen = f"{zsh}cat > /tmp/f.py <<'EOF'\nheredoc> def f(x):\nheredoc>     return x\nheredoc> EOF\n{zsh}"
    got = clean_terminal(screen)
    maps_back(screen, got)
    assert "<<'EOF'\ndef f(x):\n    return x\nEOF\n" in got[0]
    ps = "PS C:\\repo> "
    screen = f"{ps}@'\n>> def f(x):\n>>     return x\n>> '@ | Set-Content tmp\\f.py\n{ps}"
    got = clean_terminal(screen)
    maps_back(screen, got)
    assert "@'\ndef f(x):\n    return x\n'@ | Set-Content" in got[0]
    long = '    raise ValueError(f"Data type {dtype} not supported by the interchange protocol at all")'
    cut = [long[i:i + 40] for i in range(0, len(long), 40)]
    screen = "\r\n".join([ps + "Get-Content pkg\\col.py", *cut, "    return x", ps])
    got = clean_terminal(screen)
    maps_back(screen, got)
    assert long + "\r\n    return x" in got[0]


def test_media_compose():
    inner = html.escape('def f(a, b):\n    return a < b\n')
    text = f"\x1b[1m<pre>{inner}</pre>\x1b[0m <p>x &amp; y</p>"
    plain, back = clean(text)
    assert "def f(a, b):\n    return a < b\n" in plain
    assert "\x1b" not in plain and "&lt;" not in plain
    assert text[back[plain.index("return")]:].startswith("return")


def test_cdata_marks_removed_outside_an_xml_document():
    code = "def f(x):\n    return x[0]\n"
    text = f"<result><![CDATA[\n{code}]]></result>\nif a[b[0]]>1: pass"
    got = clean_cdata(text)
    maps_back(text, got)
    assert got[0] == f"<result>\n{code}</result>\nif a[b[0]]>1: pass"  # a ``]]>`` closing no section stays
    assert clean_cdata("if a[b[0]]>1:\n    pass\n") is None  # no section opened: Python
    assert clean("x = a[b[0]]>1\n") is None


def test_template_tokens_at_a_lines_ends_removed_and_inside_it_kept():
    text = ("<|im_start|>tool\n    return x\n<|im_end|>\n"
            "<\uff5ctool\u2581output\u2581begin\uff5c>        else:\n"
            "            pass<\uff5ctool\u2581output\u2581end\uff5c>\n"
            'EOS = "<|endoftext|>"  # a tokenizer\'s source\n')
    got = clean_template(text)
    maps_back(text, got)
    plain = got[0]
    assert plain == ("\n    return x\n\n        else:\n            pass\n"
                     'EOS = "<|endoftext|>"  # a tokenizer\'s source\n')
    assert clean_template('EOS = "<|endoftext|>"\nBOS = "<s>"\n') is None
    assert clean_template("def f(x):\n    return [x]\n") is None


def test_editor_filler_and_status_line_removed():
    text = "def f(x):\n    return x\n~\n~\n" + '"a.py" 2L, 27B' + " " * 30 + "1,1           All"
    got = clean_filler(text)
    maps_back(text, got)
    assert got[0] == "def f(x):\n    return x\n\n\n"
    assert clean_filler("x = ~y\nz = 1\n") is None  # an operator, not filler
    assert clean_filler("a = 1\n~\nprint(a)")[0] == "a = 1\n\nprint(a)"  # no status line: the last line stays


def test_one_elements_escaped_text_decoded_and_its_tags_removed():
    code = 'def f(a, b):\n    return a < b and "x" != b\n'
    text = f"<result>{html.escape(code)}</result>"
    got = clean_escaped_element(text)
    maps_back(text, got)
    assert got[0] == code
    assert clean_escaped_element("<p>a &lt; b and <b>c</b> &amp; d</p>") is None  # other elements inside: a page
    assert clean_escaped_element("<result>a &lt; b</result>") is None  # one entity is no evidence
    assert clean_escaped_element("x = 1  # &lt; &gt;\n") is None  # not wrapped in an element


def test_no_break_spaces_indenting_lines_become_spaces():
    text = "def f(x):\n\u00a0\u00a0\u00a0\u00a0return\u00a0compute_the_value(x)\n"
    got = clean_nbsp(text)
    maps_back(text, got)
    assert got[0] == "def f(x):\n    return compute_the_value(x)\n"
    assert clean_nbsp("price:\u00a0100\u00a0€\n") is None  # no line indented with them: typography, kept
