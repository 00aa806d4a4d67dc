"""Branch points: where the model, given a definition as its own reply, would write something else.

Asked for the corrected definition, a small coder model often restates the code unchanged, and its hotter samples
repeat that or drift into garbage. Teacher-forcing the current code as the reply (``ModelEngine.score_text``) shows
where the model hesitates: tokens whose log-prob is close to, or below, that of another token it would write there.
A candidate made to take that other token at that point and left to finish greedily is a targeted edit (``<`` to
``<=``, ``text[:width]`` to ``text[:width - 3]``) that sampling seldom finds. The tokens of the definition's name, comments
and docstrings are not branch points (changing them changes nothing the tests see), nor is another token that would
lengthen the name just before it (``summarize`` + ``_circle``: a name nothing else uses).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any

from codeagent.agent.phases import Shown
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo
from codeagent.protocols import ModelEngine, TokenScore

MIN_LOGPROB = -3.0
"""Another token the model gives less than about 5% is not a branch point."""
_NO_BRANCH = (BlockType.COMMENT, BlockType.DOCSTRING)
_COMMENT_START = ("#", "//", "/*", '"""', "'''")


@dataclass(frozen=True)
class Branch:
    """A reply forced to start with ``head``: a definition's code up to a branch point, then another token."""

    ref: str
    head: str
    gap: float  # log-prob of the other token minus that of the code's token (higher: the model doubts the code more)


def name_span(code: str, name: str) -> tuple[int, int]:
    """Characters of the definition's name in its header (the first line that is not a decorator)."""
    short = name.split(".")[-1]
    at = 0
    for line in code.splitlines(keepends=True):
        if line.strip() and not line.lstrip().startswith("@"):
            m = re.search(rf"\b{re.escape(short)}\b", line)
            return (at + m.start(), at + m.end()) if m else (0, 0)
        at += len(line)
    return 0, 0


def branch_points(ref: str, name: str, code: str, language: str | None, scores: list[TokenScore],
                  tagger: StructureTagger | None = None) -> list[Branch]:
    """The places in ``code`` (scored as a reply: ``scores`` from ``score_text``, possibly of ``code`` plus a
    closing fence) with the likeliest other token there that changes the code, most doubted first."""
    scores = [s for s in scores if s.end <= len(code)]
    tags = (tagger or StructureTagger()).tag(code, [(s.start, s.end) for s in scores],
                                             SpanInfo(kind=SegmentKind.CODE, language=language))
    lo, hi = name_span(code, name)
    out = []
    for s, tag in zip(scores, tags):
        if s.start == 0 or tag.block_type in _NO_BRANCH or lo < s.end and s.start < hi:
            continue
        token = code[s.start:s.end]
        glued = code[s.start - 1].isidentifier() and not token[:1].isidentifier()  # a name ends right here
        choice = next(((alt, lp) for alt, lp in s.alternatives if alt.strip() and alt.strip() != token.strip()
                       and not (glued and alt[:1].isidentifier())), None)
        if choice is None or choice[1] < MIN_LOGPROB or choice[0].lstrip().startswith(_COMMENT_START):
            continue
        out.append(Branch(ref=ref, head=code[:s.start] + choice[0], gap=choice[1] - s.logprob))
    return sorted(out, key=lambda b: -b.gap)


def find(engine: ModelEngine, snap: Any, shown: list[Shown], primer: str, close: str,
         language: str | None) -> list[list[Branch]]:
    """The branch points of each of the ``shown`` definitions, most doubted first: from
    ``snap``, each definition is scored as the reply (``primer``, its code, ``close``) with ``engine.score_text``."""
    found = []
    tagger = StructureTagger()
    info = SpanInfo(kind=SegmentKind.CODE, language=language)
    for d in shown:
        engine.restore(snap)
        engine.start_assistant(info)
        engine.append(primer, info)
        scores = engine.score_text(d.code + close, info)
        found.append(branch_points(d.ref, d.name, d.code, d.language, scores, tagger))
    return found


def choose(per_definition: list[list[Branch]], k: int, used: Set[str] = frozenset(), *,
           replies: Sequence[str] = (), first: Set[str] = frozenset()) -> list[Branch]:
    """The ``k`` most doubted branch points not ``used`` yet.

    - A head that one of this request's ``replies`` already starts with is skipped: from the same snapshot, forcing it
      and finishing greedily writes that reply again.
    - The points of the definitions in ``first`` (refs) come before the others: a greedy reply that restated a
      definition unchanged still says where the model thinks the bug is.
    - When all the picks lie in one definition and another has branch points, the last goes to the other's most
      doubted one (localization is not always sure which definition has the bug, and a definition with many hesitant
      tokens would otherwise take every candidate)."""
    fresh = (b for group in per_definition for b in group
             if b.head not in used and not any(r.startswith(b.head) for r in replies))
    ranked = sorted(fresh, key=lambda b: (b.ref not in first, -b.gap))
    picked = ranked[:k]
    other = next((b for b in ranked[k:] if b.ref != picked[0].ref), None) if picked else None
    if k > 1 and other is not None and all(b.ref == picked[0].ref for b in picked):
        picked[-1] = other
    return picked
