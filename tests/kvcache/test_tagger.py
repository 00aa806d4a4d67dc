"""Structure tagger: tree-sitter tags for code, logs, prose, fences and numbered file views."""

from __future__ import annotations

import argparse
import ast
import bisect
import io
import json.decoder
import re
import textwrap
import tokenize
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codeagent.kvcache.tagger import StructureTagger, tags_for_offsets
from codeagent.kvcache.tags import NO_TAG, BlockType, SegmentKind, SpanInfo, TokenTag

B = BlockType
SIGNATURES = {B.FUNCTION_SIGNATURE, B.CLASS_DECLARATION}
Intervals = list[tuple[int, int, TokenTag]]


# ------------------------------------------------------------------------------ helpers
@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from codeagent.kvcache.models import resolve

    return AutoTokenizer.from_pretrained(str(resolve("smollm2")))


@pytest.fixture()
def tagger() -> StructureTagger:
    return StructureTagger()


def info(kind: SegmentKind, language: str | None = None) -> SpanInfo:
    return SpanInfo(kind=kind, language=language)


def check_cover(text: str, ivs: Intervals) -> None:
    """Intervals are non-empty, contiguous and cover the whole text."""
    assert ivs, "no intervals"
    assert ivs[0][0] == 0 and ivs[-1][1] == len(text)
    for (s1, e1, _), (s2, _e2, _) in zip(ivs, ivs[1:]):
        assert s1 < e1 == s2


def tag_at(ivs: Intervals, pos: int) -> TokenTag:
    for s, e, t in ivs:
        if s <= pos < e:
            return t
    raise AssertionError(f"position {pos} not covered")


