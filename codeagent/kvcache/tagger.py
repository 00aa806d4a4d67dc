"""Structure tagger: which part of code, log, tool call or prose every character of a span is.

``StructureTagger.intervals`` cuts a span's text into char intervals, each with a ``TokenTag``
(block type, block id, nesting depth, boundary flag); ``tag`` maps a tokenizer's offsets onto
those intervals. Code is found by content in any span (``tagger_content``): Markdown fences,
numbered views, diff hunks, search hits (``path:12:code``), JSON strings holding a file, raw code
runs. It is parsed with tree-sitter (per-language tables in ``tagger_rules``), in the language the
span, a fence or a nearby path names, else the grammar with the fewest parse errors; a line/indent
heuristic covers other languages or badly broken code. Tool calls in any syntax (``tagger_calls``)
are TOOL_CALL, test logs and tool output are cut into ERROR and LOG lines, prose into TEXT lines.
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from operator import itemgetter
from typing import Any, NamedTuple

import numpy as np

from codeagent.kvcache.languages import SHELLS, language_for_fence, language_for_path
from codeagent.kvcache.tagger_calls import (
    CODE_ACTION, call_language, heredoc_delimiter, heredocs, is_command, looks_like_test_log, tool_call_spans,
)
from codeagent.kvcache.tagger_content import (
    line_spans as _line_spans,
    CODE as _CODE_LINE, Hunk, JsonString, Runs, bare_grep_rows, best_language, carried_strings,
    code_literals, code_regions, ctags_rows, diff_hunks, escaped_whitespace, fence_segments, framed_rows, grep_rows,
    indent_width as _indent_width, indented_rows, label_cuts, line_label, line_strings, MARKUP_LINE as _MARKUP_LINE,
    numbered_hunks, numbered_rows, outline_rows, prefixed_rows, PrefixedRows, string_values, YamlBlock,
    yaml_block_rows, yaml_blocks,
)
from codeagent.kvcache.tagger_media import clean as clean_media, prompts
from codeagent.kvcache.tagger_rules import RULES, LangRules
from codeagent.kvcache.tags import NO_TAG, BlockType, SegmentKind, SpanInfo, TokenTag


def _ends_like_a_log(text: str, reach: int = 3000) -> bool:
    """A test run's output, by what its runner prints first or last (a file's whole text is not searched)."""
    return looks_like_test_log(text if len(text) <= 2 * reach else f"{text[:reach]}\n{text[-reach:]}")


class Interval(NamedTuple):
    """Characters [start, end) of a text and their tag."""

    start: int
    end: int
    tag: TokenTag


# (start, -end, priority, block_type or None (inherit), new block, depth increment, boundary)
Region = tuple[int, int, int, BlockType | None, bool, int, bool]

CODE_KINDS = frozenset({SegmentKind.FILE_VIEW, SegmentKind.CODE})
LOG_KINDS = frozenset({SegmentKind.TOOL_OUTPUT, SegmentKind.TEST_LOG, SegmentKind.ERROR})
PROSE_LANGUAGES = frozenset({"markdown", "text"})
SHORT_BINDING_LINES = 3  # a module-level binding of at most this many lines is GLOBAL whole, a longer one its first
MOSTLY_ERRORS = 0.5  # above this share of bytes inside ERROR nodes, use the heuristic instead

# region priorities: among regions with the same range, the lower one is the outer one
P_BLOCK, P_BODY, P_TYPE, P_BOUNDARY = 0, 1, 2, 3
_BYTES_SPACE = re.compile(rb"\s")
_SURROGATE = re.compile("[\ud800-\udfff]")

_WHITESPACE = np.array([9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x2028, 0x2029, 0x3000], dtype=np.uint32)


_FENCED = re.compile(r"^[ \t]*(?:`{3}|~{3}|#\+begin_)", re.MULTILINE | re.IGNORECASE)
"""A fence line: a terminal transcript inside a fence is read as a screen once the fence is taken apart."""


# ------------------------------------------------------------------------------ small helpers
def _emit(out: list[Interval], start: int, end: int, tag: TokenTag) -> None:
    """Append [start, end) with ``tag``, merging into the previous interval when tags match."""
    if end <= start:
        return
    if out and out[-1].end == start and out[-1].tag == tag:
        out[-1] = out[-1]._replace(end=end)
    else:
        out.append(Interval(start, end, tag))


def _normalize(intervals: list[Interval], length: int) -> list[Interval]:
    """Sorted, gap-free, merged intervals covering exactly [0, length)."""
    out: list[Interval] = []
    pos = 0
    last = NO_TAG
    for start, end, tag in intervals:
        start, end = max(start, pos), min(end, length)
        if end <= start:
            continue
        if start > pos:
            _emit(out, pos, start, last)
        _emit(out, start, end, tag)
        pos, last = end, tag
    if pos < length:
        _emit(out, pos, length, last)
    return out


def _shift(intervals: list[Interval], offset: int) -> list[Interval]:
    """Intervals moved right by ``offset`` chars."""
    return [Interval(s + offset, e + offset, t) for s, e, t in intervals] if offset else intervals


_WORD = re.compile(r"\S+")


def _first_word(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Char range of the first whitespace-delimited word in text[start:end]."""
    m = _WORD.search(text, start, end)
    return (m.start(), m.end()) if m else None


