"""Definitions the issue names: the identifiers an issue mentions, and the header tokens of a span that
define one of them (pinned, and past the pinned cap kept up to ``kv.named_cap``: the code a task is about
outlives the rest)."""

from __future__ import annotations

import re
from typing import Sequence

from codeagent.kvcache.tags import BlockType, TokenTag

_TICKED = re.compile(r"`([^`\n]{1,80})`")
_EXT = r"\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|c|h|cc|cpp|hpp|rb|md|txt|json|toml|ya?ml|cfg|ini)"
_CODELIKE = re.compile(r"\b([A-Za-z_]\w*)\(|\b(\w*_\w+|[a-z]+[A-Z]\w*)\b")
_DEFINES = re.compile(r"(?:\b(?:def|class|function|func|fn|struct|interface|type|enum|trait)\s+(?:\([^)]*\)\s*)?"
                      r"|\b)([A-Za-z_]\w*)\s*[(<:{=]")
_PATHS = re.compile(rf"[^\s`'\"]*[/\\][^\s`'\"]*|[^\s`'\"]+{_EXT}\b")
"""Paths in running text (`pkg/mod.py`, `mod.py`): their parts are not names."""
HEADERS = (BlockType.FUNCTION_SIGNATURE, BlockType.CLASS_DECLARATION, BlockType.GLOBAL)


def issue_names(text: str) -> set[str]:
    """Identifiers an issue names: in backticks (``pkg.mod.func`` gives ``func``; file paths are not names),
    called (``name(``), or spelled like code (``snake_case``, ``camelCase``)."""
    names: set[str] = set()
    text = _PATHS.sub(" ", text)  # `pkg/__init__.py` names a file, not `__init__`
    for m in _TICKED.finditer(text):
        tick = m.group(1).strip().rstrip("()")
        if re.fullmatch(r"[A-Za-z_][\w.]*", tick):
            names.add(tick.rsplit(".", 1)[-1])
    for m in _CODELIKE.finditer(text):
        names.add(m.group(1) or m.group(2))
    return {n for n in names if len(n) > 1}


def defined_name(header: str) -> str | None:
    """The name a definition header defines (``def create(cls, ...)`` -> ``create``), None when unclear."""
    m = _DEFINES.search(header)
    return m.group(1) if m else None


def naming_mask(text: str, offsets: Sequence[tuple[int, int]], tags: Sequence[TokenTag],
                names: set[str], body_tokens: int = 0) -> list[bool] | None:
    """Per token: whether it belongs to a definition of one of ``names``: its header, the docstring opening its
    body, and the first ``body_tokens`` of the body's code (None: no such token)."""
    if not names:
        return None
    spans: dict[int, list[int]] = {}
    for i, tag in enumerate(tags):
        if tag.block_type in HEADERS and tag.block_id >= 0:
            spans.setdefault(tag.block_id, []).append(i)
    mask = [False] * len(tags)
    for idx in spans.values():
        if defined_name(text[offsets[idx[0]][0]:offsets[idx[-1]][1]]) in names:
            for i in idx + _body(text, offsets, tags, idx[-1] + 1, body_tokens):
                mask[i] = True
    return mask if any(mask) else None


DOCSTRING_TOKENS = 160
"""At most this many tokens of a named definition's docstring are protected with its header."""


def _body(text: str, offsets: Sequence[tuple[int, int]], tags: Sequence[TokenTag], start: int,
          code_tokens: int) -> list[int]:
    """The tokens of the body that starts at ``start`` (just past a header): the docstring opening it, at most
    ``DOCSTRING_TOKENS``, and its first ``code_tokens`` tagged code tokens (comments and docstrings aside; a
    view's untagged line prefixes are not the body's). The body ends at the first token back at the header's
    depth or shallower (the next definition, a module-level line)."""
    depth = tags[start - 1].depth if start else 0
    doc: list[int] = []
    code: list[int] = []
    for i in range(start, len(tags)):
        tag = tags[i]
        if tag.block_type == BlockType.NONE:
            continue
        if tag.block_type == BlockType.DOCSTRING and not code:
            if len(doc) < DOCSTRING_TOKENS:
                doc.append(i)
            continue
        blank = not text[offsets[i][0]:offsets[i][1]].strip()
        if blank:
            if code and len(code) < code_tokens:
                code.append(i)  # a line break inside the body keeps its lines apart
            continue
        if tag.depth <= depth or len(code) >= code_tokens:
            break
        if tag.block_type not in (BlockType.COMMENT, BlockType.DOCSTRING):
            code.append(i)
    return doc + code