def tag_of(text: str, ivs: Intervals, needle: str, nth: int = 0) -> TokenTag:
    """Tag at the first non-space char of the nth occurrence of ``needle``."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    while text[pos].isspace():
        pos += 1
    return tag_at(ivs, pos)


def line_starts(text: str) -> list[int]:
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def token_tags(tokenizer, tagger: StructureTagger, text: str, span: SpanInfo, ivs: Intervals | None = None):
    """(first non-space char, tag) of every non-blank token of ``text`` (from ``ivs`` when given)."""
    enc = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)
    offsets = enc["offset_mapping"]
    tags = tagger.tag(text, offsets, span) if ivs is None else tags_for_offsets(text, offsets, ivs)
    assert len(tags) == len(offsets)
    out = []
    for (s, e), t in zip(offsets, tags):
        chunk = text[s:e]
        if chunk.strip():
            out.append((s + len(chunk) - len(chunk.lstrip()), t))
    return out


# ------------------------------------------------------------------------------ Python on stdlib
STDLIB = [json.decoder.__file__, textwrap.__file__, argparse.__file__]


def _char(text: str, starts: list[int], lineno: int, col: int) -> int:
    """Char offset of an ast (lineno, utf-8 byte col) position."""
    line_start = starts[lineno - 1]
    line = text[line_start:text.find("\n", line_start)]
    return line_start + len(line.encode()[:col].decode())


def _header_lines(node: ast.AST) -> set[int]:
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    body_line = node.body[0].lineno
    return set(range(first, max(body_line, node.lineno + 1)))


@pytest.mark.parametrize("path", STDLIB, ids=lambda p: Path(p).name)
def test_python_stdlib_structure(tokenizer, tagger: StructureTagger, path: str) -> None:
    text = Path(path).read_text()
    span = info(SegmentKind.FILE_VIEW, "python")
    ivs = tagger.intervals(text, span)
    check_cover(text, ivs)
    starts = line_starts(text)
    toks = token_tags(tokenizer, tagger, text, span, ivs)
    token_lines = [bisect.bisect_right(starts, p) for p, _ in toks]  # 1-based line of each token
    tree = ast.parse(text)
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert len(defs) > 5
    header_lines: set[int] = set()
    for node in defs:
        header_lines |= _header_lines(node)
    name_blocks = {}
    for node in defs:
        at = _char(text, starts, node.lineno, node.col_offset)
        m = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)").match(text, at)
        assert m and m.group(1) == node.name
        expected = B.CLASS_DECLARATION if isinstance(node, ast.ClassDef) else B.FUNCTION_SIGNATURE
        name_tag = tag_at(ivs, m.start(1))
        assert name_tag.block_type == expected, (node.name, name_tag)
        assert tag_at(ivs, at).is_boundary, node.name
        name_blocks[node] = name_tag.block_id
        # body lines (not a nested definition's header): never signatures, deeper, same block
        nested = set()
        for inner in ast.walk(node):
            if inner is not node and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                nested |= set(range(inner.lineno, inner.end_lineno + 1))
        first_body = node.body[0].lineno
        lo = bisect.bisect_left(token_lines, first_body)
        hi = bisect.bisect_right(token_lines, node.end_lineno)
        for (pos, tag), line in zip(toks[lo:hi], token_lines[lo:hi]):
            if line in header_lines:
                continue
            assert tag.block_type not in SIGNATURES, (node.name, line, text[pos:pos + 30])
            assert tag.depth > name_tag.depth, (node.name, line)
            if line not in nested and tag.block_type != B.COMMENT:
                assert tag.block_id == name_tag.block_id, (node.name, line, text[pos:pos + 30])
    assert len(set(name_blocks.values())) == len(defs), "each definition has its own block"
    # imports and docstrings
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            lo = _char(text, starts, node.lineno, node.col_offset)
            hi = _char(text, starts, node.end_lineno, node.end_col_offset)
            kinds = {t.block_type for p, t in toks if lo <= p < hi}
            assert kinds <= {B.IMPORT, B.COMMENT} and B.IMPORT in kinds, (node.lineno, kinds)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if ast.get_docstring(node) is None:
                continue
            doc = node.body[0]
            lo = _char(text, starts, doc.lineno, doc.col_offset)
            hi = _char(text, starts, doc.end_lineno, doc.end_col_offset)
            kinds = {t.block_type for p, t in toks if lo <= p < hi}
            assert kinds == {B.DOCSTRING}, (getattr(node, "name", "module"), kinds)
    # comments
    comments = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT]
    assert comments
    for tok in comments:
        assert tag_at(ivs, starts[tok.start[0] - 1] + tok.start[1]).block_type == B.COMMENT, tok.string


def test_python_small_details(tagger: StructureTagger) -> None:
    text = textwrap.dedent('''\
        import os

        @decorator(1)
        def f(a, b=2) -> int:
            """Doc."""
            if a:
                return 1
            for x in b:
                pass
            return g(a)

        class C(Base):
            x = 1

            def m(self):
                return self.x
        print(f(1))
        ''')
    ivs = tagger.intervals(text, info(SegmentKind.CODE, "python"))
    check_cover(text, ivs)
    assert tag_of(text, ivs, "@decorator").block_type == B.DECORATOR
    assert tag_of(text, ivs, "decorator(1)").block_id == tag_of(text, ivs, "def f").block_id
    sig = tag_of(text, ivs, "-> int")
    assert sig.block_type == B.FUNCTION_SIGNATURE and sig.depth == 0
    assert tag_of(text, ivs, "b=2").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "if a:").block_type == B.CONTROL_FLOW
    assert tag_of(text, ivs, "if a:").depth == 1
    assert tag_of(text, ivs, "for x").block_type == B.CONTROL_FLOW
    ret = tag_of(text, ivs, "return 1")
    assert (ret.block_type, ret.depth) == (B.FUNCTION_BODY, 2)
    assert tag_of(text, ivs, "return g").depth == 1
    assert tag_of(text, ivs, "x = 1").block_type == B.STATEMENT
    assert tag_of(text, ivs, "x = 1").depth == 1
    method = tag_of(text, ivs, "def m")
    assert (method.block_type, method.depth) == (B.FUNCTION_SIGNATURE, 1)
    assert method.block_id != tag_of(text, ivs, "class C").block_id
    assert tag_of(text, ivs, "return self").block_id == method.block_id
    assert tag_of(text, ivs, "return self").depth == 2
    top = tag_of(text, ivs, "print")
    assert top.block_type == B.STATEMENT and top.is_boundary
    assert top.block_id not in {tag_of(text, ivs, n).block_id for n in ("import", "def f", "class C")}


# ------------------------------------------------------------------------------ other languages
JS = textwrap.dedent("""\
    /** Adds two numbers. */
    import fs from 'fs';
    const path = require('path');
    // plain comment
    export function add(a, b = 1) {
      if (a > b) {
        return a - b;
      }
      return a + b;
    }
    const mul = (a, b) => {
      return a * b;
    };
    class Shape extends Base {
      area(scale) {
        for (const s of this.sides) { total += s; }
        return total * scale;
      }
    }
    main();
    """)

TS = textwrap.dedent("""\
    import { Thing } from './thing';
    export interface Named { name: string; greet(who: string): string; }
    export class Person implements Named {
      constructor(public name: string) {}
      greet(who: string): string {
        while (who.length > 3) { who = who.slice(1); }
        return `hi ${who}`;
      }
    }
    export const twice = (n: number): number => n * 2;
    type Pair = { a: number; b: number };
    enum Color { Red, Green }
    """)

JAVA = textwrap.dedent("""\
    package com.example;
    import java.util.List;
    /** A greeter. */
    @Deprecated
    public class Greeter extends Base {
      private int count = 0;
      @Override
      public String greet(String who) throws Exception {
        if (who == null) { throw new Exception("x"); } else { count++; }
        return "hi " + who;
      }
    }
    interface Speaker { void speak(int times); }
    """)

GO = textwrap.dedent("""\
    package main

    import (
    \t"fmt"
    )

    // Point is a point.
    type Point struct {
    \tX int
    }

    // Add adds two ints.
    func Add(a int, b int) int {
    \tfor i := 0; i < a; i++ {
    \t\tb += i
    \t}
    \treturn a + b
    }

    func (p *Point) Move(dx int) {
    \tp.X += dx
    }
    """)

RUST = textwrap.dedent("""\
    use std::fmt;
    /// A point in the plane.
    #[derive(Debug)]
    pub struct Point { x: i32 }
    pub trait Shape { fn area(&self) -> f64; }
    impl Shape for Point {
        fn area(&self) -> f64 {
            match self.x { 0 => 0.0, _ => 1.0 }
        }
    }
    pub fn origin(scale: i32) -> Point {
        // make one
        Point { x: 0 * scale }
    }
    """)

# (language, source, {needle: expected block type}, body needles that must not be signatures)
CASES = {
    "javascript": (JS, {
        "add(a": B.FUNCTION_SIGNATURE, "b = 1": B.FUNCTION_SIGNATURE, "mul =": B.FUNCTION_SIGNATURE,
        "Shape extends": B.CLASS_DECLARATION, "area(scale)": B.FUNCTION_SIGNATURE,
        "import fs": B.IMPORT, "require('path')": B.IMPORT, "/** Adds": B.DOCSTRING,
        "// plain": B.COMMENT, "if (a > b)": B.CONTROL_FLOW, "for (const": B.CONTROL_FLOW,
        "main();": B.STATEMENT, "return a + b": B.FUNCTION_BODY,
    }, ["return a - b", "return a + b", "return a * b", "return total", "total += s"]),
    "typescript": (TS, {
        "Named {": B.CLASS_DECLARATION, "greet(who: string): string;": B.FUNCTION_SIGNATURE,
        "Person implements": B.CLASS_DECLARATION, "constructor(public": B.FUNCTION_SIGNATURE,
        "greet(who: string): string {": B.FUNCTION_SIGNATURE, "twice =": B.FUNCTION_SIGNATURE,
        "Pair =": B.CLASS_DECLARATION, "Color": B.CLASS_DECLARATION, "import {": B.IMPORT,
        "while (who": B.CONTROL_FLOW,
    }, ["who = who.slice", "return `hi", "n * 2"]),
    "java": (JAVA, {
        "package com": B.IMPORT, "import java": B.IMPORT, "/** A greeter": B.DOCSTRING,
        "@Deprecated": B.DECORATOR, "@Override": B.DECORATOR, "Greeter extends": B.CLASS_DECLARATION,
        "String greet": B.FUNCTION_SIGNATURE, "throws Exception": B.FUNCTION_SIGNATURE,
        "if (who": B.CONTROL_FLOW, "Speaker": B.CLASS_DECLARATION, "void speak": B.FUNCTION_SIGNATURE,
        "private int count": B.STATEMENT, "else {": B.CONTROL_FLOW, "count++": B.FUNCTION_BODY,
    }, ['throw new', 'return "hi', "count++"]),
    "go": (GO, {
        "package main": B.IMPORT, "import (": B.IMPORT, '"fmt"': B.IMPORT, "// Point is": B.DOCSTRING,
        "Point struct": B.CLASS_DECLARATION, "Add(a int": B.FUNCTION_SIGNATURE,
        "Move(dx": B.FUNCTION_SIGNATURE, "for i :=": B.CONTROL_FLOW, "// Add adds": B.DOCSTRING,
    }, ["b += i", "return a + b", "p.X += dx"]),
    "rust": (RUST, {
        "use std": B.IMPORT, "/// A point": B.DOCSTRING, "#[derive": B.DECORATOR,
        "Point { x: i32": B.CLASS_DECLARATION, "trait Shape": B.CLASS_DECLARATION,
        "fn area(&self) -> f64;": B.FUNCTION_SIGNATURE, "impl Shape": B.CLASS_DECLARATION,
        "fn area(&self) -> f64 {": B.FUNCTION_SIGNATURE, "origin(scale": B.FUNCTION_SIGNATURE,
        "match self": B.CONTROL_FLOW, "// make one": B.COMMENT,
    }, ["0 => 0.0", "Point { x: 0 * scale }"]),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_languages(tokenizer, tagger: StructureTagger, language: str) -> None:
    text, expected, bodies = CASES[language]
    span = info(SegmentKind.CODE, language)
    ivs = tagger.intervals(text, span)
    check_cover(text, ivs)
    for needle, block_type in expected.items():
        assert tag_of(text, ivs, needle).block_type == block_type, (needle, tag_of(text, ivs, needle))
    for needle in bodies:
        tag = tag_of(text, ivs, needle)
        assert tag.block_type not in SIGNATURES and tag.depth >= 1, (needle, tag)
    # token level: the token holding a signature name is a signature, body tokens are not
    toks = dict(token_tags(tokenizer, tagger, text, span))
    for needle, block_type in expected.items():
        pos = text.index(needle)
        token_pos = max(p for p in toks if p <= pos)
        if block_type in SIGNATURES and token_pos == pos:
            assert toks[token_pos].block_type in SIGNATURES | {B.DECORATOR}, needle


def test_function_blocks_and_boundaries(tagger: StructureTagger) -> None:
    ivs = tagger.intervals(JS, info(SegmentKind.CODE, "javascript"))
    add = tag_of(JS, ivs, "add(a")
    assert tag_of(JS, ivs, "return a + b").block_id == add.block_id
    assert tag_of(JS, ivs, "return a * b").block_id == tag_of(JS, ivs, "mul =").block_id != add.block_id
    assert tag_of(JS, ivs, "export function").is_boundary
    closing = JS.index("}\nconst mul")
    assert tag_at(ivs, closing).is_boundary and tag_at(ivs, closing).block_id == add.block_id
    method = tag_of(JS, ivs, "area(scale)")
    assert method.depth == 1 and method.block_id != tag_of(JS, ivs, "Shape extends").block_id
    assert tag_of(JS, ivs, "total += s").depth == 3
    java = tagger.intervals(JAVA, info(SegmentKind.CODE, "java"))
    assert tag_of(JAVA, java, "count++").depth == tag_of(JAVA, java, "throw new").depth == 3
    assert tag_of(JAVA, java, "return \"hi").depth == 2


def test_typescript_tsx_and_case_insensitive_language(tagger: StructureTagger) -> None:
    text = "export function App(props: Props) {\n  return <div>{props.x}</div>;\n}\n"
    ivs = tagger.intervals(text, info(SegmentKind.CODE, "tsx"))
    assert tag_of(text, ivs, "App(").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "return <div>").block_type == B.FUNCTION_BODY
    ivs = tagger.intervals(RUST, info(SegmentKind.CODE, "Rust"))
    assert tag_of(RUST, ivs, "origin(scale").block_type == B.FUNCTION_SIGNATURE


# ------------------------------------------------------------------------------ spans of other kinds
TRACEBACK_LOG = textwrap.dedent("""\
    collected 3 items
    tests/test_a.py ..F
    Traceback (most recent call last):
      File "/x/a.py", line 3, in <module>
        main()
      File "/x/a.py", line 2, in main
        raise ValueError("bad")
    ValueError: bad
    all good here
    ____ test_thing ____
    >       assert f(1) == 3
    E       assert 2 == 3
    E        +  where 2 = f(1)
    tests/test_a.py:12: AssertionError
    src/main.c:10:5: error: expected ';' before '}' token
    FAILED tests/test_a.py::test_thing - assert 2 == 3
    ERROR tests/test_b.py - ImportError: no module
    ===== 1 failed, 2 passed in 0.12s =====
    """)


@pytest.mark.parametrize("kind", [SegmentKind.TEST_LOG, SegmentKind.TOOL_OUTPUT, SegmentKind.ERROR])
def test_logs(tokenizer, tagger: StructureTagger, kind: SegmentKind) -> None:
    text = TRACEBACK_LOG
    ivs = tagger.intervals(text, info(kind))
    check_cover(text, ivs)
    error_lines = ["Traceback", '  File "/x/a.py", line 3', "    main()", "ValueError: bad", ">       assert",
                   "E       assert", "E        +", "tests/test_a.py:12", "src/main.c:10:5", "FAILED", "ERROR tests"]
    log_lines = ["collected", "tests/test_a.py ..F", "all good", "____ test_thing", "===== 1 failed"]
    for needle in error_lines:
        assert tag_of(text, ivs, needle).block_type == B.ERROR, needle
    for needle in log_lines:
        assert tag_of(text, ivs, needle).block_type == B.LOG, needle
    tb = tag_of(text, ivs, "Traceback")
    assert tag_of(text, ivs, "ValueError: bad").block_id == tb.block_id
    assert tag_of(text, ivs, "FAILED").block_id != tag_of(text, ivs, "ERROR tests").block_id
    assert tag_of(text, ivs, "all good").block_id != tag_of(text, ivs, "collected").block_id
    toks = token_tags(tokenizer, tagger, text, info(kind))
    e_line = text.index("E       assert")
    assert all(t.block_type == B.ERROR for p, t in toks if e_line <= p < text.index("\n", e_line))


def test_tool_output_with_language_is_code(tagger: StructureTagger) -> None:
    text = "def f(x):\n    return x\n"
    ivs = tagger.intervals(text, info(SegmentKind.TOOL_OUTPUT, "python"))
    assert tag_of(text, ivs, "f(x)").block_type == B.FUNCTION_SIGNATURE
    ivs = tagger.intervals(text, info(SegmentKind.TOOL_OUTPUT))  # found by content, no language given
    assert tag_of(text, ivs, "f(x)").block_type == B.FUNCTION_SIGNATURE
    text = "total 8\ndrwxr-xr-x 2 root root 4096 a\n-rw-r--r-- 1 root root  120 setup.py\n"
    ivs = tagger.intervals(text, info(SegmentKind.TOOL_OUTPUT))
    assert {t.block_type for _s, _e, t in ivs} == {B.LOG}


def test_numbered_file_view_matches_plain(tagger: StructureTagger) -> None:
    text = Path(textwrap.__file__).read_text()
    lines = text.splitlines(keepends=True)[:300]
    plain = "".join(lines)
    numbered = "".join(f"{i:>6}\t{line}" for i, line in enumerate(lines, 120))
    view = "[File: textwrap.py lines 120-419]\n" + numbered + "[... 200 more lines]"
    span = info(SegmentKind.FILE_VIEW, "python")
    plain_ivs = tagger.intervals(plain, span)
    view_ivs = tagger.intervals(view, span)
    check_cover(view, view_ivs)
    ids: dict[int, int] = {}
    pos_plain, pos_view = 0, view.index("\n") + 1
    for line in lines:
        prefix = view.index("\t", pos_view) + 1 - pos_view
        number = tag_at(view_ivs, pos_view)
        assert number.block_type == B.NONE
        for k in range(len(line)):
            a, b = tag_at(plain_ivs, pos_plain + k), tag_at(view_ivs, pos_view + prefix + k)
            assert (a.block_type, a.depth, a.is_boundary) == (b.block_type, b.depth, b.is_boundary), line
            assert ids.setdefault(a.block_id, b.block_id) == b.block_id, "block partition differs"
        assert number.block_id == tag_at(view_ivs, pos_view + prefix).block_id
        pos_plain += len(line)
        pos_view += prefix + len(line)
    assert tag_of(view, view_ivs, "[File:").block_type == B.TEXT
    assert tag_of(view, view_ivs, "[... 200").block_type == B.TEXT
    assert len(set(ids.values())) == len(ids)


def test_numbered_markdown_view_and_false_numbering(tagger: StructureTagger) -> None:
    md = ["# Title\n", "Some words.\n", "```python\n", "def f(x):\n", "    return x\n", "```\n"]
    view = "".join(f"{i:>6}\t{line}" for i, line in enumerate(md, 1))
    ivs = tagger.intervals(view, info(SegmentKind.FILE_VIEW, "markdown"))
    check_cover(view, ivs)
    assert tag_of(view, ivs, "# Title").block_type == B.TEXT
    assert tag_of(view, ivs, "f(x)").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(view, ivs, "return x").block_type == B.FUNCTION_BODY
    # tab-separated data whose first column does not count up is not a numbered view
    tsv = "3\tdef\n1\tclass\n2\tother\n"
    ivs = tagger.intervals(tsv, info(SegmentKind.FILE_VIEW))
    assert tag_at(ivs, 0).block_type != B.NONE


def test_anonymous_callbacks_nest_without_new_blocks(tagger: StructureTagger) -> None:
    text = "describe('x', () => {\n  it('y', function () {\n    expect(1);\n  });\n});\n"
    ivs = tagger.intervals(text, info(SegmentKind.CODE, "javascript"))
    outer = tag_of(text, ivs, "describe")
    inner = tag_of(text, ivs, "expect")
    assert inner.block_id == outer.block_id and (outer.depth, inner.depth) == (0, 2)
    assert inner.block_type not in SIGNATURES


def test_fenced_code_in_assistant_text(tokenizer, tagger: StructureTagger) -> None:
    text = textwrap.dedent("""\
        I will change the parser.
        Plan:
        ```python
        import re

        def parse(s: str) -> list[str]:
            return re.split(",", s)
        ```
        Then run tests:
        ~~~bash
        # run them
        pytest -q
        ~~~
        And in Go:
        ```go
        func Sum(xs []int) int { return 0 }
        """)
    for kind in (SegmentKind.PLAN, SegmentKind.TEXT, SegmentKind.TOOL_CALL, SegmentKind.ISSUE):
        ivs = tagger.intervals(text, info(kind))
        check_cover(text, ivs)
        assert tag_of(text, ivs, "I will").block_type == B.TEXT
        assert tag_of(text, ivs, "I will").block_id != tag_of(text, ivs, "Plan:").block_id
        assert tag_of(text, ivs, "```python").block_type == B.TEXT
        assert tag_of(text, ivs, "import re").block_type == B.IMPORT
        assert tag_of(text, ivs, "parse(s").block_type == B.FUNCTION_SIGNATURE
        assert tag_of(text, ivs, "return re").block_type == B.FUNCTION_BODY
        assert tag_of(text, ivs, "Then run").block_type == B.TEXT
        # a shell fence in a message is a command the agent runs (mini-swe-agent's tool call)
        assert tag_of(text, ivs, "~~~bash").block_type == B.TOOL_CALL
        assert tag_of(text, ivs, "pytest -q").block_type == B.TOOL_CALL
        assert tag_of(text, ivs, "pytest -q").block_id == tag_of(text, ivs, "# run them").block_id
        assert tag_of(text, ivs, "Sum(xs").block_type == B.FUNCTION_SIGNATURE  # unclosed fence
    toks = token_tags(tokenizer, tagger, text, info(SegmentKind.PLAN))
    assert any(t.block_type == B.FUNCTION_SIGNATURE for _, t in toks)
    assert any(t.block_type == B.TEXT for _, t in toks)
    # a CODE span without a language but with fences is prose with fenced code
    ivs = tagger.intervals(text, info(SegmentKind.CODE))
    assert tag_of(text, ivs, "I will").block_type == B.TEXT
    assert tag_of(text, ivs, "parse(s").block_type == B.FUNCTION_SIGNATURE


