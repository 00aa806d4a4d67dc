"""Definitions ranked by use, as a repository map ranks them: the name each definition header binds (a
function, a class, a module-level binding, an import) and how often the session writes each name.

Past the pinned cap the lifecycle releases the least-used definitions first: a helper the session calls
five times outlives a hook nothing calls, whatever format the session is in.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections import Counter
from itertools import groupby
from typing import Sequence

from codeagent.kvcache.named import HEADERS, defined_name
from codeagent.kvcache.tagger_content import numbered_rows
from codeagent.kvcache.tags import BlockType, TokenTag

IDENT = re.compile(r"[A-Za-z_]\w*")
_ESCAPE = re.compile(r"\\[nrtbfu\"\\/]")
_PY_FROM = re.compile(r"^\s*from\s+\S+\s+import\s+(.+)$")
_IMPORT = re.compile(r"^\s*import\s+(.+?)(?:\s+from\s+\S+)?\s*;?\s*$")
_USE = re.compile(r"^\s*(?:pub\s+)?use\s+(.+?);?\s*$")
_GO_SPEC = re.compile(r"(?:([A-Za-z_]\w*)\s+)?\"([^\"]+)\"")
_KEYWORD = re.compile(r"\b(?:from\s+\S+\s+import|import|(?:pub\s+)?use)\b")
_FROM_JS = re.compile(r"\bfrom\s+[\"']")
LINE_BREAK = re.compile(r"\n|\\n")
"""A line ends at a newline, or at an escaped one when the code sits in a JSON string."""
CALL_STATEMENT = re.compile(r"\s*[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*\s*\(")
"""Code that opens with a call of a (dotted) name: ``manager.add_handler(str, f)``, ``atexit.register(close)``."""


def count(text: str) -> Counter[str]:
    """How often each identifier occurs in ``text`` (a file inside a JSON string counts as the file: the
    ``n`` of an escaped newline is not part of the name after it)."""
    return Counter(IDENT.findall(_ESCAPE.sub(" ", text)))


def import_names(statement: str) -> list[str]:
    """The names an import statement binds: ``from m import (a, b as c)`` -> a, c; ``import a.b`` -> a;
    ``import x, {y as z} from "m"`` -> x, z; ``use a::b::{c, d};`` -> c, d; Go's ``import (f "fmt"; "net/http")``
    -> f, http."""
    statement = " ".join(statement.split())
    start = _KEYWORD.search(statement)  # text before the statement on its line (a JSON key, a line number)
    statement = statement[start.start():] if start else statement
    if '"' in statement and not _FROM_JS.search(statement):  # Go: an optional alias before each quoted path
        specs = _GO_SPEC.findall(re.sub(r"^\s*import\b", "", statement))
        return [a or p.rsplit("/", 1)[-1] for a, p in specs
                if IDENT.fullmatch(a or p.rsplit("/", 1)[-1])]
    m = _USE.match(statement)
    if m:
        tail = m.group(1).split("::")[-1]
        names = (re.split(r"\s+as\s+", p)[-1].strip() for p in tail.strip("{} ").split(","))
        return [n for n in names if IDENT.fullmatch(n) and n != "self"]
    m = _PY_FROM.match(statement) or _IMPORT.match(statement)
    if not m:
        return []
    out = []
    for part in re.split(r"[,{}()]", m.group(1)):
        part = part.strip()
        if re.search(r"\s+as\s+", part):
            name = re.split(r"\s+as\s+", part)[-1].strip()
        else:
            name = re.split(r"[.\s]", part)[0] if part else ""
        if IDENT.fullmatch(name) and name not in ("type", "typeof"):
            out.append(name)
    return out


def defined_names(text: str, offsets: Sequence[tuple[int, int]], tags: Sequence[TokenTag]) -> list[str | None]:
    """Per token: the name its definition header binds (the whole header of a function, class or
    module-level binding; the name itself in an import), None elsewhere."""
    out: list[str | None] = [None] * len(tags)
    blocks: dict[int, list[int]] = {}
    for i, tag in enumerate(tags):
        if tag.block_id >= 0 and (tag.block_type in HEADERS or tag.block_type == BlockType.IMPORT):
            blocks.setdefault(tag.block_id, []).append(i)
    for idx in blocks.values():
        start, end = offsets[idx[0]][0], offsets[idx[-1]][1]
        # from the start of the line: a real newline, or an escaped one when the code sits in a JSON string
        escaped = text.rfind("\\n", 0, start + 1)
        a = max(text.rfind("\n", 0, start) + 1, escaped + 2 if escaped >= 0 else 0)
        statement = _ESCAPE.sub(" ", text[a:end])
        if tags[idx[0]].block_type != BlockType.IMPORT:
            name = defined_name(statement)
            for i in idx:
                out[i] = name
            continue
        for name in import_names(statement):
            for m in re.finditer(rf"\b{re.escape(name)}\b", text[a:end]):
                for i in idx:
                    if offsets[i][0] < a + m.end() and offsets[i][1] > a + m.start():
                        out[i] = name
    return out


def spelled(text: str, offsets: Sequence[tuple[int, int]], names: Sequence[str | None]) -> list[bool]:
    """Per token: whether it spells the name its definition binds (``defined_names``): in each run of tokens of one
    name, those the name's first whole-word occurrence in the run's text overlaps (``LIMIT`` of ``LIMIT = 3``,
    ``run`` of ``def run(x):``, an imported name itself). In a JSON string an escape before the name (``\\nLIMIT``)
    reads as blanks, so ``n`` does not join the name's word."""
    text = _ESCAPE.sub(lambda m: " " * len(m.group()), text)
    out: list[bool] = []
    i = 0
    for name, run in groupby(names):
        j = i + sum(1 for _ in run)
        start = offsets[i][0]
        m = name and re.search(rf"\b{re.escape(name)}\b", text[start:offsets[j - 1][1]])
        a, b = (start + m.start(), start + m.end()) if m else (0, 0)
        out += [s < b and e > a for s, e in offsets[i:j]]
        i = j
    return out


