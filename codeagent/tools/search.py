"""search: find a regex (or literal text) in the workspace's files."""

from __future__ import annotations

import fnmatch
import re
from typing import Any

from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools import beneath
from codeagent.tools.base import SKIP_DIRS, TOOLS, Arg, BaseTool, ToolContext, ToolError, is_binary

MAX_HITS = 100
MAX_FILE_BYTES = 2 * 1024 * 1024
MAX_LINE_CHARS = 200


@TOOLS.register("search")
class Search(BaseTool):
    """``file:line: text`` for each matching line, skipping .git and dependency folders, capped.

    Files are opened by directory descriptor without following symlinks; FIFOs, devices and files
    over ``MAX_FILE_BYTES`` are skipped."""

    description = "Search the repository's files for a regex (or plain text); prints file:line: text."
    args = (
        Arg("pattern", "regular expression (invalid regexes are searched as plain text)"),
        Arg("path", "glob of files to search, e.g. '*.py' or 'src/**/*.js'", required=False),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        pattern, glob = args["pattern"], args.get("path") or ""
        if not isinstance(pattern, str) or not isinstance(glob, str):
            raise ToolError("pattern and path must be text")
        try:
            rx = re.compile(pattern)
        except re.error:
            rx = re.compile(re.escape(pattern))
        hits: list[str] = []
        total = 0
        for relpath, dirfd in beneath.walk_files(ctx.workspace, SKIP_DIRS):
            name = relpath.rsplit("/", 1)[-1]
            if glob and not (fnmatch.fnmatch(relpath, glob) or fnmatch.fnmatch(name, glob)):
                continue
            data = beneath.read_in_dir(dirfd, name, MAX_FILE_BYTES)
            if data is None or is_binary(data):
                continue
            for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                if rx.search(line):
                    total += 1
                    if len(hits) < MAX_HITS:
                        hits.append(f"{relpath}:{lineno}: {line.strip()[:MAX_LINE_CHARS]}")
        if not hits:
            text = f"no matches for {pattern!r}" + (f" in {glob}" if glob else "")
        else:
            text = "\n".join(hits)
            if total > len(hits):
                text += f"\n[... {total - len(hits)} more matches not shown; narrow the pattern or path]"
        return Observation(text=text, info=SpanInfo(kind=SegmentKind.TOOL_OUTPUT), data={"matches": total})