def _last_word(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Char range of the last whitespace-delimited word in text[start:end]."""
    stop = end
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    if stop == start:
        return None
    begin = stop
    while begin > start and not text[begin - 1].isspace():
        begin -= 1
    return begin, stop


def _byte_to_char(text: str, src: bytes) -> Callable[[int], int]:
    """Map a UTF-8 byte offset of ``src`` (== text.encode()) to a char offset of ``text``."""
    if len(src) == len(text):
        return lambda b: b
    arr = np.frombuffer(src, dtype=np.uint8)
    starts = np.concatenate(([0], np.cumsum((arr & 0xC0) != 0x80)))
    return lambda b: int(starts[b])


# ------------------------------------------------------------------------------ line-based tagging
class PlanLine(NamedTuple):
    """One line of a line plan; lines of one block share a key."""

    start: int
    end: int
    block_type: BlockType
    block: int
    depth: int


LinePlan = list[PlanLine]


class _Counter:
    """Hands out block ids, unique over one tagger's lifetime."""

    def __init__(self) -> None:
        self.next = 0

    def __call__(self) -> int:
        self.next += 1
        return self.next - 1


def _plan_to_intervals(text: str, plan: LinePlan, alloc: _Counter) -> list[Interval]:
    """Intervals from a line plan: fresh block ids per key, boundaries on a block's first/last word."""
    ids: dict[int, int] = {}
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, (start, end, _t, key, _d) in enumerate(plan):
        if key not in ids:
            ids[key] = alloc()
            first[key] = i
        if key not in last or not text[start:end].isspace():
            last[key] = i
    out: list[Interval] = []
    for i, (start, end, btype, key, depth) in enumerate(plan):
        tag = TokenTag(btype, ids[key], depth, False)
        marks = []
        if first[key] == i:
            marks.append(_first_word(text, start, end))
        if last[key] == i:
            marks.append(_last_word(text, start, end))
        pos = start
        edge = TokenTag(btype, ids[key], depth, True)
        for mark in sorted({m for m in marks if m is not None}):
            if mark[0] < pos:
                mark = (pos, mark[1])
            _emit(out, pos, mark[0], tag)
            _emit(out, mark[0], mark[1], edge)
            pos = max(pos, mark[1])
        _emit(out, pos, end, tag)
    return out


def _prose_plan(text: str, start: int, end: int) -> LinePlan:
    """Each non-blank line of prose is a TEXT block; blank lines join the block above."""
    plan: LinePlan = []
    key = 0
    for s, e in _line_spans(text, start, end):
        if plan and text[s:e].isspace():
            plan.append(PlanLine(s, e, BlockType.TEXT, key, 0))
            continue
        key += 1
        plan.append(PlanLine(s, e, BlockType.TEXT, key, 0))
    return plan


_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_ERROR_LINE = re.compile(
    r"""^(?:
        (?:FAILED|ERROR)\b                           # pytest summary lines
      | E(?:\s|$)                                    # pytest assertion detail lines
      | >\s{2,}\S                                    # pytest: the failing source line
      | \s*(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt)\b(?::|\s*$)  # exception lines
      | [^\s:][^:\n]*:\d+(?::\d+)?:\s*(?:\w+\s)?(?:fatal\s)?error\b  # file:line: error: ...
      | [^\s:][^:\n]*:\d+:\s*\w*(?:Error|Exception)\b  # pytest location: file:12: AssertionError
      | error(?:\[\w+\])?:                           # rustc / generic
      | ---\s*FAIL\b | FAIL\b | panic:               # go test
      | npm\s+ERR!
      | thread\ '[^']*'\ panicked | test\ \S+\ \.\.\.\ FAILED   # cargo
      | \s*[●✕×]\s | \s*(?:Expected|Received)(?:\ value)?:   # jest
      | \s*Failure/Error: | not\ ok\ \d+\b              # rspec, TAP
    )""",
    re.VERBOSE,
)
_ASSERTION = re.compile(r"\bAssertionError\b")
# error lines that start a new error block (others continue the error block above them)
_ERROR_HEAD = re.compile(r"(?:FAILED|ERROR|FAIL)\b|[^\s:][^:\n]*:\d+(?::\d+)?:|error(?:\[\w+\])?:|---\s*FAIL\b|panic:|"
                         r"thread '|test \S+ \.\.\. FAILED|\s*●|\s*Failure/Error:|not ok \d")


def _log_plan(text: str, start: int, end: int) -> LinePlan:
    """Lines of tool output: tracebacks and error lines are ERROR (consecutive ones one block), others LOG."""
    plan: LinePlan = []
    key = 0
    in_traceback = False
    prev_error = False
    for s, e in _line_spans(text, start, end):
        line = text[s:e].rstrip("\r\n")
        if not line.strip():
            if plan:
                plan.append(PlanLine(s, e, plan[-1].block_type, key, 0))
            else:
                key += 1
                plan.append(PlanLine(s, e, BlockType.LOG, key, 0))
            continue
        if _TRACEBACK.match(line):
            in_traceback, error = True, True
        elif in_traceback:
            error = True
            if not line[0].isspace():  # the exception line ends the traceback
                in_traceback = False
        else:
            error = bool(_ERROR_LINE.match(line) or _ASSERTION.search(line))
        if not (error and prev_error) or _TRACEBACK.match(line) or (not in_traceback and _ERROR_HEAD.match(line)):
            key += 1
        plan.append(PlanLine(s, e, BlockType.ERROR if error else BlockType.LOG, key, 0))
        prev_error = error
    return plan


_MODS = (r"(?:(?:export|default|pub(?:\([^)]*\))?|public|private|protected|internal|static|async|"
         r"final|abstract|override|inline|extern|unsafe|virtual|sealed|data|open|local|const)\s+)*")
_H_SIGNATURE = re.compile(r"\s*" + _MODS + r"(?:def|function\*?|func|fn|fun|sub|proc|procedure)\b")
# C-like `type name(params) {`: type words, a name, an open parenthesis, no `;` after it
_H_C_SIGNATURE = re.compile(r"\s*(?!(?:return|else|if|for|while|switch|case|throw|new|delete|goto|sizeof)\b)"
                            r"(?:[A-Za-z_][\w:<>,*&]*\s+)+[*&]*[A-Za-z_~][\w:]*\s*\([^;]*$")
_H_CLASS = re.compile(r"\s*" + _MODS + r"(?:class|struct|interface|trait|impl|enum|module|namespace|"
                      r"object|record|union|protocol|type\s+\w+\s+(?:struct|interface))\b")
_H_IMPORT = re.compile(r"\s*(?:import\b|from\s+\S+\s+import\b|#\s*include\b|use\s|using\s|require\b|"
                       r"package\s|extern\s+crate\b|@import\b|source\s|library\(|.*\brequire\s*\()")
_H_COMMENT = re.compile(r"\s*(?:#(?!\s*include\b|\[|!\[)|//|/\*|\*|--\s|;|<!--|%)")
_H_DECORATOR = re.compile(r"\s*(?:@\w|#!?\[)")
_H_FLOW = re.compile(r"\s*(?:\}\s*)?(?:if|elif|elsif|else|for|foreach|while|do|switch|case|default|match|"
                     r"try|catch|except|finally|with|loop|select|unless|until|when)\b")
# a top-level name binding: `LIMIT = 20`, `NAME: int = 3`, `const x = 1`, `static X: u8 = 1`, Go `var x = 1`
_H_BINDING = re.compile(r"(?:(?:export\s+)?(?:const|let|var|static|final)\s+(?:mut\s+)?)?[A-Za-z_]\w*"
                        r"(?:\s*,\s*[A-Za-z_]\w*)*\s*(?::[^=]*)?=(?!=)")
_H_CLOSER = re.compile(r"\s*(?:[}\])]|end\b|fi\b|done\b|esac\b)")


class _OpenDef(NamedTuple):
    """A definition the heuristic plan is inside of."""

    indent: int
    key: int
    is_class: bool
    depth: int


def _opens_definition(text: str, start: int, end: int) -> bool:
    """A line of text[start:end] opens a function or a class, by the line heuristics of ``_heuristic_plan``."""
    return any(_H_SIGNATURE.match(text, s, e) or _H_CLASS.match(text, s, e) for s, e in _line_spans(text, start, end))


def _heuristic_plan(text: str, start: int, end: int) -> LinePlan:
    """Line plan for code without a grammar: keyword regexes for types, indentation for depth and blocks."""
    spans = _line_spans(text, start, end)
    widths = [_indent_width(text[s:e]) for s, e in spans]
    unit = min((w for (s, e), w in zip(spans, widths) if w and not text[s:e].isspace()), default=4)
    plan: LinePlan = []
    stack: list[_OpenDef] = []
    key = 0
    top_key = -1
    open_parens = 0  # of a signature that spans lines
    statement_parens = 0  # of a top-level statement that spans lines
    decorator_key: int | None = None
    for (s, e), ind in zip(spans, widths):
        line = text[s:e]
        if line.isspace():
            if plan:
                plan.append(plan[-1]._replace(start=s, end=e))
            else:
                key += 1
                top_key = key
                plan.append(PlanLine(s, e, BlockType.STATEMENT, key, 0))
            continue
        depth = ind // unit
        balance = line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if open_parens > 0:  # continuation of a multi-line signature
            open_parens += balance
            plan.append(PlanLine(s, e, BlockType.FUNCTION_SIGNATURE, stack[-1].key, stack[-1].depth))
            continue
        closer = bool(_H_CLOSER.match(line))
        while stack and (ind < stack[-1].indent or (ind == stack[-1].indent and not closer)):
            stack.pop()
        if closer and stack and ind == stack[-1].indent:
            plan.append(PlanLine(s, e, BlockType.STATEMENT if stack[-1].is_class else BlockType.FUNCTION_BODY,
                         stack[-1].key, depth))
            stack.pop()
            continue
        klass = bool(_H_CLASS.match(line))
        signature = bool(_H_SIGNATURE.match(line) or (not klass and _H_C_SIGNATURE.match(line)))
        if signature or klass:
            if decorator_key is None:
                key += 1
            block = key if decorator_key is None else decorator_key
            decorator_key = None
            stack.append(_OpenDef(ind, block, klass and not signature, depth))
            btype = BlockType.CLASS_DECLARATION if klass and not signature else BlockType.FUNCTION_SIGNATURE
            plan.append(PlanLine(s, e, btype, block, depth))
            open_parens = max(balance, 0) if signature else 0
            continue
        if _H_COMMENT.match(line):
            btype = BlockType.COMMENT
        elif _H_DECORATOR.match(line):
            btype = BlockType.DECORATOR
        elif _H_IMPORT.match(line):
            btype = BlockType.IMPORT
        elif _H_FLOW.match(line):
            btype = BlockType.CONTROL_FLOW
        elif stack:
            btype = BlockType.STATEMENT if stack[-1].is_class else BlockType.FUNCTION_BODY
        elif ind == 0 and statement_parens <= 0 and _H_BINDING.match(line):
            btype = BlockType.GLOBAL
        else:
            btype = BlockType.STATEMENT
        if stack:
            block = stack[-1].key
        elif (ind == 0 and statement_parens <= 0) or top_key < 0:
            key += 1
            block = top_key = key
            statement_parens = 0
        else:
            block = top_key
        if not stack:
            statement_parens += balance
        if btype == BlockType.DECORATOR:
            decorator_key = block
        elif btype != BlockType.COMMENT:
            decorator_key = None
        plan.append(PlanLine(s, e, btype, block, depth))
    return plan


# ------------------------------------------------------------------------------ tree-sitter
class _Open(NamedTuple):
    """A region the flattening sweep is inside of: where it ends and its tag."""

    end: int
    tag: TokenTag


class _Grammar:
    """A loaded tree-sitter language with its parser and the combined capture query."""

    def __init__(self, rules: LangRules) -> None:
        import tree_sitter as ts

        self.rules = rules
        self.language = ts.Language(rules.loader())
        self.parser = ts.Parser(self.language)
        patterns = [p for p in self._patterns() if self._valid(ts, p)]
        self.query = ts.Query(self.language, "\n".join(patterns))
        self._cursor_type = ts.QueryCursor

    def _has(self, node_type: str) -> bool:
        """Whether the grammar has a named node of this type."""
        return bool(self.language.id_for_node_kind(node_type, True))

    def _group(self, names: Any, capture: str) -> str | None:
        """One alternation pattern capturing any of ``names`` (those the grammar has)."""
        present = sorted(n for n in names if self._has(n))
        return f"[{' '.join(f'({n})' for n in present)}] @{capture}" if present else None

    def _patterns(self) -> list[str]:
        """Query patterns for everything the rules name."""
        r = self.rules
        groups = [
            (r.functions, "func"), (r.classes, "class"), (r.decorators, "decorator"),
            (r.imports, "import"), (r.comments, "comment"), (r.flow, "flow"),
            (r.function_values, "anon"), ({"ERROR"}, "error"),
        ]
        patterns = [p for names, cap in groups if (p := self._group(names, cap))]
        values = sorted(v for v in r.function_values if self._has(v))
        if values:
            alts = " ".join(f"({v})" for v in values)
            for holder, fld in sorted(r.named_values.items()):
                if self._has(holder):
                    patterns.append(f"({holder} {fld}: [{alts}]) @named")
        if r.require_call and self._has("call_expression"):
            patterns.append('((call_expression function: (identifier) @_fn) @require (#eq? @_fn "require"))')
        return patterns

    def _valid(self, ts: Any, pattern: str) -> bool:
        """Whether this grammar version knows every node and field name in ``pattern``."""
        try:
            ts.Query(self.language, pattern)
        except ts.QueryError:
            return False
        return True

    def captures(self, node: Any) -> dict[str, list[Any]]:
        """Captured nodes below ``node`` by capture name (func, class, flow, comment...)."""
        return self._cursor_type(self.query).captures(node)


def _first_leaf(node: Any) -> Any:
    """The leftmost leaf below ``node``."""
    while node.child_count:
        node = node.child(0)
    return node


def _last_leaf(node: Any) -> Any:
    """The rightmost non-empty leaf below ``node``."""
    while node.child_count:
        child = node.child(node.child_count - 1)
        if child.end_byte <= child.start_byte and node.child_count > 1:  # a MISSING node
            child = node.child(node.child_count - 2)
        node = child
    return node


class _CodeRegions:
    """Collects the regions of one syntax tree; ``flatten`` turns them into tagged byte intervals."""

    def __init__(self, grammar: _Grammar, src: bytes, tree: Any) -> None:
        self.rules = grammar.rules
        self.src = src
        self.root = tree.root_node
        self.caps = grammar.captures(self.root)
        self.regions: list[Region] = []
        self.root_block_ids: set[int] = set()

    def add(self, start: int, end: int, prio: int, btype: BlockType | None = None,
            new_block: bool = False, depth: int = 0, boundary: bool = False) -> None:
        if end > start:
            self.regions.append((start, -end, prio, btype, new_block, depth, boundary))

    def boundary_first(self, node: Any, at: int | None = None) -> None:
        """Mark the first word of the first leaf of ``node`` (or of the leaf at byte ``at``)."""
        leaf = _first_leaf(node) if at is None else node.descendant_for_byte_range(at, at + 1)
        if leaf is not None:
            m = _BYTES_SPACE.search(self.src, leaf.start_byte, leaf.end_byte)
            self.add(leaf.start_byte, m.start() if m else leaf.end_byte, P_BOUNDARY, boundary=True)

    def boundary_last(self, node: Any) -> None:
        """Mark the last word of the last leaf of ``node``."""
        leaf = _last_leaf(node)
        start = max(self.src.rfind(b" ", leaf.start_byte, leaf.end_byte),
                    self.src.rfind(b"\t", leaf.start_byte, leaf.end_byte),
                    self.src.rfind(b"\n", leaf.start_byte, leaf.end_byte - 1)) + 1
        self.add(max(start, leaf.start_byte), leaf.end_byte, P_BOUNDARY, boundary=True)

    def error_share(self) -> float:
        """Share of the source bytes inside (outermost) ERROR nodes."""
        if not self.root.has_error or not self.src:
            return 0.0
        covered, reach = 0, 0
        for node in sorted(self.caps.get("error", []), key=lambda n: n.start_byte):
            start = max(node.start_byte, reach)
            if node.end_byte > start:
                covered += node.end_byte - start
                reach = node.end_byte
        return covered / len(self.src)

    # ---------------------------------------------------------------- collection
    def collect(self) -> None:
        """Regions for every captured node: blocks, headers, bodies, flow, imports, comments, docstrings."""
        self.top_level()
        handled: set[int] = set()
        rules = self.rules
        for holder in self.caps.get("named", []):
            self.named_value(holder, handled)
        for node in self.caps.get("func", []):
            self.definition(node, node, rules.functions.get(node.type, ""), is_class=False)
        for node in self.caps.get("class", []):
            self.definition(node, node, rules.classes.get(node.type, ""), is_class=True)
        for node in self.caps.get("anon", []):
            if node.id not in handled:
                body = node.child_by_field_name("body")
                if body is not None:
                    self.add(body.start_byte, body.end_byte, P_BODY, depth=1)
        for node in self.caps.get("flow", []):
            self.flow(node)
        for node in self.caps.get("decorator", []):
            self.add(node.start_byte, node.end_byte, P_TYPE, BlockType.DECORATOR)
        for node in self.caps.get("import", []):
            self.add(node.start_byte, node.end_byte, P_TYPE, BlockType.IMPORT)
        for node in self.caps.get("require", []):
            self.require(node)
        for node in self.caps.get("comment", []):
            kind = BlockType.DOCSTRING if self.is_doc_comment(node) else BlockType.COMMENT
            self.add(node.start_byte, node.end_byte, P_TYPE, kind)
        if rules.python_docstrings:
            self.python_docstring(self.root)

    def top_level(self) -> None:
        """Each top-level statement is a block (with attached comments/attributes and trailing space)."""
        kids = [c for c in self.root.children if c.end_byte > c.start_byte]
        groups: list[tuple[Any, Any]] = []
        first = None
        for i, node in enumerate(kids):
            first = first or node
            nxt = kids[i + 1] if i + 1 < len(kids) else None
            if nxt is not None and self.attaches(node, nxt):
                continue
            groups.append((first, node))
            first = None
        for i, (head, tail) in enumerate(groups):
            start = 0 if i == 0 else head.start_byte
            end = groups[i + 1][0].start_byte if i + 1 < len(groups) else len(self.src)
            self.add(start, end, P_BLOCK, new_block=True)
            self.boundary_first(head)
            self.boundary_last(tail)
            self.root_block_ids.add(tail.id)
            self.binding(tail)

    def binding(self, node: Any) -> None:
        """A module-level name binding (``LIMIT = 20``, ``const re = /x/``, Go ``var``/``const``): its first line is
        GLOBAL, part of the module's interface like a signature, and the whole of one of at most
        ``SHORT_BINDING_LINES`` lines (``Settings = namedtuple(`` and its fields on the next line). Bindings of a
        function value are functions."""
        inner = node
        if node.type in self.rules.wrappers and node.named_child_count:  # export const X = ...
            inner = node.named_children[-1]
        if inner.type not in self.rules.bindings:
            return
        if inner.type == "expression_statement":  # Python: only an assignment to names binds (not `obj.attr = 1`)
            first = inner.named_child(0)
            left = first.child_by_field_name("left") if first is not None and first.type == "assignment" else None
            if left is None or left.type not in ("identifier", "pattern_list", "tuple_pattern"):
                return
        for decl in inner.named_children:
            value = decl.child_by_field_name("value")
            if value is not None and value.type in self.rules.function_values:
                return
        end = node.end_byte
        if node.end_point.row - node.start_point.row >= SHORT_BINDING_LINES:
            end = self.src.find(b"\n", node.start_byte, node.end_byte)
        self.add(node.start_byte, end, P_TYPE, BlockType.GLOBAL)

    def attaches(self, node: Any, nxt: Any) -> bool:
        """Whether a top-level comment/attribute belongs to the item right below it."""
        rules = self.rules
        if node.type not in rules.attach and node.type not in rules.comments:
            return False
        return nxt.start_point.row <= node.end_point.row + 1

    def is_doc_comment(self, node: Any) -> bool:
        rules = self.rules
        head = self.src[node.start_byte:node.start_byte + 4]
        if any(head.startswith(p.encode()) for p in rules.doc_comment_prefixes):
            return head != b"/**/"
        if rules.go_doc_comments:
            nxt = node.next_named_sibling
            return (nxt is not None and nxt.type in (*rules.functions, *rules.classes)
                    and nxt.start_point.row == node.end_point.row + 1)
        return False

    def header_start(self, block: Any, node: Any) -> int:
        """Start of a definition's header: its first child that is not a decorator or comment."""
        skip = self.rules.decorators | self.rules.comments | self.rules.attach
        for parent in ((block, node) if block.id != node.id else (node,)):
            for child in parent.children:
                if child.type in skip:
                    continue
                if child.id == node.id:
                    break
                return child.start_byte
        return node.start_byte

    def definition(self, node: Any, block: Any, body_field: str, is_class: bool) -> None:
        """Regions of a named function/class: its block, header, body (one level deeper), boundaries."""
        rules = self.rules
        parent = block.parent
        if block.id == node.id and parent is not None and parent.type in rules.wrappers:
            block = parent
        body = node.child_by_field_name(body_field) if body_field else None
        body_start = body.start_byte if body is not None else None
        if body is None and is_class and not body_field:
            brace = self.find_brace(node, 4)
            body_start = brace.start_byte if brace is not None else None
        elif body is not None:
            prev = body.prev_sibling
            if prev is not None and prev.end_byte >= node.start_byte:
                body_start = prev.end_byte
        if block.id not in self.root_block_ids:
            self.add(block.start_byte, block.end_byte, P_BLOCK, new_block=True)
            self.boundary_first(block)
            self.boundary_last(block)
        start = self.header_start(block, node)
        header_type = BlockType.CLASS_DECLARATION if is_class else BlockType.FUNCTION_SIGNATURE
        self.add(start, node.end_byte if body_start is None else body_start, P_TYPE, header_type)
        self.boundary_first(block, at=start)
        if body_start is not None:
            inner = BlockType.STATEMENT if is_class else BlockType.FUNCTION_BODY
            self.add(body_start, node.end_byte, P_BODY, inner, depth=1)
            if rules.python_docstrings and body is not None:
                self.python_docstring(body)

    def named_value(self, holder: Any, handled: set[int]) -> None:
        """`const f = () => {}`, `key: function () {}`, `x.f = function () {}`: a named function."""
        rules = self.rules
        value = holder.child_by_field_name(rules.named_values.get(holder.type, "value"))
        if value is None:
            return
        handled.add(value.id)
        block = holder
        parent = holder.parent
        if parent is not None:
            if holder.type == "variable_declarator" and parent.named_child_count == 1:
                block = parent
            elif holder.type == "assignment_expression" and parent.type == "expression_statement":
                block = parent
        grand = block.parent
        if grand is not None and grand.type in rules.wrappers:
            block = grand
        body = value.child_by_field_name("body")
        body_start = body.start_byte if body is not None else value.end_byte
        if body is not None and body.prev_sibling is not None:
            body_start = body.prev_sibling.end_byte
        if block.id not in self.root_block_ids:
            self.add(block.start_byte, block.end_byte, P_BLOCK, new_block=True)
            self.boundary_first(block)
            self.boundary_last(block)
        self.add(block.start_byte, body_start, P_TYPE, BlockType.FUNCTION_SIGNATURE)
        self.add(body_start, value.end_byte, P_BODY, BlockType.FUNCTION_BODY, depth=1)

    @staticmethod
    def find_brace(node: Any, levels: int) -> Any:
        """The first `{` leaf within ``levels`` levels below ``node``."""
        for child in node.children:
            if child.type == "{":
                return child
            if levels > 1 and child.child_count:
                found = _CodeRegions.find_brace(child, levels - 1)
                if found is not None:
                    return found
        return None

    def flow(self, node: Any) -> None:
        """Control flow: the header up to the body is CONTROL_FLOW, each body one level deeper."""
        rules = self.rules
        flow_types = rules.flow
        fields = rules.flow_fields.get(node.type, rules.body_fields)
        bodies = [c for f in fields for c in node.children_by_field_name(f)]
        if not bodies:
            bodies = [c for c in node.named_children if c.type in rules.block_types][:1]
        bodies.sort(key=lambda c: c.start_byte)
        header_end = None
        if bodies:
            prev = bodies[0].prev_sibling
            header_end = prev.end_byte if prev is not None and prev.start_byte >= node.start_byte else bodies[0].start_byte
            for body in bodies:
                if body.type in flow_types:
                    continue
                prev = body.prev_sibling
                start = prev.end_byte if prev is not None and prev.start_byte >= node.start_byte else body.start_byte
                self.add(start, body.end_byte, P_BODY, depth=1)
        else:
            for child in node.children:
                if child.is_named and child.type in flow_types:
                    header_end = child.start_byte
                    break
                if child.type in ("{", ":", "->", "=>"):
                    header_end = child.start_byte if child.type == "{" else child.end_byte
                    self.add(header_end, node.end_byte, P_BODY, depth=1)
                    break
        if header_end is None:
            line_end = self.src.find(b"\n", node.start_byte, node.end_byte)
            header_end = node.end_byte if line_end < 0 else line_end
        self.add(node.start_byte, header_end, P_TYPE, BlockType.CONTROL_FLOW)
        for child in node.children:
            if child.type == "else" and child.start_byte >= header_end:
                self.add(child.start_byte, child.end_byte, P_TYPE, BlockType.CONTROL_FLOW)

    def require(self, call: Any) -> None:
        """The statement holding a `require(...)` call is an import."""
        node = call
        while node.parent is not None and node.parent.type not in ("program", "statement_block"):
            node = node.parent
        self.add(node.start_byte, node.end_byte, P_TYPE, BlockType.IMPORT)

    def python_docstring(self, body: Any) -> None:
        """A string statement first in a module, class or function body is its docstring."""
        for child in body.named_children:
            if child.type in self.rules.comments:
                continue
            if (child.type == "expression_statement" and child.named_child_count == 1
                    and child.named_children[0].type in ("string", "concatenated_string")):
                self.add(child.start_byte, child.end_byte, P_TYPE, BlockType.DOCSTRING)
            return

    # ---------------------------------------------------------------- flattening
    def flatten(self, alloc: _Counter) -> list[Interval]:
        """Innermost-wins sweep over the nested regions: tagged byte intervals covering the source."""
        self.regions.sort(key=itemgetter(0, 1, 2))
        length = len(self.src)
        out: list[Interval] = []
        stack: list[_Open] = [_Open(length, TokenTag(BlockType.STATEMENT, alloc(), 0, False))]
        pos = 0
        for start, neg_end, _prio, btype, new_block, depth, boundary in self.regions:
            while len(stack) > 1 and stack[-1].end <= start:
                end, tag = stack.pop()
                _emit(out, pos, end, tag)
                pos = max(pos, end)
            top_end, top = stack[-1]
            _emit(out, pos, start, top)
            pos = max(pos, start)
            end = min(-neg_end, top_end)
            if end <= start:
                continue
            tag = TokenTag(top.block_type if btype is None else btype,
                           alloc() if new_block else top.block_id, top.depth + depth, boundary)
            stack.append(_Open(end, tag))
        while stack:
            end, tag = stack.pop()
            _emit(out, pos, end, tag)
            pos = max(pos, end)
        return out


# ------------------------------------------------------------------------------ span shapes
_END_OF_EDIT = re.compile(r"^[ \t]*end_of_edit[ \t]*\n?\Z", re.MULTILINE)
"""SWE-agent's terminator of an ``edit`` command's text, as the fence's last line."""
CODE_KEYS = frozenset({"content", "file_text", "new_str", "old_str", "code", "source", "text", "new_content",
                       "patch", "diff", "file_content", "contents"})
"""JSON keys whose string value is read as code first (any other string is detected by content)."""
COMMAND_KEYS = frozenset({"command", "cmd", "keystrokes", "script", "shell"})
"""JSON keys of a call whose string value is shell input: command lines, with the heredocs they feed read as code."""


def _argument_shape(key: str | None) -> str:
    """How a call's argument under ``key`` is read: code, shell command lines, else by content as prose."""
    return "code" if key in CODE_KEYS else "command" if key in COMMAND_KEYS else "prose"


_XML_CODE_PARAM = re.compile(
    rf"<(?:parameter=|parameter\s+name=[\"']?)?({'|'.join(sorted(CODE_KEYS))})[\"']?(?:\s[^>]*)?>\n?(.*?)"
    r"</(?:\1|parameter)>", re.DOTALL)
"""An XML call's parameter holding code (``<parameter=new_str>``, ``<parameter name="content">``, Cline's
``<content>``, ``<diff>``): its body."""




class Row(NamedTuple):
    """A line of a prefixed view. The code of all rows with a code start, joined, is tagged as one text; rows that do
    not emit only give context."""

    start: int
    code: int
    """Where the line's code starts; -1 for a line without code."""
    end: int
    """Where the code ends: the line's end, newline included, unless a border follows it."""
    emit: bool
    tail: int = -1
    """The line's end when a frame's right border (padding, a box glyph, the newline) follows the code at ``end``;
    the joined code then ends the line with a newline of its own."""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


_PY_CODE_LINE = re.compile(r"\s*(?:(?:async\s+)?def\s|class\s|@|if\s|for\s|while\s|with\s|try:|return\b|\w+\s*=|"
                           r"(?:raise|pass|break|continue|yield|assert|del|import|from|global|nonlocal)\b|"
                           r"[\w.]+(?:\[[^\]\n]*\])*\s*(?:[-+*/%|&^]|<<|>>|//|\*\*)?=(?!=)|[\w.]+\(.*\)\s*$)")
"""A line that opens a statement (a header, an assignment to a name, an attribute or an item, a call standing alone):
its indent is a scope's body, not a bracket's continuation."""
_PY_CLAUSE = re.compile(r"\s*(?:(elif\b|else\s*:)|(except\b|finally\s*:))")
"""A clause continuing a compound statement: its header must reopen as ``if`` (group 1) or ``try`` (group 2)."""


def _python_reopen(text: str) -> str:
    """Headers that reopen the scopes of a Python view starting mid-block ("" when it starts at 0).

    The scopes are the first line's indent and the indents of the statements that follow it up to
    the first line at column 0 (comment lines aside: their indent means nothing to Python); a level
    holding definitions reopens as a class, others as a def. A level where an ``elif``/``else``
    (``except``/``finally``) continues a statement the view starts inside reopens that statement as
    ``if _:`` (``try:``) one level in, column 0 too (a module-level ``if``/``else`` choosing definitions);
    a view starting on such a clause gets a stub statement for it to continue.
    """
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]  # as Python reads
    if not lines or _indent(lines[0]) == 0:
        return ""
    top = _indent(lines[0])  # the lowest indent seen so far: deeper lines belong to scopes already open
    levels: dict[int, str] = {top: "def"}  # body indent -> what its header reopens as
    clauses: dict[int, str] = {}  # indent -> the compound statement a clause there continues
    spelt = {0: ""}  # indent -> as the view writes it (tabs stay tabs: a header in spaces would not line up)
    for ln in lines:
        ind = _indent(ln)
        spelt.setdefault(ind, ln[:ind])
        clause = _PY_CLAUSE.match(ln)
        if ind == 0:  # the view's scopes end here; a clause at column 0 continues a statement at module level
            if clause:
                clauses[0] = "if _:" if clause.group(1) else "try:"
            break
        if ind <= top and clause:
            clauses.setdefault(ind, "if _:" if clause.group(1) else "try:")
        elif ind <= top and _PY_CODE_LINE.match(ln):
            if re.match(r"\s*(?:async\s+def|def|class)\s|\s*@", ln):
                levels[ind] = "class"
        else:
            continue
        levels.setdefault(ind, "def")
        top = min(top, ind)
    bodies = sorted(levels)
    out = []
    for head, body in zip([0] + bodies[:-1], bodies):
        opener = clauses.get(head) or ("class _:" if levels[body] == "class" else "def _():")
        out.append(spelt[head] + opener + "\n")
    first = _PY_CLAUSE.match(lines[0])
    if first:  # the view starts on the clause itself: a stub statement for it to continue
        lead = spelt[_indent(lines[0])]
        step = "\t" if lead.endswith("\t") else "    "
        out.append(lead + ("if _:" if first.group(1) else "try:") + "\n" + lead + step + "pass\n")
    return "".join(out)