def test_prose_lines_are_blocks(tagger: StructureTagger) -> None:
    text = "The parser fails on empty input.\n\nIt should return [].\n"
    ivs = tagger.intervals(text, info(SegmentKind.ISSUE))
    check_cover(text, ivs)
    first, second = tag_of(text, ivs, "The"), tag_of(text, ivs, "It should")
    assert first.block_type == second.block_type == B.TEXT
    assert first.block_id != second.block_id
    assert first.is_boundary and second.is_boundary
    assert tag_of(text, ivs, "input.").is_boundary and not tag_of(text, ivs, "fails").is_boundary


RUBY = textwrap.dedent("""\
    require 'json'
    # A greeter
    class Greeter
      def greet(name,
                punct)
        if name.empty?
          raise ArgumentError
        end
        "hi #{name}#{punct}"
      end
    end
    g = Greeter.new
    """)


def test_unknown_language_uses_heuristic(tagger: StructureTagger) -> None:
    ivs = tagger.intervals(RUBY, info(SegmentKind.FILE_VIEW, "ruby"))
    check_cover(RUBY, ivs)
    assert tag_of(RUBY, ivs, "require").block_type == B.IMPORT
    assert tag_of(RUBY, ivs, "# A greeter").block_type == B.COMMENT
    assert tag_of(RUBY, ivs, "class Greeter").block_type == B.CLASS_DECLARATION
    greet = tag_of(RUBY, ivs, "def greet")
    assert greet.block_type == B.FUNCTION_SIGNATURE and greet.depth == 1 and greet.is_boundary
    assert tag_of(RUBY, ivs, "punct)").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(RUBY, ivs, "if name").block_type == B.CONTROL_FLOW
    body = tag_of(RUBY, ivs, "raise")
    assert body.block_type == B.FUNCTION_BODY and body.depth == 3 and body.block_id == greet.block_id
    assert tag_of(RUBY, ivs, '"hi').block_id == greet.block_id
    assert tag_of(RUBY, ivs, "g = ").block_type == B.GLOBAL  # a top-level binding
    assert tag_of(RUBY, ivs, "g = ").block_id != tag_of(RUBY, ivs, "class Greeter").block_id
    c_code = "#include <stdio.h>\nstatic int add(int a, int b) {\n    return a + b;\n}\n"
    ivs = tagger.intervals(c_code, info(SegmentKind.CODE, "c"))
    assert tag_of(c_code, ivs, "#include").block_type == B.IMPORT
    assert tag_of(c_code, ivs, "add(").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(c_code, ivs, "return a").block_type == B.FUNCTION_BODY
    ivs = tagger.intervals(RUBY, info(SegmentKind.CODE))  # no language at all
    assert tag_of(RUBY, ivs, "def greet").block_type == B.FUNCTION_SIGNATURE