def definitions(names: Sequence[str | None], tags: Sequence[TokenTag]) -> Counter[str]:
    """How many definitions of each name per-token ``names`` (``defined_names``) hold: one per header block
    (``tags``), however many runs its tokens make (a numbered view's line numbers split a header written over
    several lines into one run per line)."""
    return Counter(n for _, n in dict.fromkeys((t.block_id, n) for n, t in zip(names, tags) if n is not None))


def bindings(text: str, offsets: Sequence[tuple[int, int]], tags: Sequence[TokenTag]
             ) -> tuple[list[str | None], Counter[str], list[bool]]:
    """What the definition headers in ``text`` bind: per token the name (``defined_names``), the definitions per
    name (``definitions``) and per token whether it spells its name (``spelled``)."""
    names = defined_names(text, offsets, tags)
    return names, definitions(names, tags), spelled(text, offsets, names)


def line_keys(text: str, offsets: Sequence[tuple[int, int]]
              ) -> tuple[list[int], Counter[int], dict[int, frozenset[str]]]:
    """Per token: the key of the stripped text of the line it starts on (one text, one key; a line ends at a
    newline or at an escaped one inside a JSON string; a line-numbered view's numbers are not part of the text),
    -1 on a line without an identifier; how many lines of ``text`` have each key; and each key's identifiers."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text)]
    ends = [s - (2 if text[s - 2:s] == "\\n" else 1) for s in starts[1:]] + [len(text)]
    code = {s: c for s, c, _ in numbered_rows(text) or () if c >= 0}
    per_line: list[int] = []
    words: dict[int, frozenset[str]] = {}
    for a, b in zip(starts, ends):
        line = text[code.get(a, a):b].strip()
        key = -1
        found = IDENT.findall(_ESCAPE.sub(" ", line))
        if found:
            key = zlib.crc32(line.encode("utf-8", "surrogatepass"))
            words[key] = frozenset(found)
        per_line.append(key)
    counts = Counter(k for k in per_line if k >= 0)
    return [per_line[bisect.bisect_right(starts, a) - 1] for a, _ in offsets], counts, words


def module_calls(text: str, offsets: Sequence[tuple[int, int]], keys: Sequence[int], tags: Sequence[TokenTag]
                 ) -> set[int]:
    """The keys (``line_keys``) of the lines of ``text`` that open a module-level statement with a call: the line's
    first tagged token a depth-0 statement of a block no earlier line opened, its code a ``CALL_STATEMENT``."""
    found: set[int] = set()
    opened: set[int] = set()
    prev = -2
    for (a, _), key, tag in zip(offsets, keys, tags):
        if tag.block_type == BlockType.NONE or key == prev:  # a line number, or a later token of the line
            continue
        prev = key
        if (key >= 0 and tag.depth == 0 and tag.block_type == BlockType.STATEMENT and tag.block_id not in opened
                and CALL_STATEMENT.match(text, a)):
            found.add(key)
        opened.add(tag.block_id)
    return found
