"""Benchmark: structure-tagging time for a 2000-line Python file (best of 5). Prints and writes JSON."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, default=Path("docs/tagger_speed.json"))
    args = ap.parse_args()
    from transformers import AutoTokenizer

    from codeagent.kvcache.models import resolve
    from codeagent.kvcache.tagger import StructureTagger
    from codeagent.kvcache.tags import SegmentKind, SpanInfo

    import argparse as src_mod

    text = "".join(Path(src_mod.__file__).read_text().splitlines(keepends=True)[:2000])
    tok = AutoTokenizer.from_pretrained(str(resolve("smollm2")))
    offsets = tok(text, return_offsets_mapping=True, add_special_tokens=False)["offset_mapping"]
    info = SpanInfo(kind=SegmentKind.FILE_VIEW, language="python")
    tagger = StructureTagger()
    tagger.tag(text, offsets, info)  # warm-up: grammar and query loading
    best = min(_timed(lambda: tagger.tag(text, offsets, info)) for _ in range(5))
    row = {"lines": 2000, "tokens": len(offsets), "best_ms": round(best * 1000, 2)}
    print(json.dumps(row))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(row, indent=2) + "\n")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