MODULE_BINDINGS = {
    "python": ("import re\nLIMIT = 20\nNAME: Final[str] = 'x'\nTABLE = {\n    'a': 1,\n    'b': 2,\n}\nmain()\n"
               "Pair = namedtuple(\n    'Pair', ['left', 'right'])\nlo, hi = 1, 2\n"
               "f.cache = {}\ndef f(x):\n    local = 1\n    return local\n",
               ["LIMIT", "NAME: Final", "TABLE = {", "lo, hi", "'left'"], ["'a': 1", "main()", "local = 1", "f.cache"]),
    "javascript": ("const LIMIT = 20;\nexport const NAME = 'x';\nlet count = 0;\nconst f = (a) => {\n  const inner = a;\n"
                   "  return inner;\n};\nrun();\n", ["LIMIT", "NAME", "count"], ["const f", "inner = a", "run()"]),
    "go": ("package main\n\nconst Limit = 20\n\nvar cache = map[string]int{}\n\nfunc f() int {\n  x := 1\n"
           "  return x\n}\n", ["Limit", "cache"], ["x := 1", "func f"]),
    "rust": ("const MAX: u32 = 5;\nstatic NAME: &str = \"x\";\nfn f() -> u32 {\n    let y = MAX;\n    y\n}\n",
             ["MAX: u32", "NAME: &str"], ["let y", "fn f"]),
    None: ("LIMIT = 20\nGreeter.count = 0\ndef greet(name)\n  size = name.length\nend\n", ["LIMIT"],
           ["size =", "Greeter.count"]),
}


