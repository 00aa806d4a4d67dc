"""Benchmark: a view of real code in formats no bench style renders; is its ``def`` still a signature?

For one recall target in ``--every`` of the bench's builder (``find_functions``) over the standard library, a view
cut as ``scripts/tagger_views.py`` cuts it (one of its five cuts) is wrapped in each format below and tagged as a
tool's output naming no language. Counts, per format, the views whose ``def`` name is not ``FUNCTION_SIGNATURE``;
``raw`` (the view alone) is the baseline every format should match. Prints the misses and writes the counts as JSON.

    PYTHONPATH=. python scripts/tagger_formats.py --every 4 --out formats.json
"""

from __future__ import annotations

import argparse
import html
import json
import sysconfig
from collections.abc import Callable
from pathlib import Path

from codeagent.bench.build import find_functions, list_sources, parse_source
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo
from tagger_views import CUTS  # scripts/ is on the path when this runs as a script

Format = Callable[[list[str], int, str, int], str]
"""(the view's lines, its first line's number, the file's path, the definition's line) -> the text an agent sees."""


def _joined(lines: list[str]) -> str:
    return "\n".join(lines)


def _numbered(lines: list[str], start: int, label: Callable[[int], str]) -> str:
    """The lines, each after ``label`` of its number."""
    return "\n".join(label(start + k) + x for k, x in enumerate(lines))


def _grep(lines: list[str], start: int, match: int, path: str = "") -> str:
    """``grep -n -C``: ``N:`` on the match, ``N-`` on its context, after ``path`` and the same mark when given
    (``grep -rn -C`` over files)."""
    def label(n: int) -> str:
        mark = ":" if n == match else "-"
        return f"{path}{mark}{n}{mark}" if path else f"{n}{mark}"
    return _numbered(lines, start, label)


def _ripgrep_json(lines: list[str], start: int, path: str, match: int) -> str:
    rows = [json.dumps({"type": "begin", "data": {"path": {"text": path}}})]
    for k, line in enumerate(lines):
        rows.append(json.dumps({"type": "match" if start + k == match else "context",
                                "data": {"path": {"text": path}, "lines": {"text": line + "\n"},
                                         "line_number": start + k, "absolute_offset": 80 * k, "submatches": []}}))
    return "\n".join([*rows, json.dumps({"type": "end", "data": {"path": {"text": path}}})])


def _diff(lines: list[str], start: int, path: str, _match: int) -> str:
    mid = len(lines) // 2
    body = ([" " + x for x in lines[:mid]] + ["-" + lines[mid], "+" + lines[mid].rstrip() + "  # changed"]
            + [" " + x for x in lines[mid + 1:]])
    return (f"diff --git a/{path} b/{path}\nindex 3f2a1b4..8c9d0e1 100644\n--- a/{path}\n+++ b/{path}\n"
            f"@@ -{start},{len(lines)} +{start},{len(lines) + 1} @@\n" + _joined(body))


def _vim(lines: list[str], start: int, path: str, _match: int) -> str:
    shown = lines[:40]
    return (_joined(shown) + "\n" + "~\n" * 3 + f'"{path}" {start + len(lines)}L, {sum(map(len, lines))}B'
            + " " * 20 + f"{start},1           Top")