_PY_ATOM = re.compile(r"""[rRbBuUfF]{0,2}(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|#[^\n]*""")
"""A one-line Python string or a comment: brackets inside them do not count."""
_ELIDED_LINE = re.compile(r"^([ \t]*)(?:\.\.\.|\u2026|\u22ee(?:\.\.\.)?)[ \t]*\n(?:[ \t]*\n)*(?=\1[ \t])", re.MULTILINE)
"""A line standing for lines left out (Agentless's ``...``, a repository map's ``⋮...``) where the next code is
indented deeper: no Python statement is (a stub body ``...`` is followed by a line at its indent or less). Parsed
as a statement, one at column 0 before an indented piece would end every scope the piece is in."""


def _blank(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with the characters of ``spans`` (line breaks aside) made spaces."""
    if not spans:
        return text
    out = list(text)
    for a, b in spans:
        out[a:b] = re.sub(r"[^\n]", " ", text[a:b])
    return "".join(out)


class _Parsed(NamedTuple):
    """A piece of code as parsed: the error share, the wrapped text and its bytes, the regions, the wrap's prefix
    length, and the markup lines blanked for the parse ((start, end) in the text; none when the text won as it is)."""

    share: float
    full: str
    src: bytes
    regions: _CodeRegions
    cut: int
    blanked: tuple[tuple[int, int], ...]


TAIL_LINES = 40  # how far a view's first lines are searched for the end of a statement begun before it


def _lowest_depth(lines: list[str], opens: str, closes: str) -> tuple[int, int]:
    """The lowest running depth of brackets over ``lines`` (opened minus closed, never above 0) and how many lines it
    takes to first reach it: a view that starts inside brackets closes more than it opens."""
    depth = low = reached = 0
    for k, line in enumerate(lines, 1):
        for ch in line:
            depth += (ch in opens) - (ch in closes)
            if depth < low:
                low, reached = depth, k
    return low, reached


def python_tail(text: str) -> int:
    """Length of the tail of a statement a Python view starts inside (``    HTTPStatus.NOT_MODIFIED)):``, the last
    items of a dict and its ``})``): the leading lines up to the one where more brackets have closed than opened,
    the most in the first ``TAIL_LINES`` lines and before any triple quote, or else from the close of a string the
    view starts inside (``_tail_after_close``); 0 when none close more than open. Parsed as they are, those lines are
    errors that pull the statements after them out of their scopes."""
    lines = text.splitlines(keepends=True)[:TAIL_LINES]
    quoted = next((k for k, line in enumerate(lines) if '"""' in line or "'''" in line), len(lines))
    bare = [_PY_ATOM.sub("", line) for line in lines[:quoted]]
    _low, reached = _lowest_depth(bare, "([{", ")]}")
    if not reached and quoted < len(lines):
        reached = _tail_after_close(text, lines, quoted)
    return sum(len(line) for line in lines[:reached or _header_tail(bare)])