@pytest.mark.parametrize("language", list(MODULE_BINDINGS))
def test_module_level_bindings_are_globals(tagger: StructureTagger, language: str | None) -> None:
    """The first line of a module-level constant or global is GLOBAL (pinned like a signature), and the whole of a
    short one (a namedtuple's fields on the next line); a longer one's continuation lines, local variables, calls and
    functions bound to a name are not."""
    text, globals_, others = MODULE_BINDINGS[language]
    ivs = tagger.intervals(text, info(SegmentKind.FILE_VIEW, language or "ruby"))
    check_cover(text, ivs)
    for needle in globals_:
        assert tag_of(text, ivs, needle).block_type == B.GLOBAL, needle
    for needle in others:
        assert tag_of(text, ivs, needle).block_type != B.GLOBAL, needle


def test_mostly_broken_parse_falls_back(tagger: StructureTagger) -> None:
    text = "function f(a) {\n  return a;\n}\n"  # JavaScript labelled as Python
    ivs = tagger.intervals(text, info(SegmentKind.CODE, "python"))
    check_cover(text, ivs)
    assert tag_of(text, ivs, "function").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "return").block_type == B.FUNCTION_BODY
    for garbage in ("}}}{{ ((( ]]\n)))", "def (:\n  \x00\n", "\n\n", "   ", "x"):
        for language in ("python", "rust", "java", None):
            ivs = tagger.intervals(garbage, info(SegmentKind.CODE, language))
            check_cover(garbage, ivs)
    assert tagger.intervals("", info(SegmentKind.CODE, "python")) == []