FORMATS: dict[str, Format] = {
    "raw": lambda ls, a, p, m: _joined(ls),
    "roo": lambda ls, a, p, m: (f'<file><path>{p}</path>\n<content lines="{a}-{a + len(ls) - 1}">\n'
                                + _numbered(ls, a, lambda n: f"{n} | ") + "\n</content>\n</file>"),
    "zed": lambda ls, a, p, m: f"```{p}#L{a}-{a + len(ls) - 1}\n{_joined(ls)}\n```",
    "titled_fence": lambda ls, a, p, m: f'```python title="{p}"\n{_joined(ls)}\n```',
    "rg_heading": lambda ls, a, p, m: f"{p}\n" + _grep(ls, a, m),
    "grep_files": lambda ls, a, p, m: _grep(ls, a, m, path=p),
    "rg_json": _ripgrep_json,
    "diff": _diff,
    "awk_numbered": lambda ls, a, p, m: _numbered(ls, a, lambda n: f"{n:4d}: "),
    "harmony": lambda ls, a, p, m: ("<|start|>functions.read_file to=assistant<|channel|>commentary<|message|>"
                                    + json.dumps({"content": _joined(ls)}) + "<|end|>"),
    "mistral": lambda ls, a, p, m: "[TOOL_RESULTS] " + json.dumps({"content": _joined(ls), "call_id": "a1B2c3D4e"})
                                   + "[/TOOL_RESULTS]",
    "deepseek": lambda ls, a, p, m: ("<\uff5ctool\u2581output\u2581begin\uff5c>" + _joined(ls)
                                     + "<\uff5ctool\u2581output\u2581end\uff5c>"),
    "llama_ipython": lambda ls, a, p, m: ("<|start_header_id|>ipython<|end_header_id|>\n\n"
                                          + json.dumps({"output": _joined(ls)}) + "<|eot_id|>"),
    "chatml_raw": lambda ls, a, p, m: f"<|im_start|>tool\n{_joined(ls)}<|im_end|>",
    "cdata": lambda ls, a, p, m: f'<tool_result name="read_file"><![CDATA[\n{_joined(ls)}\n]]></tool_result>',
    "claude_document": lambda ls, a, p, m: (f'<document index="1">\n<source>{p}</source>\n<document_content>\n'
                                            f"{_joined(ls)}\n</document_content>\n</document>"),
    "vim": _vim,
    "escaped_element": lambda ls, a, p, m: f"<result>{html.escape(_joined(ls))}</result>",
    "python_dict": lambda ls, a, p, m: repr({"path": p, "content": _joined(ls) + "\n", "lines": len(ls)}),
    "python_object": lambda ls, a, p, m: f"ToolResult(output={_joined(ls) + chr(10)!r}, exit_code=0)",
    "no_break_spaces": lambda ls, a, p, m: "\n".join("\u00a0" * (len(x) - len(x.lstrip(" "))) + x.lstrip(" ")
                                                     for x in ls),
    "quoted_twice": lambda ls, a, p, m: "\n".join("> > " + x for x in ls),
    "colon_tab_numbered": lambda ls, a, p, m: _numbered(ls, a, lambda n: f"{n}:\t"),
    "json_message": lambda ls, a, p, m: json.dumps({"role": "tool", "name": "read", "content": _joined(ls)}),
    "yaml_block": lambda ls, a, p, m: f"tool: read\npath: {p}\noutput: |\n" + "\n".join(
        ("  " + x) if x.strip() else "" for x in ls),
    "arrow_numbered": lambda ls, a, p, m: _numbered(ls, a, lambda n: f"{n:6d}\u2192"),
    "swe_agent_open": lambda ls, a, p, m: (f"[File: /repo/{p} (999 lines total)]\n({a - 1} more lines above)\n"
                                           + _numbered(ls, a, lambda n: f"{n}:") + "\n(500 more lines below)"),
    "cat_n_titled": lambda ls, a, p, m: (f"Here's the result of running `cat -n` on /workspace/{p}:\n"
                                         + _numbered(ls, a, lambda n: f"{n:6d}\t")),
    "apply_patch": lambda ls, a, p, m: (f"*** Begin Patch\n*** Update File: {p}\n@@\n"
                                        + "\n".join(" " + x for x in ls) + "\n*** End Patch"),
    "l_numbered": lambda ls, a, p, m: _numbered(ls, a, lambda n: f"L{n}: "),
    "repo_map_bars": lambda ls, a, p, m: f"{p}:\n\u22ee...\n" + "\n".join("\u2502" + x for x in ls) + "\n\u22ee...",
    "crlf": lambda ls, a, p, m: "\r\n".join(ls),
    "new_file_diff": lambda ls, a, p, m: (f"--- /dev/null\n+++ b/{p}\n@@ -0,0 +1,{len(ls)} @@\n"
                                          + "\n".join("+" + x for x in ls)),
    "tabs": lambda ls, a, p, m: "\n".join("\t" * (n // 4) + " " * (n % 4) + x.lstrip(" ")
                                          for x in ls for n in [len(x) - len(x.lstrip(" "))]),
    "grep_one_file": lambda ls, a, p, m: _grep(ls, a, m),
    "ag_heading": lambda ls, a, p, m: f"{p}\n" + _numbered(ls, a, lambda n: f"{n}:"),
    "pr_numbered": lambda ls, a, p, m: _numbered(ls, a, lambda n: f"{n:5d}  "),
    "head_banner": lambda ls, a, p, m: f"==> {p} <==\n" + _joined(ls),
    "html_pre": lambda ls, a, p, m: f'<pre><code class="language-python">{html.escape(_joined(ls))}</code></pre>',
}
"""The formats: Roo Code's ``N | code`` file element, Zed's ``path#L`` fence, a fence titled with the path,
ripgrep's headed and JSON output, ``grep -rn -C`` over files, a modifying diff hunk, ``awk`` numbering, gpt-oss's
harmony, Mistral's and DeepSeek's and Llama's and ChatML's templates around a result, a CDATA section, Anthropic's
document element, vim's screen, an element holding escaped text, a result printed by Python (a dict, an object),
indentation in no-break spaces (a web page's copy), a reply quoted twice, ``12:<tab>`` numbering, a JSON message,
a YAML block scalar; and (Round 36) Claude Code's ``N→code`` reads, SWE-agent's ``open`` window, OpenHands' ``cat -n``
view under its title, a Codex ``apply_patch`` envelope, ``L12: code`` numbering, a repository map's ``│``/``⋮``
rows, CRLF line ends, a new-file diff, tab indentation, ``grep -n -C`` over one file, ``ag``'s heading, ``pr -n``
numbering, ``head``'s ``==> path <==`` banner, an HTML ``<pre><code>`` block."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--every", type=int, default=4, help="keep one recall target in N")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    root = Path(sysconfig.get_paths()["stdlib"])
    tagger = StructureTagger()
    info = SpanInfo(kind=SegmentKind.TOOL_OUTPUT)
    counts = {name: [0, 0] for name in FORMATS}  # format -> [views, missed]
    targets = [(rel, sf, func) for path, rel in list_sources((root,)) if (sf := parse_source(path, rel))
               for func in find_functions(sf)]
    for i, (rel, sf, func) in enumerate(targets):
        if i % args.every:
            continue
        above, below = CUTS[i // args.every % len(CUTS)]
        start = max(1, func.lineno - above)
        lines = sf.lines[start - 1:func.lineno + below]
        for name, fmt in FORMATS.items():
            text = fmt(lines, start, rel, func.lineno)
            at = text.index(f"def {func.name}(") + 4
            tag = next(t for s, e, t in tagger.intervals(text, info) if s <= at < e)
            counts[name][0] += 1
            if tag.block_type != BlockType.FUNCTION_SIGNATURE:
                counts[name][1] += 1
                print(f"{name}: {rel}:{func.lineno} {func.name} view {start}-{func.lineno + below}: "
                      f"{tag.block_type.name}")
    result = {"root": str(root), "every": args.every,
              "formats": {n: {"views": v, "missed": m} for n, (v, m) in counts.items()}}
    print(json.dumps(result))
    args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
