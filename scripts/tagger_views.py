"""Benchmark: how often a view of real code cut mid-file still shows its definition as a signature.

Python: every recall target of the bench's builder (``find_functions``) in every ``.py`` file under the roots
(default: this interpreter's standard library). JavaScript (``--language javascript``): every function declaration
and class method header in every ``.js`` file under the roots (minified files aside); TypeScript, Go, Rust and Java
(``--language typescript|go|rust|java``): every function and method header ``DEFINITIONS`` finds. Five views start 3-25 lines
above the definition and end 12-75 lines below it, as the bench's views do (starting and ending inside statements,
strings, comments and blocks), each raw and numbered like ``cat -n``; ``--every N`` keeps one definition in N and
one of the five cuts for it. The views are tagged as a file view in that language, or with ``--unnamed`` as a tool's
output that names no language (the tagger guesses it). Counts the views whose definition's name is not tagged
``FUNCTION_SIGNATURE``; prints the misses and writes the counts as JSON.

    PYTHONPATH=. python scripts/tagger_views.py --out std.json
    PYTHONPATH=. python scripts/tagger_views.py /usr/lib/node_modules/npm/node_modules --language javascript \\
        --every 13 --out js.json
    PYTHONPATH=. python scripts/tagger_views.py /usr/share/go-1.19/src/net/http --language go --every 7 --out go.json
"""

from __future__ import annotations

import argparse
import json
import re
import sysconfig
from collections.abc import Iterator
from pathlib import Path

from codeagent.bench.build import find_functions, list_sources, parse_source
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo

CUTS = ((3, 12), (8, 40), (14, 75), (20, 12), (25, 40))
"""(lines above the definition, lines below it) of each view."""
DEFINITIONS = {
    "javascript": (".js", re.compile(
        r"^[ \t]*(?:export\s+)?(?:async\s+)?function\s*\*?\s*(\w+)\s*\("
        r"|^[ \t]+(?:static\s+)?(?:async\s+)?(?!(?:if|for|while|switch|catch|return)\b)(\w+)\s*\([^)\n]*\)\s*\{\s*$",
        re.MULTILINE)),
    "typescript": (".ts", re.compile(
        r"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function[ \t]*\*?[ \t]*(\w+)[ \t]*[<(]"
        r"|^[ \t]+(?:(?:public|private|protected|static|override|async|readonly)[ \t]+)*"
        r"(?!(?:if|for|while|switch|catch|return|constructor|function)\b)(\w+)[ \t]*(?:<[^>\n]*>)?\([^)\n]*\)"
        r"(?:[ \t]*:[ \t]*[^{;\n]+)?[ \t]*\{[ \t]*$", re.MULTILINE)),
    "go": (".go", re.compile(r"^func\s+(?:\([^)\n]*\)\s*)?(\w+)\s*[\[(]", re.MULTILINE)),
    "java": (".java", re.compile(
        r"^[ \t]+(?:(?:public|protected|private|static|final|abstract|synchronized|default)[ \t]+)+"
        r"(?:<[^>\n]+>[ \t]+)?(?!new\b|return\b)[\w.]+(?:<[^;{}()\n]*>)?(?:\[\])*[ \t]+(\w+)[ \t]*\(", re.MULTILINE)),
    "rust": (".rs", re.compile(
        r"^[ \t]*(?:pub(?:\([^)\n]*\))?\s+)?(?:(?:const|async|unsafe)\s+)*(?:extern\s+\"\w+\"\s+)?fn\s+(\w+)",
        re.MULTILINE)),
}
"""Per language: the files' suffix and a definition header: a JavaScript function declaration or a method header
alone on its indented line, the same in TypeScript (modifiers, type parameters, a return type), a Go function or
method, a Java method with a modifier, a Rust ``fn`` (any visibility and qualifiers)."""


def python_targets(roots: tuple[Path, ...]) -> Iterator[tuple[str, list[str], int, str, str, int]]:
    """(file, its lines, the definition's line, its name, its header's text, where the name is in it) of each recall
    target."""
    for path, rel in list_sources(roots):
        sf = parse_source(path, rel)
        for func in find_functions(sf) if sf else ():
            yield rel, sf.lines, func.lineno, func.name, f"def {func.name}(", 4


def brace_targets(roots: tuple[Path, ...], language: str) -> Iterator[tuple[str, list[str], int, str, str, int]]:
    """The same for every definition header ``DEFINITIONS`` finds in the language's files under the roots."""
    suffix, pattern = DEFINITIONS[language]
    for root in roots:
        for path in sorted(root.rglob(f"*{suffix}")):
            if ".min." in path.name or path.name.endswith(".d.ts") or not path.is_file():
                continue
            src = path.read_text(errors="replace")
            lines = src.split("\n")
            for m in pattern.finditer(src):
                g = m.lastindex  # the one group of the alternative that matched
                head = m.group(0).strip()
                lineno = src.count("\n", 0, m.start()) + 1
                yield (str(path.relative_to(root)), lines, lineno, m.group(g), head,
                       m.start(g) - m.start() - (len(m.group(0)) - len(m.group(0).lstrip())))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="*", type=Path, help="directories to read (default: the standard library)")
    ap.add_argument("--language", choices=("python", *DEFINITIONS), default="python")
    ap.add_argument("--unnamed", action="store_true", help="tag the views as output naming no language")
    ap.add_argument("--every", type=int, default=1, help="keep one definition in N (and one cut of the five)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    roots = tuple(p.resolve() for p in args.roots) or (Path(sysconfig.get_paths()["stdlib"]),)
    tagger = StructureTagger()
    info = (SpanInfo(kind=SegmentKind.TOOL_OUTPUT) if args.unnamed
            else SpanInfo(kind=SegmentKind.FILE_VIEW, language=args.language))
    targets = python_targets(roots) if args.language == "python" else brace_targets(roots, args.language)
    counts = {"raw": [0, 0], "numbered": [0, 0]}  # shape -> [views, missed]
    for i, (rel, file_lines, lineno, name, head, offset) in enumerate(targets):
        if i % args.every:
            continue
        for above, below in CUTS if args.every == 1 else (CUTS[i // args.every % len(CUTS)],):
            start = max(1, lineno - above)
            lines = file_lines[start - 1:lineno + below]
            views = {"raw": "\n".join(lines),
                     "numbered": "\n".join(f"{start + k:>6}\t{ln}" for k, ln in enumerate(lines))}
            for shape, text in views.items():
                at = text.index(head) + offset
                tag = next(t for s, e, t in tagger.intervals(text, info) if s <= at < e)
                counts[shape][0] += 1
                if tag.block_type != BlockType.FUNCTION_SIGNATURE:
                    counts[shape][1] += 1
                    print(f"{rel}:{lineno} {name} view {start}-{lineno + below} {shape}: {tag.block_type.name}")
    result = {"roots": [str(r) for r in roots], "language": args.language, "unnamed": args.unnamed,
              "every": args.every, "shapes": {s: {"views": v, "missed": m} for s, (v, m) in counts.items()}}
    print(json.dumps(result))
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
