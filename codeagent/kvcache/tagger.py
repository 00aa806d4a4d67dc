"""Structure tagger: which part of code, log or prose every character of a span is.

``StructureTagger.intervals`` cuts a span's text into char intervals, each with a ``TokenTag``
(block type, block id, nesting depth, boundary flag); ``tag`` maps a tokenizer's offsets onto
those intervals. Code is parsed with tree-sitter (per-language tables in ``tagger_rules``), with a
line/indent heuristic for other languages or badly broken code; tool output and test logs are
cut into ERROR and LOG lines; prose into TEXT lines; Markdown fences inside any span are parsed
as code in the fence's language; ``cat -n`` style line-numbered file views are un-numbered first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from codeagent.kvcache.languages import language_for_fence
from codeagent.kvcache.tagger_rules import RULES, LangRules
from codeagent.kvcache.tags import NO_TAG, BlockType, SegmentKind, SpanInfo, TokenTag

Interval = tuple[int, int, TokenTag]
# (start, -end, priority, block_type or None (inherit), new block, depth increment, boundary)
Region = tuple[int, int, int, BlockType | None, bool, int, bool]

CODE_KINDS = frozenset({SegmentKind.FILE_VIEW, SegmentKind.CODE})
LOG_KINDS = frozenset({SegmentKind.TOOL_OUTPUT, SegmentKind.TEST_LOG, SegmentKind.ERROR})
PROSE_LANGUAGES = frozenset({"markdown", "text"})
MOSTLY_ERRORS = 0.5  # above this share of bytes inside ERROR nodes, use the heuristic instead

# region priorities: among regions with the same range, the lower one is the outer one
P_BLOCK, P_BODY, P_TYPE, P_BOUNDARY = 0, 1, 2, 3
_BYTES_SPACE = re.compile(rb"\s")

_WHITESPACE = np.array([9, 10, 11, 12, 13, 32, 0x85, 0xA0, 0x2028, 0x2029, 0x3000], dtype=np.uint32)


# ------------------------------------------------------------------------------ small helpers
def _emit(out: list[Interval], start: int, end: int, tag: TokenTag) -> None:
    """Append [start, end) with ``tag``, merging into the previous interval when tags match."""
    if end <= start:
        return
    if out and out[-1][1] == start and out[-1][2] == tag:
        out[-1] = (out[-1][0], end, tag)
    else:
        out.append((start, end, tag))


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
    return [(s + offset, e + offset, t) for s, e, t in intervals] if offset else intervals


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of every line of text[start:end], newline included."""
    spans = []
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl + 1
        spans.append((pos, stop))
        pos = stop
    return spans


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
# A line plan: (start, end, block_type, block key, depth) per line; lines of one block share a key.
LinePlan = list[tuple[int, int, BlockType, int, int]]


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
            plan.append((s, e, BlockType.TEXT, key, 0))
            continue
        key += 1
        plan.append((s, e, BlockType.TEXT, key, 0))
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
    )""",
    re.VERBOSE,
)
_ASSERTION = re.compile(r"\bAssertionError\b")
# error lines that start a new error block (others continue the error block above them)
_ERROR_HEAD = re.compile(r"(?:FAILED|ERROR)\b|[^\s:][^:\n]*:\d+(?::\d+)?:|error(?:\[\w+\])?:|---\s*FAIL\b|panic:")


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
                plan.append((s, e, plan[-1][2], key, 0))
            else:
                key += 1
                plan.append((s, e, BlockType.LOG, key, 0))
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
        plan.append((s, e, BlockType.ERROR if error else BlockType.LOG, key, 0))
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
_H_CLOSER = re.compile(r"\s*(?:[}\])]|end\b|fi\b|done\b|esac\b)")


def _indent_width(line: str) -> int:
    """Indentation of a line, a tab counting as four columns."""
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4
        else:
            break
    return width


def _heuristic_plan(text: str, start: int, end: int) -> LinePlan:
    """Line plan for code without a grammar: keyword regexes for types, indentation for depth and blocks."""
    spans = _line_spans(text, start, end)
    widths = [_indent_width(text[s:e]) for s, e in spans]
    unit = min((w for (s, e), w in zip(spans, widths) if w and not text[s:e].isspace()), default=4)
    plan: LinePlan = []
    stack: list[tuple[int, int, bool, int]] = []  # open definitions: (indent, key, is_class, depth)
    key = 0
    top_key = -1
    open_parens = 0  # of a signature that spans lines
    statement_parens = 0  # of a top-level statement that spans lines
    decorator_key: int | None = None
    for (s, e), ind in zip(spans, widths):
        line = text[s:e]
        if line.isspace():
            if plan:
                plan.append((s, e, plan[-1][2], plan[-1][3], plan[-1][4]))
            else:
                key += 1
                top_key = key
                plan.append((s, e, BlockType.STATEMENT, key, 0))
            continue
        depth = ind // unit
        balance = line.count("(") + line.count("[") - line.count(")") - line.count("]")
        if open_parens > 0:  # continuation of a multi-line signature
            open_parens += balance
            plan.append((s, e, BlockType.FUNCTION_SIGNATURE, stack[-1][1], stack[-1][3]))
            continue
        closer = bool(_H_CLOSER.match(line))
        while stack and (ind < stack[-1][0] or (ind == stack[-1][0] and not closer)):
            stack.pop()
        if closer and stack and ind == stack[-1][0]:
            plan.append((s, e, BlockType.STATEMENT if stack[-1][2] else BlockType.FUNCTION_BODY,
                         stack[-1][1], depth))
            stack.pop()
            continue
        klass = bool(_H_CLASS.match(line))
        signature = bool(_H_SIGNATURE.match(line) or (not klass and _H_C_SIGNATURE.match(line)))
        if signature or klass:
            if decorator_key is None:
                key += 1
            block = key if decorator_key is None else decorator_key
            decorator_key = None
            stack.append((ind, block, klass and not signature, depth))
            btype = BlockType.CLASS_DECLARATION if klass and not signature else BlockType.FUNCTION_SIGNATURE
            plan.append((s, e, btype, block, depth))
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
            btype = BlockType.STATEMENT if stack[-1][2] else BlockType.FUNCTION_BODY
        else:
            btype = BlockType.STATEMENT
        if stack:
            block = stack[-1][1]
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
        plan.append((s, e, btype, block, depth))
    return plan


# ------------------------------------------------------------------------------ tree-sitter
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
        stack: list[tuple[int, TokenTag]] = [(length, TokenTag(BlockType.STATEMENT, alloc(), 0, False))]
        pos = 0
        for start, neg_end, _prio, btype, new_block, depth, boundary in self.regions:
            while len(stack) > 1 and stack[-1][0] <= start:
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
            stack.append((end, tag))
        while stack:
            end, tag = stack.pop()
            _emit(out, pos, end, tag)
            pos = max(pos, end)
        return out


# ------------------------------------------------------------------------------ span shapes
_FENCE_OPEN = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*([^\s`]*)[^\n`]*\n?$")
_NUMBERED = re.compile(r" *(\d+)\t")


def _fence_segments(text: str) -> list[tuple[int, int, str | None, bool]]:
    """Split text into (start, end, language, is_code) segments around Markdown fences."""
    segments: list[tuple[int, int, str | None, bool]] = []
    prose_start = 0
    fence: tuple[str, str, int] | None = None  # (marker, info, code start)
    for s, e in _line_spans(text, 0, len(text)):
        line = text[s:e]
        if fence is None:
            m = _FENCE_OPEN.match(line)
            if m:
                segments.append((prose_start, e, None, False))  # prose up to and with the fence line
                fence = (m.group(1), m.group(2), e)
        else:
            marker, info, code_start = fence
            stripped = line.strip()
            if stripped and set(stripped) == {marker[0]} and len(stripped) >= len(marker):
                segments.append((code_start, s, info, True))
                fence = None
                prose_start = s
    if fence is not None:
        segments.append((fence[2], len(text), fence[1], True))
    else:
        segments.append((prose_start, len(text), None, False))
    return [seg for seg in segments if seg[1] > seg[0]]


def _numbered_lines(text: str) -> list[tuple[int, int, int]] | None:
    """For a `cat -n` style view: (line start, code start, line end) per line, or None if not numbered.

    Numbered means: at least half the non-blank lines carry a `<spaces><number><tab>` prefix and
    the numbers increase. A line without the prefix gets code start -1.
    """
    rows = []
    numbers = []
    nonblank = 0
    for s, e in _line_spans(text, 0, len(text)):
        m = _NUMBERED.match(text, s, e)
        if m:
            numbers.append(int(m.group(1)))
            rows.append((s, m.end(), e))
        else:
            rows.append((s, -1, e))
        nonblank += not text[s:e].isspace()
    if not numbers or len(numbers) * 2 < nonblank:
        return None
    return rows if all(a < b for a, b in zip(numbers, numbers[1:])) else None


class StructureTagger:
    """Structural tags for spans of the conversation; block ids stay unique across calls."""

    def __init__(self) -> None:
        self._grammars: dict[str, _Grammar | None] = {}
        self._alloc = _Counter()

    # ---------------------------------------------------------------- public API
    def intervals(self, text: str, info: SpanInfo) -> list[tuple[int, int, TokenTag]]:
        """Char intervals [start, end) of text with their tags, covering the text in order."""
        if not text:
            return []
        language = (info.language or "").lower() or None
        language = language_for_fence(language) or language if language else None  # accept "py", "ts"...
        if info.kind in CODE_KINDS or (info.kind == SegmentKind.TOOL_OUTPUT and language is not None):
            if language in PROSE_LANGUAGES or (language is None and any(seg[3] for seg in _fence_segments(text))):
                result = self._view(text, lambda code: self._fenced(code, _prose_plan))
            else:
                result = self._view(text, lambda code: self.code(code, language))
        elif info.kind in LOG_KINDS:
            result = self._fenced(text, _log_plan)
        else:
            result = self._fenced(text, _prose_plan)
        return _normalize(result, len(text))

    def tag(self, text: str, offsets: Sequence[tuple[int, int]], info: SpanInfo) -> list[TokenTag]:
        """One TokenTag per token, from the interval holding the token's first non-space char."""
        return tags_for_offsets(text, offsets, self.intervals(text, info))

    # ---------------------------------------------------------------- span shapes
    def _fenced(self, text: str, prose: Callable[[str, int, int], LinePlan]) -> list[Interval]:
        """Prose/log lines outside Markdown fences, code inside them."""
        out: list[Interval] = []
        for start, end, info, is_code in _fence_segments(text):
            if is_code:
                out.extend(_shift(self.code(text[start:end], language_for_fence(info or "")), start))
            else:
                out.extend(_plan_to_intervals(text, prose(text, start, end), self._alloc))
        return out

    def _view(self, text: str, inner: Callable[[str], list[Interval]]) -> list[Interval]:
        """A file view or code span: un-number `cat -n` lines, tag the rest with ``inner``, map tags back.

        Line-number prefixes get the block and depth of their line's code with block type NONE;
        lines without a number (a header or footer of the view) are TEXT.
        """
        rows = _numbered_lines(text)
        if rows is None:
            return inner(text)
        code = "".join(text[c:e] for _s, c, e in rows if c >= 0)
        code_ivs = _normalize(inner(code), len(code))
        out: list[Interval] = []
        j = 0
        pos = 0  # position in the un-numbered code
        for line_start, code_start, end in rows:
            if code_start < 0:
                out.extend(_plan_to_intervals(text, _prose_plan(text, line_start, end), self._alloc))
                continue
            stop = pos + end - code_start
            while j < len(code_ivs) - 1 and code_ivs[j][1] <= pos:
                j += 1
            if code_ivs:
                line_tag = code_ivs[j][2]
                _emit(out, line_start, code_start, TokenTag(BlockType.NONE, line_tag.block_id, line_tag.depth))
            k = j
            while k < len(code_ivs) and code_ivs[k][0] < stop:
                s, e, tag = code_ivs[k]
                _emit(out, code_start + max(s, pos) - pos, code_start + min(e, stop) - pos, tag)
                k += 1
            pos = stop
        return out

    def code(self, text: str, language: str | None) -> list[Interval]:
        """Char intervals of a piece of code: tree-sitter when the grammar fits, else the heuristic."""
        grammar = self._grammar(language) if language else None
        if grammar is not None and text.strip():
            src = text.encode("utf-8")
            regions = _CodeRegions(grammar, src, grammar.parser.parse(src))
            if regions.error_share() <= MOSTLY_ERRORS:
                regions.collect()
                to_char = _byte_to_char(text, src)
                return [(to_char(s), to_char(e), t) for s, e, t in regions.flatten(self._alloc)]
        return _plan_to_intervals(text, _heuristic_plan(text, 0, len(text)), self._alloc)

    def _grammar(self, language: str) -> _Grammar | None:
        if language not in self._grammars:
            rules = RULES.get(language)
            try:
                self._grammars[language] = _Grammar(rules) if rules else None
            except ImportError:
                self._grammars[language] = None
        return self._grammars[language]


def tags_for_offsets(text: str, offsets: Sequence[tuple[int, int]], intervals: list[Interval]) -> list[TokenTag]:
    """Tag of the interval holding each token's first non-space char; (0, 0)-style empty tokens get NO_TAG."""
    if len(offsets) == 0:
        return []
    off = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
    starts = np.clip(off[:, 0], 0, len(text))
    ends = off[:, 1]
    if not intervals:
        return [NO_TAG] * len(off)
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    positions = np.where(np.isin(codes, _WHITESPACE), len(text), np.arange(len(text)))
    next_solid = np.append(np.minimum.accumulate(positions[::-1])[::-1], len(text))
    first = next_solid[starts]
    first = np.where(first < ends, first, starts)
    iv_starts = np.fromiter((iv[0] for iv in intervals), dtype=np.int64, count=len(intervals))
    index = np.clip(np.searchsorted(iv_starts, first, side="right") - 1, 0, len(intervals) - 1)
    tags = [iv[2] for iv in intervals]
    result = [tags[i] for i in index.tolist()]
    for i in np.flatnonzero(ends <= off[:, 0]).tolist():
        result[i] = NO_TAG
    return result