def test_block_ids_unique_across_calls(tagger: StructureTagger) -> None:
    seen: set[int] = set()
    for text, span in [(JS, info(SegmentKind.CODE, "javascript")), (JS, info(SegmentKind.CODE, "javascript")),
                       (TRACEBACK_LOG, info(SegmentKind.TEST_LOG)), (RUBY, info(SegmentKind.CODE, "ruby")),
                       ("Plain words.\nMore.\n", info(SegmentKind.TEXT))]:
        ids = {t.block_id for _, _, t in tagger.intervals(text, span)}
        assert min(ids) >= 0
        assert not ids & seen
        seen |= ids


def test_non_ascii_offsets_are_chars(tagger: StructureTagger) -> None:
    text = 'GREETING = "héllo wörld ✓"\n\ndef größe(x):\n    return "ß" * x\n'
    ivs = tagger.intervals(text, info(SegmentKind.CODE, "python"))
    check_cover(text, ivs)
    assert tag_of(text, ivs, "größe").block_type == B.FUNCTION_SIGNATURE
    assert tag_of(text, ivs, "return").block_type == B.FUNCTION_BODY
    assert tag_of(text, ivs, "GREETING").block_type == B.GLOBAL  # a module constant, up to the end of its line
    assert tag_of(text, ivs, "✓").block_type == B.GLOBAL


