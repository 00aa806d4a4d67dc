"""Task format: loading, rejection with line numbers, span kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeagent.bench.tasks import (
    Segment,
    Task,
    dump_tasks,
    load_tasks,
    render_chatml,
    segment_kind_to_span,
    task_spans,
)
from codeagent.errors import InputError
from codeagent.kvcache.tags import SegmentKind

# The example of shared/bench/TASKS.md, verbatim.
EXAMPLE = """{"id": "sigrecall-0007",
 "family": "signature_recall",
 "segments": [
   {"role": "system",    "kind": "text",        "subtask": null, "text": "You are a coding agent..."},
   {"role": "user",      "kind": "text",        "subtask": null, "text": "Add retry support to ..."},
   {"role": "assistant", "kind": "plan",        "subtask": null, "text": "1. Read ...\\n2. ..."},
   {"role": "assistant", "kind": "tool_call",   "subtask": "s1", "text": "view pkg/util.py"},
   {"role": "tool",      "kind": "tool_output", "subtask": "s1", "text": "<file contents>"},
   {"role": "assistant", "kind": "code",        "subtask": "s2", "text": "```python\\n...\\n```"}
 ],
 "commits": ["s1"],
 "n_context_tokens": 4123,
 "probe": {"prompt": "```python\\ndef fetch_with_retry(", "target": "url, retries=3, backoff=0.5):"}}"""


def good(i: int = 0, **over) -> dict:
    row = json.loads(EXAMPLE)
    row["id"] = f"t-{i}"
    row.update(over)
    return row


def write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "tasks.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_tasks_md_example_parses(tmp_path):
    p = write(tmp_path, [json.dumps(json.loads(EXAMPLE))])
    [task] = load_tasks(p)
    assert task.id == "sigrecall-0007" and task.commits == ["s1"] and task.n_context_tokens == 4123
    assert task.probe.target == "url, retries=3, backoff=0.5):"
    assert [s.kind for s in task.segments][-1] == "code"


def test_unknown_fields_ignored_and_roundtrip(tmp_path):
    row = good(meta={"file": "x.py"}, extra_top=1)
    row["segments"][0]["colour"] = "blue"
    row["probe"]["hint"] = "none"
    [task] = load_tasks(write(tmp_path, [json.dumps(row)]))
    assert not hasattr(task, "extra_top") and not hasattr(task.probe, "hint")
    assert task.meta == {"file": "x.py"} and task.style is None  # kept only to report by style
    out = dump_tasks([task], tmp_path / "out" / "again.jsonl")
    assert load_tasks(out) == [task]


def test_bad_json_reports_line_3(tmp_path):
    p = write(tmp_path, [json.dumps(good(0)), json.dumps(good(1)), '{"id": "t-2", "family": ', json.dumps(good(3))])
    with pytest.raises(InputError, match=r"tasks\.jsonl:3: invalid JSON"):
        load_tasks(p)


def test_bad_role_reports_line_2(tmp_path):
    bad = good(1)
    bad["segments"][2]["role"] = "robot"
    p = write(tmp_path, [json.dumps(good(0)), json.dumps(bad)])
    with pytest.raises(InputError, match=r"tasks\.jsonl:2: invalid task: segments\.2\.role") as err:
        load_tasks(p)
    assert "\n" not in str(err.value)


def test_bad_kind_and_missing_probe(tmp_path):
    bad = good(0)
    bad["segments"][0]["kind"] = "essay"
    with pytest.raises(InputError, match=r":1: invalid task: segments\.0\.kind"):
        load_tasks(write(tmp_path, [json.dumps(bad)]))
    missing = good(0)
    del missing["probe"]
    with pytest.raises(InputError, match=r":1: invalid task: probe: Field required"):
        load_tasks(write(tmp_path, [json.dumps(missing)]))


def test_blank_lines_skipped_but_line_numbers_kept(tmp_path):
    bad = good(1)
    bad["probe"] = {"prompt": "x"}
    p = write(tmp_path, [json.dumps(good(0)), "", "   ", json.dumps(bad)])
    with pytest.raises(InputError, match=r":4: invalid task: probe\.target"):
        load_tasks(p)


def test_duplicate_empty_missing_and_non_object(tmp_path):
    with pytest.raises(InputError, match=r":2: duplicate task id 't-0' \(first on line 1\)"):
        load_tasks(write(tmp_path, [json.dumps(good(0)), json.dumps(good(0))]))
    with pytest.raises(InputError, match="empty"):
        load_tasks(write(tmp_path, [""]))
    with pytest.raises(InputError, match="not found"):
        load_tasks(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match=r":1: a task must be a JSON object"):
        load_tasks(write(tmp_path, ["[1, 2]"]))


def test_span_kinds():
    segs = [
        Segment(role="system", kind="text", text="You are..."),
        Segment(role="user", kind="text", text="Fix the bug"),
        Segment(role="assistant", kind="plan", text="1. a\n2. b"),
        Segment(role="assistant", kind="tool_call", subtask="s1", text="view pkg/util.py"),
        Segment(role="tool", kind="tool_output", subtask="s1", text="     1\timport os\n     2\t"),
        Segment(role="assistant", kind="tool_call", subtask="s2", text="run_tests tests/test_util.py"),
        Segment(role="tool", kind="tool_output", subtask="s2", text="1 failed, 3 passed in 0.1s"),
        Segment(role="assistant", kind="tool_call", subtask="s2", text="bash ls"),
        Segment(role="tool", kind="tool_output", subtask="s2", text="README.md\nsetup.py"),
        Segment(role="tool", kind="tool_output", subtask="s2", text="    10\tdef f():\n    11\t    pass"),
        Segment(role="assistant", kind="code", subtask="s3", text="```ts\nconst a = 1;\n```"),
        Segment(role="user", kind="text", text="thanks"),
    ]
    task = Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"})
    spans = task_spans(task)
    assert [s.kind for s in spans] == [
        SegmentKind.SYSTEM, SegmentKind.ISSUE, SegmentKind.PLAN, SegmentKind.TOOL_CALL,
        SegmentKind.FILE_VIEW, SegmentKind.TOOL_CALL, SegmentKind.TEST_LOG, SegmentKind.TOOL_CALL,
        SegmentKind.TOOL_OUTPUT, SegmentKind.FILE_VIEW, SegmentKind.CODE, SegmentKind.TEXT,
    ]
    assert spans[4].language == "python" and spans[4].subtask == "s1"
    assert spans[9].language is None
    assert spans[10].language == "typescript" and spans[10].subtask == "s3"
    assert segment_kind_to_span(segs[1]).kind == SegmentKind.TEXT  # not marked as the first user text


def test_render_chatml():
    segs = [Segment(role="user", kind="text", text="hi"), Segment(role="tool", kind="tool_output", text="ok")]
    assert render_chatml(segs) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>tool\nok<|im_end|>\n"


def test_span_kinds_of_foreign_sessions():
    """Calls in any syntax, results sent back as user messages or JSON: kinds and languages by content."""
    code = "import os\n\n\ndef load(path, strict=False):\n    with open(path) as fh:\n        return fh.read()\n"
    segs = [
        Segment(role="system", kind="text", text="You are a helpful assistant that can run bash commands."),
        Segment(role="user", kind="text", text="Fix the loader."),
        Segment(role="assistant", kind="text", text="THOUGHT: read it.\n\n```bash\nsed -n '1,40p' src/io/load.py\n```"),
        Segment(role="user", kind="text", text=f"<returncode>0</returncode>\n<output>\n{code}</output>"),
        Segment(role="assistant", kind="tool_call", text='view_file(path="src/io/load.py", start_line=1)'),
        Segment(role="tool", kind="tool_output", text=code),
        Segment(role="assistant", kind="tool_call", text=json.dumps({"name": "read_file", "arguments": {"path": "a/b.ts"}})),
        Segment(role="tool", kind="tool_output", text=json.dumps({"content": "export function f(a: number): number {\n"
                                                                            "  return a + 1;\n}\n\nconst x = f(1);\n"})),
        Segment(role="assistant", kind="text", text="THOUGHT: run the tests.\n\n```bash\nnpx jest\n```"),
        Segment(role="user", kind="text", text=" FAIL  src/a.test.ts\n  ✕ adds (2 ms)\n\nTests:       1 failed, 1 total\n"),
        Segment(role="assistant", kind="tool_call", text=">>> read('src/io/load.py', 1, 6)"),
        Segment(role="tool", kind="tool_output", text=repr(code)),
        Segment(role="assistant", kind="text", text="The loader is fine now."),
    ]
    spans = task_spans(Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"}))
    assert [s.kind for s in spans] == [
        SegmentKind.SYSTEM, SegmentKind.ISSUE, SegmentKind.TOOL_CALL, SegmentKind.FILE_VIEW, SegmentKind.TOOL_CALL,
        SegmentKind.FILE_VIEW, SegmentKind.TOOL_CALL, SegmentKind.FILE_VIEW, SegmentKind.TOOL_CALL,
        SegmentKind.TEST_LOG, SegmentKind.TOOL_CALL, SegmentKind.FILE_VIEW, SegmentKind.TEXT,
    ]
    assert [spans[i].language for i in (3, 5, 7, 11)] == ["python", "python", "typescript", "python"]


@pytest.mark.parametrize("fence", ["", "python"])
def test_pasted_file_language_comes_from_its_path_not_its_content(fence):
    """aider pastes ``path`` + fence; paths the pasted code mentions (``setup.cfg``, ``pyproject.toml``)
    must not decide its language."""
    code = ('def load(path="pyproject.toml"):\n    """Read settings from setup.cfg or pyproject.toml."""\n'
            "    with open(path) as fh:\n        return fh.read()\n")
    pasted = f"I added these files to the chat.\n\nsrc/conf/load.py\n```{fence}\n{code}```"
    segs = [Segment(role="user", kind="text", text="Fix the loader."),
            Segment(role="assistant", kind="text", text="Please add src/conf/load.py to the chat."),
            Segment(role="user", kind="text", text=pasted)]
    span = task_spans(Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"}))[2]
    assert (span.kind, span.language) == (SegmentKind.FILE_VIEW, "python")


def test_json_result_of_a_view_reads_as_the_same_text_raw():
    """A file's head (comments, a docstring, imports: little code by share) sent back as a JSON result is a view of
    that file, as the same text sent raw after the same call is: the kind must not depend on the carrier."""
    head = ('# Copyright (C) 2010 The Authors\n#\n# This module is part of Pkg and is released under\n'
            '# the BSD License: https://opensource.org/license/bsd-3-clause/\n'
            '"""Module with basic data structures - they are designed to be lightweight and fast"""\n'
            "from pkg.util import bin_to_hex\n\nfrom pkg.fun import (\n    type_id_to_type_map,\n)\n")
    call = json.dumps({"name": "read_file", "arguments": {"path": "pkg/base.py", "start_line": 1, "end_line": 10}})
    spans = []
    for result in (head, json.dumps({"path": "pkg/base.py", "start_line": 1, "content": head})):
        segs = [Segment(role="user", kind="text", text="Fix the base."),
                Segment(role="assistant", kind="tool_call", text=call),
                Segment(role="tool", kind="tool_output", text=result)]
        spans.append(task_spans(Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"}))[2])
    assert [(s.kind, s.language) for s in spans] == [(SegmentKind.FILE_VIEW, "python")] * 2


@pytest.mark.parametrize(("text", "kind"), [
    ("1. Read `a.py`.\n2. Fix the tests.\n3. Run the suite.", SegmentKind.PLAN),
    ("THOUGHT: 1. Read `a.py`.\n2. Fix the tests.", SegmentKind.PLAN),
    ("<thinking>\n1. Read `a.py`.\n2. Fix the tests.\n</thinking>", SegmentKind.PLAN),
    ("Here is how I will approach this:\n- read `a.py`\n- fix the tests", SegmentKind.PLAN),
    ("Plan:\n- [ ] read `a.py`\n- [x] fix the tests", SegmentKind.PLAN),
    ("2. Fix the tests.\n3. Run the suite.", SegmentKind.TEXT),  # the middle of a list, not a plan
    ("The loader fails on empty files.\nThe fix reads the size first.\nThen it returns early.\n1. See `a.py`.",
     SegmentKind.TEXT),
    ("Step 2: fix the tests for `a.py`.", SegmentKind.TEXT),
    ("THOUGHT: 1. read it\n2. test it\n\n```bash\ncat a.py\n```", SegmentKind.TOOL_CALL),
])
def test_a_plan_is_found_by_content(text, kind):
    """No agent declares its plan: an assistant message that is mostly a list of steps (numbered from 1, or bullets),
    after an optional label, is a plan; prose with a list item in it, or a list's middle, is text."""
    segs = [Segment(role="user", kind="text", text="Fix the loader."),
            Segment(role="assistant", kind="text", text=text)]
    assert task_spans(Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"}))[1].kind == kind


@pytest.mark.parametrize("wrap", [False, True])
def test_a_files_licence_header_viewed_alone_is_a_view(wrap):
    """The first lines of a file are often comments only, with maybe the docstring and ``__all__``: no two lines of
    code, but a view of the file the call names, as the numbered rendering of the same lines is; a listing after a
    call naming a file is still output."""
    head = ("#\n# Module implementing queues\n#\n# Copyright (c) 2006-2008, R Oudkerk\n#\n\n"
            '"""Queues."""\n\n__all__ = [\'Queue\', \'SimpleQueue\']\n')
    if wrap:  # mini-swe-agent's observation
        head = f"<returncode>0</returncode>\n<output>\n{head}</output>"
    kinds = []
    listing = ("ls pkg/queues.py pkg/util.py", "pkg/queues.py\npkg/util.py\n")
    for call, result in (("sed -n '1,9p' pkg/queues.py", head), listing):
        segs = [Segment(role="user", kind="text", text="Fix the queue."),
                Segment(role="assistant", kind="tool_call", text=call),
                Segment(role="tool", kind="tool_output", text=result)]
        span = task_spans(Task(id="x", family="f", segments=segs, probe={"prompt": "", "target": "a"}))[2]
        kinds.append((span.kind, span.language))
    assert kinds == [(SegmentKind.FILE_VIEW, "python"), (SegmentKind.TOOL_OUTPUT, None)]
