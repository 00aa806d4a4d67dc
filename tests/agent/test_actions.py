"""The action format: fenced blocks named after a tool, parsed leniently but never guessed."""

from __future__ import annotations

import pytest

from codeagent.agent.actions import STOP, parse, parse_plan
from codeagent.agent.events import FormatError

TOOLS = frozenset({"view", "search", "edit", "create", "bash", "run_tests", "diff", "finish", "done"})


def test_view_with_header_path_and_range() -> None:
    a = parse("I read it.\n```view calc/ops.py 3-9\n```\n", TOOLS)
    assert (a.tool, a.args, a.thought) == ("view", {"path": "calc/ops.py", "start": 3, "end": 9}, "I read it.")


def test_view_path_on_first_body_line() -> None:
    assert parse("```view\ncalc/ops.py\n```", TOOLS).args == {"path": "calc/ops.py"}


def test_edit_search_replace_and_code_span() -> None:
    text = "Fix.\n```edit a.py\n<<<<<<< SEARCH\n    x = 1\n=======\n    x = 2\n>>>>>>> REPLACE\n```\n"
    a = parse(text, TOOLS)
    assert a.args == {"path": "a.py", "search": "    x = 1", "replace": "    x = 2"}
    s, e, lang = a.code
    assert lang == "python" and text[s:e].startswith("<<<<<<< SEARCH") and text[s:e].endswith("REPLACE")
    assert text[a.start:a.end].startswith("```edit") and text[a.start:a.end].endswith("```")


def test_create_bash_search_finish() -> None:
    c = parse("```create pkg/new.py\nprint(1)\n```\n", TOOLS)
    assert c.args == {"path": "pkg/new.py", "content": "print(1)\n"}
    assert parse("```bash\nls -la\n```\n", TOOLS).args == {"command": "ls -la"}
    assert parse("```search def divide\n*.py\n```\n", TOOLS).args == {"pattern": "def divide", "path": "*.py"}
    assert parse("```finish\nall good\n```", TOOLS).args == {"summary": "all good"}


def test_aliases_map_to_tools() -> None:
    assert parse("```sh\nls\n```\n", TOOLS).tool == "bash"
    assert parse("```pytest\n```\n", TOOLS).tool == "run_tests"


@pytest.mark.parametrize("text, message", [
    ("just words, no block", "no action block"),
    ("```frobnicate x\n```\n", "unknown tool 'frobnicate'"),
    ("```python\nprint(1)\n```\n", "is not an action"),
    ("```edit a.py\nno markers\n```\n", "SEARCH"),
    ("```view\n```\n", "needs a path"),
])
def test_malformed_replies_are_format_errors(text: str, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        parse(text, TOOLS)


def test_truncated_block_is_an_error_only_when_cut_by_length() -> None:
    assert parse("```bash\nls", TOOLS).args == {"command": "ls"}
    with pytest.raises(FormatError, match="cut off"):
        parse("```bash\nls", TOOLS, truncated=True)


def test_stop_string_matches_closing_fence_only() -> None:
    reply = "Look.\n```view a.py\n```\n"
    first = min(reply.find(s) + len(s) for s in STOP if s in reply)
    assert reply[:first] == reply  # not the opening fence
    assert not any(s in "```view a.py\n" for s in STOP)


def test_plan_numbered_bullets_and_cap() -> None:
    assert parse_plan("Plan:\n1. Read ops\n2) Fix divide\nStep 3: test", 4) == ["Read ops", "Fix divide", "test"]
    assert parse_plan("- a step\n- another", 4) == ["a step", "another"]
    assert parse_plan("1. read a\n2. fix b\n3. run c\n4. see d", 2) == ["read a", "fix b; run c; see d"]
    with pytest.raises(FormatError):
        parse_plan("  \n", 3)


def test_plan_copied_from_the_instructions_is_rejected() -> None:
    prompt = "Write your plan now: 2 to 4 numbered lines. Example plan:\n1. View src/util.py to find slugify"
    with pytest.raises(FormatError, match="repeats the instructions"):
        parse_plan("1. 2 to 4 numbered lines (1. 2. 3.\n2. View src/util.py to find slugify", 4, prompt)
    assert parse_plan("1. View calc/ops.py\n2. 3. 4.", 4, prompt) == ["View calc/ops.py"]


def test_bare_fence_gets_a_specific_hint() -> None:
    with pytest.raises(FormatError, match="needs a tool name"):
        parse("```\nls\n```\n", TOOLS)


def test_one_line_blocks() -> None:
    assert parse("```view calc/ops.py```\n", TOOLS).args == {"path": "calc/ops.py"}
    a = parse("ok ```done``` then more", TOOLS)
    assert a.tool == "done" and "then" not in a.raw