def test_tag_offsets_rules(tokenizer, tagger: StructureTagger) -> None:
    text = "def f(a):\n    return a\n"
    span = info(SegmentKind.CODE, "python")
    ivs = tagger.intervals(text, span)
    body_start = text.index("return")
    offsets = [(0, 0), (0, 3), (3, 5), (9, body_start), (9, body_start + 3), (body_start - 1, body_start + 6)]
    tags = tags_for_offsets(text, offsets, ivs)
    assert tags[0] == NO_TAG  # special token
    assert tags[1].block_type == B.FUNCTION_SIGNATURE and tags[1].is_boundary
    assert tags[2] == tag_at(ivs, 4) and tags[2].block_type == B.FUNCTION_SIGNATURE  # " f": its "f" decides
    assert tags[3] == tag_at(ivs, 9)  # whitespace-only token: tag at its start
    assert tags[4] == tag_at(ivs, body_start) and tags[4].block_type == B.FUNCTION_BODY
    assert tags[5] == tags[4]  # overlapping offsets are fine
    via_tag = tagger.tag(text, offsets, span)
    assert [(t.block_type, t.depth, t.is_boundary) for t in via_tag] == [
        (t.block_type, t.depth, t.is_boundary) for t in tags]
    assert tags_for_offsets(text, [], ivs) == []
    enc = tokenizer(text, return_offsets_mapping=True)
    assert len(tagger.tag(text, enc["offset_mapping"], span)) == len(enc["input_ids"])