def _tail_after_close(text: str, lines: list[str], quoted: int) -> int:
    """For a view that starts inside a triple-quoted string (an odd number of its quote, closed on line ``quoted``
    after lines that read as no code: a message's text, not a file passed as a string): how many leading lines end
    the statement the string is part of (``''' % escape(`` / ``    ''.join(parts))``), searched from the close up to
    the next triple quote; 0 when its brackets close no more than they open."""
    line = lines[quoted]
    first = min((q for q in ('"""', "'''") if q in line), key=line.index)
    if text.count(first) % 2 == 0 or any(line_label(ln) == _CODE_LINE for ln in lines[:quoted]):
        return 0
    more = next((k for k in range(quoted + 1, len(lines)) if '"""' in lines[k] or "'''" in lines[k]), len(lines))
    rest = [line[line.index(first) + 3:], *lines[quoted + 1:more]]
    _low, closed = _lowest_depth([_PY_ATOM.sub("", ln) for ln in rest], "([{", ")]}")
    return quoted + closed if closed else 0


_KEYWORD_START = re.compile(r"[ \t]*(?:@|(?:if|elif|else|for|while|with|try|except|finally|def|class|async|match"
                            r"|case|lambda|return|yield|raise|import|from|pass|break|continue|del|global|nonlocal"
                            r"|assert)\b)")
