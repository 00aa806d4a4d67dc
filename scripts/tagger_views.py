"""Benchmark: how often a view of real code cut mid-file still shows its definition as a signature.

For every recall target of the bench's builder (``find_functions``) in every ``.py`` file under the roots (default:
this interpreter's standard library), five views start 3-25 lines above the ``def`` and end 12-75 lines below it, as
the bench's views do (starting and ending inside statements, strings and blocks), each raw and numbered like
``cat -n``. Counts the views whose ``def`` name is not tagged ``FUNCTION_SIGNATURE``; prints the misses and writes the
counts as JSON.
"""

from __future__ import annotations

import argparse
import json
import sysconfig
from pathlib import Path

from codeagent.bench.build import find_functions, list_sources, parse_source
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo

CUTS = ((3, 12), (8, 40), (14, 75), (20, 12), (25, 40))
"""(lines above the ``def``, lines below it) of each view."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("roots", nargs="*", type=Path, help="directories to read (default: the standard library)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    roots = tuple(p.resolve() for p in args.roots) or (Path(sysconfig.get_paths()["stdlib"]),)
    tagger = StructureTagger()
    info = SpanInfo(kind=SegmentKind.FILE_VIEW, language="python")
    counts = {"raw": [0, 0], "numbered": [0, 0]}  # shape -> [views, missed]
    for path, rel in list_sources(roots):
        sf = parse_source(path, rel)
        for func in find_functions(sf) if sf else ():
            for above, below in CUTS:
                start = max(1, func.lineno - above)
                lines = sf.lines[start - 1:func.lineno + below]
                views = {"raw": "\n".join(lines),
                         "numbered": "\n".join(f"{start + k:>6}\t{ln}" for k, ln in enumerate(lines))}
                for shape, text in views.items():
                    at = text.index(f"def {func.name}(") + 4
                    tag = next(t for s, e, t in tagger.intervals(text, info) if s <= at < e)
                    counts[shape][0] += 1
                    if tag.block_type != BlockType.FUNCTION_SIGNATURE:
                        counts[shape][1] += 1
                        print(f"{rel}:{func.lineno} {func.name} view {start}-{func.lineno + below} {shape}: "
                              f"{tag.block_type.name}")
    result = {"roots": [str(r) for r in roots],
              "shapes": {s: {"views": v, "missed": m} for s, (v, m) in counts.items()}}
    print(json.dumps(result))
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
