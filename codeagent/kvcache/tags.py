"""Tag vocabularies shared by the tagger, the slot table, scoring and policies.

Every cached token carries a segment kind (what the span is), structural tags from the
tree-sitter tagger (what the token is inside code) and a lifecycle state.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class SegmentKind(IntEnum):
    """What a span of the conversation is."""

    SYSTEM = 0
    ISSUE = 1
    PLAN = 2
    CODE = 3
    TOOL_CALL = 4
    TOOL_OUTPUT = 5
    FILE_VIEW = 6
    TEST_LOG = 7
    ERROR = 8
    TEXT = 9
    TEMPLATE = 10  # chat-template scaffolding (<|im_start|>role ...)


class BlockType(IntEnum):
    """What a token is inside code or tool output (from tree-sitter or heuristics)."""

    NONE = 0
    FUNCTION_SIGNATURE = 1
    CLASS_DECLARATION = 2
    DECORATOR = 3
    IMPORT = 4
    DOCSTRING = 5
    COMMENT = 6
    FUNCTION_BODY = 7
    CONTROL_FLOW = 8
    STATEMENT = 9
    LOG = 10
    ERROR = 11
    TEXT = 12
    TOOL_CALL = 13  # a tool call inside a message, in any syntax
    GLOBAL = 14  # a module-level binding (a constant, a global, a type alias): a short one whole, else its first line


class State(IntEnum):
    """Lifecycle state of a cached slot (CommitKV)."""

    ACTIVE = 0
    STAGED = 1
    COMMITTED = 2
    EVICTABLE = 3
    PINNED = 4


SIGNATURE_TYPES = frozenset({BlockType.FUNCTION_SIGNATURE, BlockType.CLASS_DECLARATION, BlockType.DECORATOR})


@dataclass(frozen=True, slots=True)
class TokenTag:
    """Structural tags for one token."""

    block_type: BlockType = BlockType.NONE
    block_id: int = -1
    depth: int = 0
    is_boundary: bool = False
    ends_line: bool = False
    """The token holds a line break its own text does not show: the ``\\n`` escape of a JSON string holding a
    file, whose lines are then lines to the policies as a view's are."""


NO_TAG = TokenTag()


@dataclass(slots=True)
class SpanInfo:
    """What the caller says about a span it appends: kind, subtask, language and protection."""

    kind: SegmentKind = SegmentKind.TEXT
    subtask: str | None = None
    language: str | None = None
    pinned: bool = False
    protect: tuple[tuple[int, int], ...] = ()
    """Character ranges of the content kept verbatim whatever the budget (as ``pinned`` does for all of it):
    what the caller's next step depends on, such as the definitions a repair rewrites."""

    def protected(self, offsets: list[tuple[int, int]]) -> list[bool] | None:
        """Per token (by its character ``offsets``): whether it is protected; None when ``pinned`` says it for
        the whole span (all or none)."""
        if self.pinned or not self.protect:
            return None
        return [any(s < e2 and e > s2 for s2, e2 in self.protect) for s, e in offsets]