"""A line opening on a statement's keyword or a decorator: a statement of its own, not the rest of one begun before
it."""


def _header_tail(bare: list[str]) -> int:
    """How many leading lines (strings and comments removed) end a compound statement's header begun before the
    view (``    value in ('a', 'b'):`` after an ``if x and \\``): lines joined by backslashes up to one ending with a
    colon whose next non-blank line is indented deeper, the first opening on no keyword; 0 when the view opens
    otherwise."""
    k = 0
    while k < len(bare) and bare[k].rstrip().endswith("\\"):
        k += 1
    if k + 1 >= len(bare) or not bare[k].rstrip().endswith(":") or _KEYWORD_START.match(bare[0]):
        return 0
    after = next((line for line in bare[k + 1:] if line.strip()), "")
    return k + 1 if after and _indent(after) > _indent(bare[k]) else 0


def _python_wraps(text: str) -> list[tuple[str, str]]:
    """(prefix, suffix) pairs to try when parsing a Python view: reopened scopes; with an odd number
    of triple quotes, the view either starts inside a string (open one first) or ends inside one
    (close it after), the one leaving the shorter string tried first (a tie of errors goes to it); then
    nothing. Each suffix ends with the closers of the brackets left open (``_python_closers``) and a stub
    definition after a decorator the view ends on."""
    reopen = _python_reopen(text)
    out = [(reopen, "")]
    quotes = [q for q in ('"""', "'''") if q in text]
    if quotes:
        first = min(quotes, key=text.index)
        lead = text[: len(text) - len(text.lstrip())].rsplit("\n", 1)[-1]
        opened, closed = (reopen + lead + first + "\n", ""), (reopen, "\n" + first + "\n")
        if text.count(first) % 2:  # the string from the view's start to its first quote, or from its last to the end
            out = [opened, closed] if text.index(first) <= len(text) - text.rindex(first) else [closed, opened]
        elif reopen:  # a view from the middle of a file may start and end inside strings
            out.append((opened[0], closed[1]))
    if reopen:
        out.append(("", ""))
    wraps = []
    for pre, post in out:
        post += _python_closers(pre + text + post)
        wraps.append((pre, post + _decorated(text + post)))
    return wraps


_DECORATOR_LINE = re.compile(r"[ \t]*@[\w.]")
_CLOSING_LINE = re.compile(r"[ \t]*[)\]}]")


def _decorated(text: str) -> str:
    """A stub definition for a decorator the view ends on (``@cython.locals(\\n    n=cython.int,\\n)``, its ``def``
    cut off; "" when none): a decorator with nothing to decorate is an error that swallows the code before it."""
    at = text.rfind("@")
    if at < 0:
        return ""
    start, end = text.rfind("\n", 0, at) + 1, text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)]
    if not _DECORATOR_LINE.match(line):
        return ""
    indent = _indent(line)
    for after in text[start:].split("\n")[1:]:  # its arguments' lines, deeper or closing them, and blank lines
        if after.strip() and _indent(after) <= indent and not _CLOSING_LINE.match(after):
            return ""
    return f"\n{line[:indent]}def _(): pass"


_PY_STRINGS = re.compile(r'''"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*(?P<dq>""")?'''
                         r"""|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*(?P<sq>''')?"""
                         r'''|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'|#[^\n]*''')
"""A Python string (a triple-quoted one to its end or the text's) or a comment, the loops unrolled; a prefix
(``r``, ``f``) stays out of the match, which changes no count of brackets."""
_BRACKETS = re.compile(r"[()\[\]{}]")
_CLOSER = {"(": ")", "[": "]", "{": "}"}
_PY_HEADER = re.compile(r"([ \t]*)(?:(?:async[ \t]+)?(?:def|for|with)|class|if|elif|while|except)\b")


def _unclosed(bare: str) -> list[tuple[str, int]]:
    """The brackets ``bare`` (strings and comments removed) leaves open, outermost first: (the closer each needs,
    where its opener is). A closer with nothing open before it closes what opened before the text: skipped."""
    stack: list[tuple[str, int]] = []
    for m in _BRACKETS.finditer(bare):
        if m.group() in _CLOSER:
            stack.append((_CLOSER[m.group()], m.start()))
        elif stack:
            stack.pop()
    return stack


def _python_closers(text: str) -> str:
    """A line break and the brackets closing those ``text`` leaves open ("" when none, or when it ends inside a
    triple-quoted string), and a colon and ``pass`` when they opened in a compound statement's header: a view cut
    inside a call, a literal or an ``if (`` then parses whole, not as an error that swallows the statements before
    it. Brackets closing what opened before the view are ``python_tail``'s."""
    bare = _PY_STRINGS.sub("", text)
    # most views end here without a loop in Python (a close of what opened before the view could hide an open
    # bracket; python_tail blanks such lines at the view's start)
    if all(bare.count(a) <= bare.count(b) for a, b in _CLOSER.items()):
        return ""
    stack = _unclosed(bare)
    if not stack:
        return ""
    last = deque(_PY_STRINGS.finditer(text), maxlen=1)  # the last string or comment, without a loop in Python
    if last and last[0].end() == len(text) and not (last[0]["dq"] or last[0]["sq"]) \
            and last[0].group(0)[:3] in ('"""', "'''"):
        return ""  # ends inside a triple-quoted string: its own wrap closes it
    line = bare[bare.rfind("\n", 0, stack[0][1]) + 1:]
    closers = "".join(closer for closer, _ in reversed(stack))
    header = _PY_HEADER.match(line)
    if header:  # a header cut inside its brackets: closed at its indent (at column 0 tree-sitter's scanner
        # misreads the block after), then its colon and a stub body
        return f"\n{header.group(1)}{closers}:\n{header.group(1)}    pass"
    return "\n" + line[:len(line) - len(line.lstrip())] + closers  # at column 0 it would end the scopes first


_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)')
"""A string, template or comment of a brace language (a block comment to its end or the text's): no bracket in it
counts."""
_BRACE_OPENERS = {  # (one level, outer of several, inner of several, more readings of the outer level)
    "javascript": ("function _() {\n", "class X_ {\n", "x_() {\n", ()),
    "typescript": ("function _() {\n", "class X_ {\n", "x_() {\n", ()),
    "tsx": ("function _() {\n", "class X_ {\n", "x_() {\n", ()),
    "java": ("void x_() {\n", "class X_ {\n", "void x_() {\n", ()),
    "go": ("func x_() {\n", "func x_() {\n", "{\n", ("var _ = x_{\n", "type X_ struct {\n", "type X_ interface {\n")),
    "rust": ("fn x_() {\n", "impl X_ {\n", "fn x_() {\n", ()),
}
"""The last are tried after the others, inner levels as ``{``: a Go view starting inside a composite literal (its
tables of test cases, ``{"HTTP/1.1", 1, 1, true},`` rows), a struct's fields or an interface's methods."""


_COMMENT_TAIL = re.compile(r"(?:[ \t]*\*[^\n]*\n)*?[ \t]*\*/")
"""The lines ending a block comment a view starts inside: each opens on ``*`` (`` * @returns {X}``), the last on
``*/`` (a ``*/`` inside a line, ``accept: '*/*'``, is none)."""


def _comment_tail(text: str) -> int:
    """Length of the end of a block comment a brace-language view starts inside, 0 when it starts outside one."""
    m = _COMMENT_TAIL.match(text.lstrip("\n"))
    return m.end() + len(text) - len(text.lstrip("\n")) if m else 0


def _brace_tail(text: str) -> int:
    """Length of the tail of a call a brace-language view starts inside (``    this._state,`` ... ``  )``): up to the
    ``)`` or ``]`` where more have closed than opened, the most before the first brace or ``;`` (a statement's or a
    block's edge) in the first ``TAIL_LINES`` lines; 0 when none close more than open there. Parsed as they are,
    those lines are errors that pull the method after them out of its class."""
    start = end = _comment_tail(text)
    for _ in range(TAIL_LINES):
        end = text.find("\n", end) + 1 or len(text)
    head = text[start:end]
    if ")" not in head and "]" not in head:  # most views: nothing to close
        return 0
    bare = _QUOTED.sub(lambda m: " " * len(m.group()), head)
    depth = low = cut = 0
    for i, ch in enumerate(bare):
        if ch in "{};":
            break
        depth += (ch in "([") - (ch in ")]")
        if depth < low:
            low, cut = depth, i + 1
    return start + cut if cut else 0


def _brace_reopen(text: str, language: str) -> tuple[str, ...]:
    """Openers to try for the braces a view starting mid-block closes without opening (none when it closes none):
    one level reopens as a function, several as a class and the methods inside it; where the language has classes,
    also as a method of a class the view does not close, the levels past the method as blocks (a view from inside a
    method's ``if`` goes on with the class's other methods), and one level as a class (its fields and methods); last,
    the language's other readings of a block (Go's literals, structs, interfaces). A view starting inside a block
    comment is read from its close; the openers then open a comment for it last."""
    if language not in _BRACE_OPENERS:
        return ()
    tail = _comment_tail(text)
    code = text[tail:]
    low, _reached = _lowest_depth([_QUOTED.sub("", code)], "{", "}")
    one, outer, inner, more = _BRACE_OPENERS[language]
    if low == 0:  # closes nothing: indented, it may still start inside a class's body or a function's
        indented = code.lstrip("\n")[:1] in (" ", "\t")
        openers: tuple[str, ...] = ("", one, outer) if outer != one and indented else ("",)
    else:
        first = one if low == -1 else outer + inner * (-low - 1)
        openers = (first,) if outer == one else (first, outer + inner + "{\n" * (-low - 1), outer)
        openers += tuple(pre + "{\n" * (-low - 1) for pre in more)
    return tuple(pre + "/*" for pre in openers) if tail else openers if openers != ("",) else ()