def test_an_indent_after_a_views_prefix_reads_as_its_line(tagger: StructureTagger) -> None:
    """A token of nothing but space before code on its line (the indent after `cat -n`'s tab) takes that code's tag;
    a prefix's own spaces (untagged text) and spaces with nothing after them on their line keep the tag at their
    start."""
    code = "class A:\n    def f(self):  \n        return 1\n"
    view = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(code.splitlines(), 1))
    ivs = tagger.intervals(view, info(SegmentKind.FILE_VIEW, "python"))
    indent = view.index("    def")
    trailing = view.index("  \n")
    offsets = [(indent, indent + 4), (16, 20), (trailing, trailing + 2)]
    tags = tags_for_offsets(view, offsets, ivs)
    assert tags[0].block_type == B.FUNCTION_SIGNATURE and tags[0] == tag_at(ivs, indent + 4)
    assert tags[1] == tag_at(ivs, 16) and tags[1].block_type == B.NONE  # `     2` of the prefix
    assert tags[2] == tag_at(ivs, trailing)


def test_2000_line_file_tags_every_token(tokenizer, tagger: StructureTagger) -> None:
    """A large real file: one tag per token, signatures found (timing lives in scripts/bench_tagger.py)."""
    lines = Path(argparse.__file__).read_text().splitlines(keepends=True)[:2000]
    text = "".join(lines)
    offsets = tokenizer(text, return_offsets_mapping=True, add_special_tokens=False)["offset_mapping"]
    assert len(offsets) > 15000
    tags = tagger.tag(text, offsets, info(SegmentKind.FILE_VIEW, "python"))
    assert len(tags) == len(offsets)
    n_defs = text.count("\n    def ") + text.count("\ndef ")
    sig_blocks = {t.block_id for t in tags if t.block_type == B.FUNCTION_SIGNATURE}
    assert len(sig_blocks) >= n_defs * 0.9


_PIECES = st.sampled_from([
    "def f(x):\n", "    return x\n", "class A:\n", "```python\n", "```\n", "     7\t", "Traceback (most recent call last):\n",
    "E   assert 0\n", "fn main() {\n", "}\n", "/** d */\n", "import os\n", "\t", " ", "\n", "é✓", "{", ")", "#",
])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pieces=st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=30),
    kind=st.sampled_from(list(SegmentKind)),
    language=st.sampled_from([None, "python", "javascript", "typescript", "tsx", "java", "go", "rust", "ruby",
                              "markdown", "py"]),
)
def test_any_text_is_covered(tagger: StructureTagger, pieces: list[str], kind: SegmentKind,
                             language: str | None) -> None:
    text = "".join(pieces)
    ivs = tagger.intervals(text, info(kind, language))
    if text:
        check_cover(text, ivs)
    offsets = [(i, min(i + 3, len(text))) for i in range(0, len(text), 2)] + [(0, 0)]
    assert len(tagger.tag(text, offsets, info(kind, language))) == len(offsets)


def test_a_span_the_tagger_fails_on_goes_untagged(monkeypatch):
    """A bug in the tagger (an exception on some text) leaves that span's tokens untagged, with a warning, instead of
    ending the session that reads it; the next span is tagged as usual."""
    tagger = StructureTagger()
    text = "def load(path):\n    return open(path).read()\n"
    offsets = [(0, 3), (3, 8), (8, 15)]
    real = StructureTagger.intervals

    def broken(self, t, info):
        if t == text:
            raise IndexError("list index out of range")
        return real(self, t, info)

    monkeypatch.setattr(StructureTagger, "intervals", broken)
    with pytest.warns(RuntimeWarning, match=r"tool_output span of 45 chars left untagged \(IndexError"):
        assert tagger.tag(text, offsets, SpanInfo(kind=SegmentKind.TOOL_OUTPUT)) == [NO_TAG] * 3
    other = "def save(path):\n    pass\n"
    assert tagger.tag(other, [(0, 3), (3, 8)], SpanInfo(kind=SegmentKind.TOOL_OUTPUT))[1].block_type \
        == BlockType.FUNCTION_SIGNATURE
