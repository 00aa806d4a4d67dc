"""Each tool's happy path and the model's usual mistakes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codeagent.kvcache.tags import SegmentKind
from codeagent.tools import TOOLS
from codeagent.tools.base import cut_middle
from codeagent.tools.testrun import detect, parse_counts


def test_every_tool_describes_itself(tools) -> None:
    assert set(TOOLS.names()) == {"view", "create", "edit", "replace", "search", "bash", "run_tests", "diff", "finish"}
    for name, tool in tools.items():
        assert tool.name == name and tool.description and "\n" not in tool.description
        for a in tool.args:
            assert a.name and a.meaning


def test_view_numbers_lines_and_tags_language(ctx, tools) -> None:
    obs = tools["view"].run({"path": "pkg/calc.py"}, ctx)
    assert obs.ok and obs.text.splitlines()[0] == f"{1:>6}\tdef add(a, b):"
    assert obs.info.kind == SegmentKind.FILE_VIEW and obs.info.language == "python"
    part = tools["view"].run({"path": "pkg/calc.py", "start": 5, "end": "6"}, ctx)
    assert part.text == f"{5:>6}\tdef sub(a, b):\n{6:>6}\t    return a - b"


def test_view_errors_and_listing(ctx, tools) -> None:
    assert not tools["view"].run({"path": "nope.py"}, ctx).ok
    assert not tools["view"].run({"path": "pkg/calc.py", "start": 50}, ctx).ok
    assert not tools["view"].run({}, ctx).ok
    assert not tools["view"].run({"path": "x", "bogus": 1}, ctx).ok
    listing = tools["view"].run({"path": "."}, ctx)
    assert "pkg/" in listing.text and ".git" not in listing.text


def test_view_long_file_is_cut_with_a_hint(ctx, tools) -> None:
    (ctx.workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(5000)))
    obs = tools["view"].run({"path": "big.txt"}, ctx)
    assert len(obs.text) < 2300 and "not shown" in obs.text and "start=" in obs.text


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "pkg/../../x", "link/secret.txt", "filelink"])
def test_paths_outside_the_workspace_are_refused(ctx, tools, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "out"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, ctx.workspace / "link")
    os.symlink(outside / "secret.txt", ctx.workspace / "filelink")
    for name, args in [("view", {"path": path}), ("create", {"path": path, "content": "x"}),
                       ("edit", {"path": path, "search": "secret", "replace": "pwned"})]:
        obs = tools[name].run(args, ctx)
        assert not obs.ok and "outside the workspace" in obs.text, (name, obs.text)
    assert (outside / "secret.txt").read_text() == "secret"


def test_absolute_path_inside_is_fine_and_git_is_off_limits(ctx, tools) -> None:
    assert tools["view"].run({"path": str(ctx.workspace / "README.md")}, ctx).ok
    obs = tools["create"].run({"path": ".git/config", "content": "x"}, ctx)
    assert not obs.ok and ".git" in obs.text


def test_create_says_created_or_overwrote(ctx, tools) -> None:
    obs = tools["create"].run({"path": "new/dir/mod.py", "content": "x = 1\n"}, ctx)
    assert obs.ok and obs.text.startswith("created new/dir/mod.py")
    assert (ctx.workspace / "new/dir/mod.py").read_text() == "x = 1\n"
    again = tools["create"].run({"path": "new/dir/mod.py", "content": "x = 2\n"}, ctx)
    assert again.ok and again.text.startswith("overwrote")


def test_edit_replaces_exactly_one(ctx, tools) -> None:
    obs = tools["edit"].run({"path": "pkg/calc.py", "search": "def add(a, b):\n    return a - b",
                             "replace": "def add(a, b):\n    return a + b"}, ctx)
    assert obs.ok, obs.text
    assert "return a + b" in (ctx.workspace / "pkg/calc.py").read_text()
    assert f"{2:>6}\t    return a + b" in obs.text


def test_edit_errors_guide_the_model(ctx, tools) -> None:
    several = tools["edit"].run({"path": "pkg/calc.py", "search": "return a - b", "replace": "x"}, ctx)
    assert not several.ok and "2 times" in several.text and "lines 2, 6" in several.text
    none = tools["edit"].run({"path": "pkg/calc.py", "search": "return a * b", "replace": "x"}, ctx)
    assert not none.ok and "not found" in none.text and "closest line is 2" in none.text
    indent = tools["edit"].run({"path": "pkg/calc.py", "search": "def sub(a, b):\nreturn a - b", "replace": "x"}, ctx)
    assert not indent.ok and "line 5 if indentation is ignored" in indent.text
    missing = tools["edit"].run({"path": "nope.py", "search": "a", "replace": "b"}, ctx)
    assert not missing.ok and "no such file" in missing.text
    assert (ctx.workspace / "pkg/calc.py").read_text().count("return a - b") == 2


def test_search_finds_lines_with_glob_and_caps(ctx, tools) -> None:
    obs = tools["search"].run({"pattern": r"return a \- b"}, ctx)
    assert obs.ok and obs.text.splitlines() == ["pkg/calc.py:2: return a - b", "pkg/calc.py:6: return a - b"]
    assert "no matches" in tools["search"].run({"pattern": "demo", "path": "*.py"}, ctx).text
    assert "README.md:1: # demo" in tools["search"].run({"pattern": "demo", "path": "*.md"}, ctx).text
    assert tools["search"].run({"pattern": "def (add"}, ctx).ok  # bad regex -> literal
    (ctx.workspace / "many.txt").write_text("hit\n" * 500)
    many = tools["search"].run({"pattern": "hit"}, ctx)
    assert "400 more matches" in many.text and many.data["matches"] == 500


def test_bash_runs_in_the_sandbox_and_cuts_output(ctx, tools) -> None:
    obs = tools["bash"].run({"command": "echo hi; exit 2"}, ctx)
    assert not obs.ok and "hi" in obs.text and "[exit code 2]" in obs.text
    assert obs.info.kind == SegmentKind.TOOL_OUTPUT and obs.data["exit_code"] == 2
    big = tools["bash"].run({"command": "seq 1 100000"}, ctx)
    assert big.ok and len(big.text) < 2300 and "lines" in big.text and "cut" in big.text
    assert big.text.splitlines()[0] == "1" and "100000" in big.text
    slow = tools["bash"].run({"command": "sleep 10", "timeout": 1}, ctx)
    assert not slow.ok and "timed out" in slow.text
    assert tools["bash"].run({"command": "python3 -m pytest --version"}, ctx).info.kind == SegmentKind.TEST_LOG


def test_run_tests_pytest_pass_and_fail(ctx, tools) -> None:
    (ctx.workspace / "tests").mkdir()
    (ctx.workspace / "tests" / "test_calc.py").write_text(
        "from pkg.calc import add, sub\n\ndef test_add():\n    assert add(2, 3) == 5\n\n"
        "def test_sub():\n    assert sub(3, 2) == 1\n")
    (ctx.workspace / "pkg" / "__init__.py").write_text("")
    (ctx.workspace / "conftest.py").write_text("")
    red = tools["run_tests"].run({}, ctx)
    assert red.info.kind == SegmentKind.TEST_LOG
    assert red.data["passed"] is False and red.data["counts"] == {"failed": 1, "passed": 1}, red.text
    assert "TESTS FAILED" in red.text
    tools["edit"].run({"path": "pkg/calc.py", "search": "def add(a, b):\n    return a - b",
                       "replace": "def add(a, b):\n    return a + b"}, ctx)
    green = tools["run_tests"].run({"args": "tests/test_calc.py"}, ctx)
    assert green.data["passed"] is True and green.data["counts"] == {"passed": 2}
    ctx.test_command = "echo '3 passed, 1 failed in 0.1s'; exit 1"
    custom = tools["run_tests"].run({}, ctx)
    assert custom.data["counts"] == {"passed": 3, "failed": 1} and not custom.data["passed"]


def test_runner_detection(tmp_path: Path) -> None:
    assert detect(tmp_path) is None
    (tmp_path / "Makefile").write_text("test:\n\ttrue\n")
    assert detect(tmp_path) == ("make", "make test")
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    assert detect(tmp_path)[0] == "cargo"
    (tmp_path / "go.mod").write_text("module x\n")
    assert detect(tmp_path)[0] == "go"
    (tmp_path / "package.json").write_text('{"scripts": {"test": "node --test"}}')
    assert detect(tmp_path)[0] == "npm"
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    assert detect(tmp_path)[0] == "pytest"


def test_count_parsing() -> None:
    assert parse_counts("....\n=== 2 failed, 10 passed, 1 skipped in 0.31s ===") == {"failed": 2, "passed": 10, "skipped": 1}
    cargo = "test result: ok. 3 passed; 0 failed; 1 ignored\ntest result: ok. 2 passed; 1 failed; 0 ignored"
    assert parse_counts(cargo) == {"passed": 5, "failed": 1, "skipped": 1}
    assert parse_counts("Tests:       1 failed, 3 passed, 4 total") == {"failed": 1, "passed": 3}
    assert parse_counts("# pass 4\n# fail 0\n") == {"passed": 4, "failed": 0}
    assert parse_counts("ok  \tex/a\t0.1s\nFAIL\tex/b\t0.2s\n") == {"passed": 1, "failed": 1}


def test_diff_includes_new_files_and_finish(ctx, tools) -> None:
    assert tools["diff"].run({}, ctx).text == "no changes yet"
    tools["create"].run({"path": "added.py", "content": "print('new')\n"}, ctx)
    tools["edit"].run({"path": "README.md", "search": "# demo", "replace": "# demo app"}, ctx)
    obs = tools["diff"].run({}, ctx)
    assert obs.ok and "+print('new')" in obs.text and "+# demo app" in obs.text and obs.data["files_changed"] == 2
    done = tools["finish"].run({"summary": "fixed add"}, ctx)
    assert done.done and done.ok and "fixed add" in done.text


def test_cut_middle_keeps_head_and_tail() -> None:
    text = "".join(f"{i}\n" for i in range(1000))
    cut = cut_middle(text, 200)
    assert cut.startswith("0\n1\n") and cut.endswith("999\n") and "lines" in cut and len(cut) < 300
    assert cut_middle("x" * 1000, 100).count("chars cut") == 1
    assert cut_middle("short", 100) == "short"
