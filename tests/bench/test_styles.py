"""Task styles: every family rendered in other agents' conventions keeps its content, probe and
commits, and the structure is still found by content (issue 10, item 3)."""

from __future__ import annotations

import json
import re

import pytest

from codeagent.bench import build
from codeagent.bench.build import TokenCounter, build_tasks
from codeagent.bench.styles import STYLES, restyle
from codeagent.bench.tasks import load_tasks, render_chatml, task_spans
from codeagent.errors import InputError
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind


@pytest.fixture(scope="module")
def tasks(tokenizer, stdlib):
    """From the standard library (tests/kvcache/test_tagger_content.py holds the views of a site-packages file that
    once broke this test)."""
    return build_tasks(0, 1, tokenizer, families=["signature_recall", "next_line_raw"], roots=stdlib)


def test_every_style_keeps_the_problem(tasks, tokenizer):
    count = TokenCounter(tokenizer)
    for task in tasks:
        for style in STYLES:
            t = restyle(task, style, count.segments)
            assert t.meta["style"] == style and t.style == style
            assert t.id == (task.id if style == "own" else f"{task.id}-{style}")
            assert t.probe == task.probe and t.commits == task.commits
            assert {s.subtask for s in t.segments} == {s.subtask for s in task.segments}
            assert t.n_context_tokens == count(render_chatml(t.segments))
            context = render_chatml(t.segments)
            if task.family == "signature_recall":
                name = task.meta["function"]
                assert f"def {name}({task.probe.target}" in context.replace('\\"', '"')
            else:
                assert task.probe.target not in context


def test_styles_speak_their_own_syntax(tasks):
    task = tasks[0]
    raw, mini, js, aider = (restyle(task, s) for s in ("raw", "minisweagent", "json", "aider"))
    assert any(s.text.startswith("view_file(path=") for s in raw.segments)
    assert not any(re.match(r"\s+\d+\t", s.text) for s in raw.segments if s.kind == "tool_output")
    assert not any(s.role == "tool" for s in mini.segments)
    assert any(s.role == "user" and s.text.startswith("<returncode>") for s in mini.segments)
    assert any("```bash\nsed -n '" in s.text for s in mini.segments)
    for s in js.segments:
        if s.kind in ("tool_call", "tool_output"):
            json.loads(s.text)
    assert any("<<<<<<< SEARCH" in s.text for s in aider.segments)
    assert any(s.role == "user" and "```\n" in s.text for s in aider.segments[2:])


def test_held_out_styles_speak_their_own_syntax(tasks):
    """The styles added after the tagger's format work: OpenHands, SWE-agent, Claude Code, Cline and Codex CLI."""
    task = tasks[0]
    oh, swe, cc = (restyle(task, s) for s in ("openhands", "sweagent", "claude"))
    assert any("<function=str_replace_editor>\n<parameter=command>view</parameter>" in s.text for s in oh.segments)
    assert any(s.role == "user" and s.text.startswith("EXECUTION RESULT of [str_replace_editor]:\nHere's the result "
                                                       "of running `cat -n`") for s in oh.segments)
    assert any(re.search(r"^\[File: /repo/\S+\]\n\(\d+ more lines above\)\n\d+:", s.text) for s in swe.segments)
    assert any(re.search(r"^DISCUSSION\n.*\n\n```\nopen \S+ \d+\n```$", s.text, re.DOTALL) for s in swe.segments)
    assert any("\nend_of_edit\n```" in s.text for s in swe.segments)
    assert any(json.loads(s.text).get("name") == "Read" for s in cc.segments if s.kind == "tool_call")
    assert any(re.match(r"\s+\d+\u2192", s.text) for s in cc.segments if s.kind == "tool_output")
    cline, codex = (restyle(task, s) for s in ("cline", "codex"))
    assert any(s.role == "assistant" and "<read_file>\n<path>" in s.text for s in cline.segments)
    assert any(s.role == "user" and re.match(r"\[read_file for '\S+'\] Result:\n<file><path>\S+</path>\n"
                                              r"<content lines=\"\d+-\d+\">\n\d+ \| ", s.text) for s in cline.segments)
    calls = [json.loads(s.text) for s in codex.segments if s.kind == "tool_call"]
    assert any(c["arguments"]["command"][:2] == ["bash", "-lc"] for c in calls)
    assert any(c["arguments"]["command"][0] == "apply_patch" for c in calls)
    assert all("output" in json.loads(s.text) for s in codex.segments if s.kind == "tool_output")
    for t in (oh, swe, cc, cline, codex):  # nothing of codeagent's own calls is left
        assert not any(re.match(r"(?:view|run_tests|edit) ", s.text) for s in t.segments)


@pytest.mark.parametrize("style", STYLES)
def test_structure_found_in_every_style(tasks, style):
    """The viewed target's signature is tagged as one, whatever the style."""
    task = restyle(tasks[0], style)
    name = task.meta["function"]
    spans = task_spans(task)
    kinds = {s.kind for s in spans}
    assert SegmentKind.FILE_VIEW in kinds and SegmentKind.TEST_LOG in kinds, style
    tagger = StructureTagger()
    for seg, info in zip(task.segments, spans):
        m = re.search(rf"def {name}\(", seg.text)
        if m and seg.subtask == "s1":
            assert info.kind == SegmentKind.FILE_VIEW and info.language == "python", (style, info)
            ivs = tagger.intervals(seg.text, info)
            tag = next(t for s, e, t in ivs if s <= m.start() + 4 < e)
            assert tag.block_type == BlockType.FUNCTION_SIGNATURE, (style, tag)
            break
    else:
        raise AssertionError(f"no view of {name} in style {style}")


def test_next_line_raw_has_no_signature_near_the_probe(tasks):
    task = tasks[1]
    assert task.family == "next_line_raw"
    view = task.segments[-1].text
    assert not re.search(r"^\s+\d+\t", view, re.MULTILINE)  # a raw dump
    tail = task.probe.prompt.split("```python\n", 1)[1]
    assert not re.search(r"^\s*(?:(?:async\s+)?def|class)\b|^\s*@", tail, re.MULTILINE)
    assert re.search(rf"\b{task.meta['identifier']}\b", task.probe.target)


def test_build_command_writes_styles(tmp_path, tokenizer, stdlib, monkeypatch, capsys):
    monkeypatch.setattr(build, "load_default_tokenizer", lambda: tokenizer)
    monkeypatch.setattr(build, "source_roots", lambda: stdlib)  # site-packages change with PyPI's releases
    out = build.build_command(tmp_path / "t.jsonl", seed=0, n=1, families=["signature_recall"],
                              styles=["own", "json"])
    loaded = load_tasks(out)
    assert [t.id for t in loaded] == ["sigrecall-0-0000", "sigrecall-0-0000-json"]
    assert [t.style for t in loaded] == ["own", "json"]
    with pytest.raises(InputError, match="unknown style 'vim'"):
        build.build_command(tmp_path / "x.jsonl", seed=0, n=1, families=["signature_recall"], styles=["vim"])