def _brace_closers(text: str) -> str:
    """A line break and the brackets closing those a brace-language view leaves open ("" when none), after a ``*/``
    when it ends inside a block comment: a view cut inside a method's body (``async get (keys) {`` and its first
    statements) parses as that method, not as an error that reads its header as a call. Brackets closing what
    opened before the view are ``_brace_reopen``'s."""
    text = text[_comment_tail(text):]
    last = deque(_QUOTED.finditer(text), maxlen=1)  # the last string or comment
    comment = bool(last) and last[0].end() == len(text) and last[0].group().startswith("/*") \
        and not last[0].group().endswith("*/")
    closers = "".join(closer for closer, _ in reversed(_unclosed(_QUOTED.sub("", text))))
    return ("\n*/" if comment else "") + ("\n" + closers if closers else "")


_NOT_CARRIED = SHELLS | {"json", "yaml"}
"""Fence languages of a call's own text (a command, the arguments: DeepSeek's ```` ```json ```` after the tool's
name), not code it carries."""


class StructureTagger:
    """Structural tags for spans of the conversation; block ids stay unique across calls.

    Code is found by content in every span: Markdown fences, line-numbered views (``cat -n``,
    ``nl``, ``12 | x``), diff hunks (old and new side parsed apart), ``grep -n`` hits over several
    files (each file's lines in its language), JSON strings holding a file, and raw code found by
    line heuristics. The language comes from the span's info, a fence, a path named nearby, or the
    grammar that parses the code with the fewest errors. Tool calls in any syntax are TOOL_CALL;
    test logs are found by what the runner prints.
    """

    def __init__(self) -> None:
        self._grammars: dict[str, _Grammar | None] = {}
        self._alloc = _Counter()
        self._guessed: dict[tuple[str, str], _Parsed] = {}
        """Parses made while guessing a piece's language, by (piece, language): the winner's is not parsed again."""

    # ---------------------------------------------------------------- public API
    def intervals(self, text: str, info: SpanInfo) -> list[tuple[int, int, TokenTag]]:
        """Char intervals [start, end) of text with their tags, covering the text in order (a lone surrogate read as
        U+FFFD, as ``tag`` reads it)."""
        if not text:
            return []
        text = _SURROGATE.sub("\ufffd", text)
        self._guessed.clear()  # a guess is reused within the span it was made for
        cleaned = clean_media(text)  # colours, HTML escaping, a terminal's wraps: tag the text without them
        if cleaned is not None:
            plain, back = cleaned
            mapped = [Interval(back[s] if s else 0, back[e], t) for s, e, t in self._intervals(plain, info)]
            return _normalize(mapped, len(text))
        return self._intervals(text, info)

    def _intervals(self, text: str, info: SpanInfo) -> list[Interval]:
        language = (info.language or "").lower() or None
        language = language_for_fence(language) or language if language else None  # accept "py", "ts"...
        if info.kind in CODE_KINDS or (info.kind == SegmentKind.TOOL_OUTPUT and language is not None):
            default = "code"
        elif info.kind in LOG_KINDS:
            default = "log"
        elif info.kind == SegmentKind.TOOL_CALL:
            default = "call"
        else:
            default = "prose"
        cuts = label_cuts(text) if default != "code" else []  # a result after its label: read from there
        result: list[Interval] = []
        for start, end in itertools.pairwise([0, *cuts, len(text)]):
            result.extend(_shift(self._content(text[start:end], language, default), start))
        return _normalize(sorted(result, key=itemgetter(0)), len(text))

    def tag(self, text: str, offsets: Sequence[tuple[int, int]], info: SpanInfo) -> list[TokenTag]:
        """One TokenTag per token, from the interval holding the token's first non-space char; the tokens
        holding a JSON string's escaped line breaks are marked ``ends_line``. A text the tagger fails on goes untagged
        with a warning (its tokens are scored as plain text): a tagging bug never ends the session reading it. A lone
        surrogate (bytes a tool's output held that were not UTF-8, read with ``surrogateescape``) is read as U+FFFD."""
        text = _SURROGATE.sub("\ufffd", text)
        try:
            strings = line_strings(text)
            return tags_for_offsets(text, offsets, self.intervals(text, info), escaped_whitespace(strings),
                                    [(js.start, js.end) for js in strings])
        except Exception as exc:  # noqa: BLE001 - any bug here; Ctrl-C (not an Exception) still stops
            warnings.warn(f"tagger: a {info.kind.name.lower()} span of {len(text)} chars left untagged "
                          f"({type(exc).__name__}: {exc})", RuntimeWarning, stacklevel=2)
            return [NO_TAG] * len(offsets)

    # ---------------------------------------------------------------- span shapes
    def _content(self, text: str, language: str | None, default: str, fence: bool = False) -> list[Interval]:
        """Any text: tool calls (in prose), then fences, then the shapes of the rest. ``fence``: the text is a
        fence's code, so a fence inside it is the code's own text (a docstring's example), not a new block, unless
        the code is Markdown or text."""
        fence = fence and language not in PROSE_LANGUAGES
        if language in PROSE_LANGUAGES:
            rows = numbered_rows(text)
            if rows is not None:
                return self._rows(text, [Row(s, c, e, True) for s, c, e in rows],
                                  lambda code: self._content(code, None, "prose"))
            language, default = None, "prose" if default == "code" else default
        found = prompts(text)
        if found and not _FENCED.search(text):  # a screen, whatever the span was taken for
            return self._screen(text, found, language, default)
        if default != "code" and looks_like_test_log(text):
            default = "log"
        if default in ("prose", "call"):
            calls = tool_call_spans(text)
            if not calls and default == "call":
                return self._call(text)
            if calls:
                out: list[Interval] = []
                pos = 0
                for s, e in calls:
                    out.extend(_shift(self._fenced(text[pos:s], language, "prose"), pos))
                    out.extend(_shift(self._call(text[s:e]), s))
                    pos = e
                out.extend(_shift(self._fenced(text[pos:], language, "prose"), pos))
                return out
        return self._shapes(text, language, default) if fence else self._fenced(text, language, default)

    def _screen(self, text: str, found: list[tuple[int, int]], language: str | None, default: str) -> list[Interval]:
        """A terminal screen: each prompt line is a call (with the heredoc typed after it), the output after it is
        read by content: a test log, else code in the language of the path its command names, else text."""
        out: list[Interval] = []
        pos, lang = 0, language

        def output(piece: str, lang: str | None) -> list[Interval]:
            shape = "log" if looks_like_test_log(piece) else "code" if lang else "log" if default == "log" else "prose"
            return self._content(piece, lang, shape)

        for start, stop in found:
            if start < pos:
                continue
            out.extend(_shift(output(text[pos:start], lang), pos))
            end = text.find("\n", stop)
            end = len(text) if end < 0 else end + 1
            bodies = heredocs(text[start:]) if heredoc_delimiter(text[start:end]) else []
            if bodies and bodies[0][0] == end - start:  # the heredoc (here-string) it opens: up to its delimiter
                close = text.find("\n", start + bodies[0][1])
                end = len(text) if close < 0 else close + 1
            command = text[start:end]
            out.extend(_shift(self._call(command), start))
            lang = call_language(command[stop - start:])
            pos = end
        out.extend(_shift(output(text[pos:], lang), pos))
        return out

    def _fenced(self, text: str, language: str | None, default: str) -> list[Interval]:
        """Code inside Markdown fences (in the fence's language, else a path named above it, else
        the span's), the shapes of everything outside them."""
        if not text:
            return []
        segments = fence_segments(text)
        if len(segments) == 1 and not segments[0][3]:
            return self._shapes(text, language, default)
        out: list[Interval] = []
        for start, end, fence_info, is_code in segments:
            piece = text[start:end]
            if is_code:
                lang = language_for_fence(fence_info or "")
                inner = "code"
                if lang is None and not (fence_info or "").strip():
                    lang = self._path_language(text[:start]) or (language if default == "code" else None)
                    if lang is None and looks_like_test_log(piece):  # a log pasted in a plain fence
                        inner = "log"
                out.extend(_shift(self._content(piece, lang, inner, fence=True), start))
            else:
                out.extend(_shift(self._shapes(piece, language, "prose" if default == "code" else default), start))
        return out

    def _call(self, text: str) -> list[Interval]:
        """A tool call: TOOL_CALL lines (a code action's code too), except code it carries (a fence in a language
        other than a shell's, JSON's or YAML's: those hold the call itself and its arguments; the body of a command
        in a plain fence such as SWE-agent's ``edit 12:13``, a JSON string argument holding a file)."""
        if CODE_ACTION.match(text):  # the code is the call, except code it passes in a string
            return self._with_code_strings(text, self._call_args(text))
        segments = fence_segments(text)
        if any(is_code and language_for_fence(info or "") not in _NOT_CARRIED for _s, _e, info, is_code in segments):
            out: list[Interval] = []
            for start, end, info, is_code in segments:
                piece = text[start:end]
                if is_code and language_for_fence(info or "") not in _NOT_CARRIED:
                    lang = language_for_fence(info or "") or call_language(text[:start])
                    out.extend(_shift(self._carried(piece, lang, not (info or "").strip()), start))
                else:
                    out.extend(_shift(self._call_args(piece), start))
            return out
        return self._call_args(text)

    def _carried(self, piece: str, language: str | None, plain: bool) -> list[Interval]:
        """A fence inside a call: code, or when the fence is plain and opens with a command, that command
        line and its ``end_of_edit`` terminator as call lines around the code between them."""
        first, nl, rest = piece.partition("\n")
        if not (plain and is_command(first)):
            return self._content(piece, language, "code", fence=True)
        m = _END_OF_EDIT.search(rest)
        body, tail = (rest[:m.start()], rest[m.start():]) if m else (rest, "")
        start = len(first) + len(nl)
        out = self._call_lines(first + nl)
        out.extend(_shift(self._content(body, language, "code", fence=True), start))
        out.extend(_shift(self._call_lines(tail), start + len(body)))
        return out

    def _call_args(self, text: str) -> list[Interval]:
        """Call lines, except code carried in XML parameters and YAML block scalars (read as code in the language
        of the path the call names) and in JSON strings."""
        blocks = yaml_blocks(text, min_lines=1)
        if blocks:
            return self._yaml_args(text, blocks)
        params = list(_XML_CODE_PARAM.finditer(text))
        if not params:
            return self._json_args(text)
        lang = call_language(text)
        out: list[Interval] = []
        pos = 0
        for m in params:
            out.extend(_shift(self._json_args(text[pos:m.start(2)]), pos))
            out.extend(_shift(self._content(m.group(2), lang, "code"), m.start(2)))
            pos = m.end(2)
        out.extend(_shift(self._json_args(text[pos:]), pos))
        return out

    def _yaml_args(self, text: str, blocks: list[YamlBlock]) -> list[Interval]:
        """A call written as YAML: a block scalar under a code key is code, under a command key command lines,
        any other is read by content; the rest are call lines."""
        lang = call_language(text)
        out: list[Interval] = []
        pos = 0
        for block in blocks:
            start = block.rows[0][0]
            out.extend(_shift(self._json_args(text[pos:start]), pos))
            shape = _argument_shape(block.key)
            out.extend(self._rows(text, [Row(s, c, e, True) for s, c, e in block.rows],
                                  lambda code, shape=shape: self._value(code, lang, shape)))
            pos = block.rows[-1][2]
        out.extend(_shift(self._json_args(text[pos:]), pos))
        return out

    def _json_args(self, text: str) -> list[Interval]:
        """A call's arguments: JSON strings and Python literals holding a definition (``replace('a.py', 'def f():\\n
        ...')``) read as their keys say, the rest as command lines."""
        strings: list[JsonString] = []
        for js in sorted([*string_values(text), *code_literals(text)], key=lambda js: (js.start, -js.end)):
            if not strings or js.start >= strings[-1].end:  # the outermost: a quote inside a literal opens nothing
                strings.append(js)
        lang = call_language(text)
        out: list[Interval] = []
        pos = 0
        for js in strings:
            out.extend(_shift(self._call_lines(text[pos:js.start]), pos))
            out.extend(self._json_value(js, lang, _argument_shape(js.key)))
            pos = js.end
        out.extend(_shift(self._call_lines(text[pos:]), pos))
        return out

    def _call_lines(self, text: str) -> list[Interval]:
        """Command lines as TOOL_CALL, except the heredocs and here-strings they feed: code in the language the
        command names (``cat > a.py <<'EOF'``, ``python3 - <<'PY'``), else read by content (a commit message is
        prose)."""
        if not text:
            return []
        out: list[Interval] = []
        pos = 0
        for s, e, lang in heredocs(text):
            out.extend(_shift(self._command_lines(text[pos:s]), pos))
            body = text[s:e]
            out.extend(_shift(self._content(body, lang, "code") if lang else self._lines(body, None, "prose"), s))
            pos = e
        out.extend(_shift(self._command_lines(text[pos:]), pos))
        return out

    def _command_lines(self, text: str) -> list[Interval]:
        """TOOL_CALL lines, except definitions the call carries unquoted and unfenced below its first line (``REPLACE
        a.py`` then the code, a triple-quoted argument): read as code in the language of the path it names."""
        if not text:
            return []
        first = text.find("\n") + 1
        below = code_regions(text, first, len(text)) if first and text.count("\n", first) >= 2 else []
        regions = [(s, e) for s, e in below if _opens_definition(text, s, e)]  # not a code action's own lines
        lang = call_language(text) if regions else None

        def calls(lo: int, hi: int) -> list[Interval]:
            plan = [PlanLine(a, b, BlockType.TOOL_CALL, 0, 0) for a, b in _line_spans(text, lo, hi)]
            return _plan_to_intervals(text, plan, self._alloc)

        out: list[Interval] = []
        pos = 0
        for s, e in regions:
            out.extend(calls(pos, s))
            out.extend(_shift(self._content(text[s:e], lang, "code"), s))
            pos = e
        return out + calls(pos, len(text))

    def _value(self, text: str, language: str | None, shape: str) -> list[Interval]:
        """A value a call or result carries, read as ``shape`` ("command": shell lines typed or run)."""
        return self._call_lines(text) if shape == "command" else self._content(text, language, shape)

    def _json_value(self, js: JsonString, language: str | None, default: str) -> list[Interval]:
        """Tags of a decoded JSON string (``default`` "command": shell lines typed or run), mapped back onto the
        escaped source chars."""
        inner = _normalize(sorted(self._value(js.value, language, default), key=itemgetter(0)), len(js.value))
        return [Interval(js.offsets[s], js.offsets[e], t) for s, e, t in inner if js.offsets[e] > js.offsets[s]]

    def _shapes(self, text: str, language: str | None, default: str) -> list[Interval]:
        """JSON strings holding files, YAML block scalars, numbered views, diff hunks, else raw lines."""
        if not text:
            return []
        strings = carried_strings(text)
        if strings and (default != "code" or _json_result(text, strings)):
            lang = language or call_language(text)
            out: list[Interval] = []
            pos = 0
            for js in strings:
                out.extend(_shift(self._lines(text[pos:js.start], None, "log" if default == "log" else "prose"), pos))
                code = js.key in CODE_KEYS and not (default == "log" and _ends_like_a_log(js.value))  # a run's log
                shape = "code" if code else default
                out.extend(self._json_value(js, lang, shape))
                pos = js.end
            out.extend(_shift(self._lines(text[pos:], None, "log" if default == "log" else "prose"), pos))
            return out
        rows = yaml_block_rows(text) if default != "code" or language not in (None, "yaml") else None
        if rows is not None:  # a YAML result (even of a file view): block scalars are files, in the language named
            lang = language or call_language(text)
            return self._rows(text, [Row(s, c, e, True) for s, c, e in rows],
                              lambda code: self._shapes(code, lang, "code" if default == "prose" else default))
        rows = numbered_rows(text)
        if rows is not None:
            lang = language or self._path_language(text[: next((s for s, c, _e in rows if c >= 0), 0)])
            inner = "code" if default in ("code", "prose", "log") else default
            return self._rows(text, [Row(s, c, e, True) for s, c, e in rows],
                              lambda code: self._lines(code, lang, inner))
        rows = prefixed_rows(text) if default != "code" else None
        if rows is not None:  # org-babel's short results behind ``: ``, a quoted block behind ``> ``
            return self._framed(text, rows, language, default)
        rows = indented_rows(text)
        if rows is not None:  # a Markdown code block: the margin is a frame
            return self._framed(text, rows, language, default)
        hits = grep_rows(text) or outline_rows(text) or ctags_rows(text)
        if hits is not None:
            return self._grep(text, hits, default, language)
        rows = framed_rows(text)
        if rows is not None:  # a box drawn around the text, a log's source label or timestamp on every line
            return self._framed(text, rows, language, default)
        hits = bare_grep_rows(text)
        if hits is not None:  # one file's hits: its language from the call, else from a path before the first hit
            first = next(r.start for run in hits for r in run if r.code >= 0)
            return self._grep(text, hits, default, language or self._path_language(text[:first]))
        hunks = diff_hunks(text, 0, len(text)) or numbered_hunks(text)
        if hunks:
            return self._diff(text, hunks, language, default)
        return self._lines(text, language, default)

    def _framed(self, text: str, rows: PrefixedRows, language: str | None, default: str) -> list[Interval]:
        """Text behind a prefix or inside a frame, read by content as if the frame were not there."""
        return self._rows(text, [Row(s, c, ce, True, e if ce < e else -1) for s, c, ce, e in rows],
                          lambda code: self._content(code, language, default))

    def _rows(self, text: str, rows: list[Row], inner: Callable[[str], list[Interval]]) -> list[Interval]:
        """A prefixed view (numbers, diff signs, a frame): tag the joined code with ``inner``, map tags back.

        A prefix (and a right border) gets its line's block and depth with block type NONE; rows without code are
        TEXT.
        """
        code = "".join(text[r.code:r.end] + ("\n" if r.tail > r.end else "") for r in rows if r.code >= 0)
        code_ivs = _normalize(sorted(inner(code), key=itemgetter(0)), len(code)) if code else []
        out: list[Interval] = []
        j = 0
        pos = 0  # position in the joined code
        for row in rows:
            if row.code < 0:
                if row.emit:
                    out.extend(_plan_to_intervals(text, _prose_plan(text, row.start, row.end), self._alloc))
                continue
            stop = pos + row.end - row.code
            while j < len(code_ivs) - 1 and code_ivs[j][1] <= pos:
                j += 1
            if row.emit and code_ivs:
                line_tag = code_ivs[j][2]
                frame = TokenTag(BlockType.NONE, line_tag.block_id, line_tag.depth)
                _emit(out, row.start, row.code, frame)
                k = j
                while k < len(code_ivs) and code_ivs[k][0] < stop:
                    s, e, tag = code_ivs[k]
                    _emit(out, row.code + max(s, pos) - pos, row.code + min(e, stop) - pos, tag)
                    k += 1
                if row.tail > row.end:
                    _emit(out, row.end, row.tail, frame)
            pos = stop + (row.tail > row.end)
        return out

    def _grep(self, text: str, runs: Runs, default: str, language: str | None) -> list[Interval]:
        """Search hits or a repository map: each run of neighbouring lines of one file is code in that file's
        language, else in ``language`` (a lone ``def f(x):`` hit is a signature), the ``path:12:`` or ``│`` prefix
        is NONE, other lines are ``default``."""
        out: list[Interval] = []
        other = "log" if default == "log" else "prose"
        for run in runs:
            first = run[0]
            if first.code < 0:
                out.extend(_shift(self._lines(text[first.start:first.end], None, other), first.start))
                continue
            lang = language_for_path(first.path) if first.path else language
            out.extend(self._rows(text, [Row(r.start, r.code, r.end, True) for r in run],
                                  lambda code: self._lines(code, lang, "code")))
        return out

    def _diff(self, text: str, hunks: list[Hunk], language: str | None, default: str) -> list[Interval]:
        """Diff hunks: new side (context and + lines) and old side (- lines) parsed apart."""
        out: list[Interval] = []
        pos = 0
        for hunk in hunks:
            first, last = hunk.rows[0][0], hunk.rows[-1][2]
            out.extend(_shift(self._lines(text[pos:first], None, "log" if default == "log" else "prose"), pos))
            lang = language_for_path(hunk.path) if hunk.path else None
            lang = lang or language

            def side(signs: str, emit: str) -> list[Row]:
                return [Row(s, c, e, sign in emit) for s, c, e, sign in hunk.rows if sign in signs]

            out.extend(self._rows(text, side(" +", " +"), lambda code: self._lines(code, lang, "code")))
            if any(sign == "-" for _s, _c, _e, sign in hunk.rows):
                out.extend(self._rows(text, side(" -", "-"), lambda code: self._lines(code, lang, "code")))
            pos = last
        out.extend(_shift(self._lines(text[pos:], None, "log" if default == "log" else "prose"), pos))
        return out

    def _lines(self, text: str, language: str | None, default: str) -> list[Interval]:
        """Raw lines: code regions (by line heuristics) tagged as code, the rest as ``default`` says."""
        if not text:
            return []
        if default == "log" and looks_like_test_log(text):
            return _plan_to_intervals(text, _log_plan(text, 0, len(text)), self._alloc)
        regions = code_regions(text, 0, len(text), whole=default == "code")
        if default == "code" and not regions:
            regions = [(0, len(text))]
        other = _log_plan if default == "log" else _prose_plan
        langs = [language or self._path_language(text[:s]) or best_language(text[s:e], self._error_share)
                 for s, e in regions]
        known = [lang for lang in langs if lang]
        usual = max(known, key=known.count) if known else None  # a region too plain to tell: the span's language
        out: list[Interval] = []
        pos = 0
        for (s, e), lang in zip(regions, langs):
            if s > pos:
                out.extend(_plan_to_intervals(text, other(text, pos, s), self._alloc))
            out.extend(_shift(self.code(text[s:e], lang or usual), s))
            pos = e
        if pos < len(text):
            out.extend(_plan_to_intervals(text, other(text, pos, len(text)), self._alloc))
        return out

    @staticmethod
    def _path_language(text: str) -> str | None:
        """Language of the last path named in ``text`` (a header such as ``[File: a/b.py]``)."""
        return call_language(text[-400:]) if text else None

    # ---------------------------------------------------------------- code
    def _error_share(self, code: str, language: str) -> float | None:
        grammar = self._grammar(language)
        if grammar is None:
            return None
        parsed = self._guessed[code, language] = self._parse(code, language, grammar)
        return parsed.share

    @staticmethod
    def _parse(text: str, language: str, grammar: _Grammar) -> _Parsed:
        """``text`` parsed the way that leaves the fewest error bytes among its wraps (scopes reopened, a string
        opened before or closed after, brackets left open closed) and, in Python, with and without the markup lines
        between its pieces; of two with as few, the first, unless only the other parses with no error at all (a
        token the parser had to insert, the ``;`` that reads a method's header as a call)."""
        tail = python_tail(text) if language == "python" else _brace_tail(text) if language in _BRACE_OPENERS else 0
        parsed = _blank(text, ((0, tail),) if tail else ())  # blanked: no scope to break
        elided = tuple(m.span() for m in _ELIDED_LINE.finditer(parsed)) if language == "python" else ()
        parsed = _blank(parsed, elided)  # ``...`` standing for lines left out: not code
        variants = [(parsed, elided)]
        marks = tuple(m.span() for m in _MARKUP_LINE.finditer(parsed)) if language == "python" and "<" in parsed else ()
        if marks:  # ``<span id='f'>`` lines between the pieces, ``</output>`` after them: first, so it wins a tie
            variants.insert(0, (_blank(parsed, marks), tuple(sorted(elided + marks))))
        openers = () if language == "python" else tuple(dict.fromkeys((*_brace_reopen(text, language), "")))
        best = None
        for variant, blanked in variants:
            if language == "python":
                wraps = _python_wraps(variant)
            else:
                wraps = [(pre, _brace_closers(pre + variant)) for pre in openers]
            for pre, post in wraps:
                src = (pre + variant + post).encode("utf-8")
                regions = _CodeRegions(grammar, src, grammar.parser.parse(src))
                share = regions.error_share()
                if best is None or share < best.share - 1e-9 or (  # a tie: no error at all beats a missing token
                        share < best.share + 1e-9 and best.regions.root.has_error and not regions.root.has_error):
                    best = _Parsed(share, pre + variant + post, src, regions, len(pre), blanked)
                    if not regions.root.has_error:  # no error at all: no later reading can win over it
                        return best
        return best

    def code(self, text: str, language: str | None) -> list[Interval]:
        """Char intervals of a piece of code: tree-sitter when the grammar fits, else the heuristic.

        A view that starts inside a block gets synthetic headers reopening its scopes for the
        parse (dropped from the result), so its first lines are the body they are.
        """
        grammar = self._grammar(language) if language else None
        if grammar is not None and text.strip():
            parsed = self._guessed.pop((text, language), None) or self._parse(text, language, grammar)
            share, full, src, regions, cut, blanked = parsed
            if share <= MOSTLY_ERRORS:
                regions.collect()
                to_char = _byte_to_char(full, src)
                n = len(text)
                out = [Interval(max(to_char(s) - cut, 0), min(to_char(e) - cut, n), t)
                       for s, e, t in regions.flatten(self._alloc) if to_char(e) > cut and to_char(s) - cut < n]
                if language != "python":
                    return out
                for a, b in blanked:  # blanked for the parse: not code
                    out = _splice(out, a, b, _plan_to_intervals(text, _prose_plan(text, a, b), self._alloc))
                return self._with_code_strings(text, out)
        return _plan_to_intervals(text, _heuristic_plan(text, 0, len(text)), self._alloc)

    def _with_code_strings(self, text: str, out: list[Interval]) -> list[Interval]:
        """``out`` (Python's tags of ``text``) with the code passed in string literals tagged as code."""
        for a, b in _code_strings(text):
            out = _splice(out, a, b, _shift(self.code(text[a:b], "python"), a))
        for js in code_literals(text):  # on one line, its line breaks escaped
            out = _splice(out, js.start, js.end, self._json_value(js, "python", "code"))
        return out

    def _grammar(self, language: str) -> _Grammar | None:
        if language not in self._grammars:
            rules = RULES.get(language)
            try:
                self._grammars[language] = _Grammar(rules) if rules else None
            except ImportError:
                self._grammars[language] = None
        return self._grammars[language]


_CODE_STRING = re.compile(r"""[=(,][ \t]*\\?\n?[ \t]*[rRuU]?('{3}|"{3})(\s*(?:async\s+def|def|class)\s+\w.*?)\1""",
                          re.DOTALL)
"""A Python triple-quoted literal holding code, as a code action passes it (``new = '''def f(x): ...'''``):
assigned or an argument (so not a docstring), opening on a definition."""


def _code_strings(text: str) -> list[tuple[int, int]]:
    """Char ranges of the contents of the multi-line literals ``_CODE_STRING`` finds."""
    if "'''" not in text and '"""' not in text:
        return []
    return [m.span(2) for m in _CODE_STRING.finditer(text) if "\n" in m.group(2)]


def _splice(outer: list[Interval], start: int, end: int, inner: list[Interval]) -> list[Interval]:
    """``outer`` with ``[start, end)`` replaced by ``inner``."""
    return ([Interval(s, min(e, start), t) for s, e, t in outer if s < start] + inner
            + [Interval(max(s, end), e, t) for s, e, t in outer if e > end])


def _json_result(text: str, strings: Sequence[JsonString]) -> bool:
    """Whether text is a JSON result (its strings are what it holds), not code with JSON-like literals in it: it
    starts as JSON, or its keyed strings hold most of it (a JSON object inside a wrapper, ``<tool_response>{..}``)."""
    return text.lstrip()[:1] in ("{", "[") or 2 * sum(js.end - js.start for js in strings) >= len(text)


def _next_where(mask: np.ndarray) -> np.ndarray:
    """Per position (and one past the end), the first position at or after it where ``mask`` holds, else its
    length."""
    at = np.where(mask, np.arange(len(mask)), len(mask))
    return np.append(np.minimum.accumulate(at[::-1])[::-1], len(mask))


def tags_for_offsets(text: str, offsets: Sequence[tuple[int, int]], intervals: list[Interval],
                     escapes: Sequence[tuple[int, int, bool]] = (),
                     quoted: Sequence[tuple[int, int]] = ()) -> list[TokenTag]:
    """Tag of the interval holding each token's first non-space char; (0, 0)-style empty tokens get NO_TAG. A token of
    nothing but space takes the tag at its start, or, lying in tagged text with code after it on its line (an indent
    after a view's prefix), that code's tag.

    ``escapes`` (start, end, line break) are JSON escapes of whitespace inside the ``quoted`` strings that hold
    files: they count as space, the token holding a line break's last char ``ends_line``, and a token of nothing
    but space that starts a line there is untagged (a line break, an indent; a space between words keeps its
    tag, as it would in the raw file)."""
    if len(offsets) == 0:
        return []
    off = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    starts = np.clip(off[:, 0], 0, len(text))
    ends = off[:, 1]
    if not intervals:
        return [NO_TAG] * len(off)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    space = np.isin(codes, _WHITESPACE)
    line_end = codes == 10
    escaped = np.zeros(len(text) + 1, dtype=bool)
    for s, e, newline in escapes:
        escaped[s:e] = True
        line_end[s] |= newline
    space |= escaped[:-1]
    first = _next_where(~space)[starts]
    untagged = ends <= off[:, 0]
    if quoted:
        inside = np.zeros(len(text) + 1, dtype=bool)
        for s, e in quoted:
            inside[s:e] = True
        after = np.append(False, escaped[:-2])  # the char before each position is part of an escape
        untagged |= (first >= ends) & inside[starts] & (escaped[starts] | after[starts])
    iv_starts = np.fromiter((iv[0] for iv in intervals), dtype=np.int64, count=len(intervals))
    tags = [iv[2] for iv in intervals]

    def interval_at(positions: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(iv_starts, positions, side="right") - 1, 0, len(intervals) - 1)

    # a token of nothing but space inside tagged text with code after it on its line (an indent after a view's
    # prefix: `   12\t` then `    def f():`) is that code's: the line reads as its code does, as in a raw file
    tagged = np.fromiter((t.block_type != BlockType.NONE for t in tags), dtype=bool, count=len(tags))
    indent = (first >= ends) & (first < _next_where(line_end)[starts]) & tagged[interval_at(starts)]
    index = interval_at(np.where((first < ends) | indent, first, starts))
    result = [tags[i] for i in index.tolist()]
    for i in np.flatnonzero(untagged).tolist():
        result[i] = NO_TAG
    breaks = np.asarray([e - 1 for _s, e, newline in escapes if newline], dtype=np.int64)
    if breaks.size:
        tok = np.clip(np.searchsorted(off[:, 0], breaks, side="right") - 1, 0, len(off) - 1)
        for i in sorted(set(tok[(off[tok, 0] <= breaks) & (breaks < ends[tok])].tolist())):
            result[i] = replace(result[i], ends_line=True)
    return result
