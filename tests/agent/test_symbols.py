"""The tree-sitter symbol index: definitions, incremental refresh, ranking by issue and traceback, view by symbol."""

from __future__ import annotations

from pathlib import Path

from codeagent.agent.symbols import SymbolIndex, is_test_path, traceback_frames
from codeagent.sandbox import SandboxConfig, open_sandbox
from codeagent.tools import ToolContext, make_tools
from tests.agent.conftest import make_repo


def test_index_lists_definitions_with_signatures_and_refreshes_changed_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    index = SymbolIndex(repo)
    names = {s.ref for s in index.symbols}
    assert {"calc/ops.py::divide", "calc/evaluate.py::evaluate", "tests/test_calc.py::test_division"} <= names
    divide = index.find("calc/ops.py", "divide")
    assert divide.signature == "def divide(a, b):" and (divide.start_line, divide.end_line) == (16, 19)
    (repo / "calc/ops.py").write_text((repo / "calc/ops.py").read_text() + "\n\ndef power(a, b):\n    return a ** b\n")
    index.refresh()
    assert index.find("calc/ops.py", "power") is not None


def test_rank_prefers_traceback_frames_and_issue_identifiers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    index = SymbolIndex(repo)
    ranked = index.rank("Tokens: `tokenize` drops the decimal point", frames=[("calc/tokens.py", "tokenize")])
    assert ranked[0][1].ref == "calc/tokens.py::tokenize" and ranked[0][0] > ranked[1][0]
    assert all(not s.is_test for _, s in ranked)
    helper = index.rank("`evaluate` gives wrong results")  # what the named function calls gets a share
    score = {s.ref: sc for sc, s in helper}
    assert score["calc/evaluate.py::_apply"] > 0 and score["calc/ops.py::add"] == 0


def test_traceback_frames_python_pytest_and_node() -> None:
    text = ('File "/w/pkg/mod.py", line 3, in helper\npkg/core.py:12: in run\n'
            "    at parse (/w/src/parse.js:4:11)\n")
    frames = traceback_frames(text, Path("/w"))
    assert ("pkg/mod.py", "helper") in frames and ("pkg/core.py", "run") in frames and ("src/parse.js", "parse") in frames
    assert is_test_path("tests/test_a.py") and is_test_path("src/a.test.js") and not is_test_path("src/a.py")


def test_view_by_symbol(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "calc")
    box = open_sandbox(SandboxConfig(kind="local"), repo)
    try:
        ctx = ToolContext(workspace=repo, sandbox=box)
        view = make_tools(["view"])["view"]
        obs = view.run({"path": "calc/ops.py::divide"}, ctx)
        assert obs.ok and obs.text.splitlines()[0].endswith("def divide(a, b):") and "a // b" in obs.text
        assert "BINARY" not in obs.text
        bad = view.run({"path": "calc/ops.py::nope"}, ctx)
        assert not bad.ok and "no definition 'nope' in calc/ops.py (definitions: add, subtract" in bad.text
    finally:
        box.close()


def test_localize_shows_the_method_not_its_whole_class_too() -> None:
    from codeagent.agent import phases

    root = Path(__file__).resolve().parents[2] / "examples" / "cart"
    loc = phases.localize(SymbolIndex(root), (root / "issue.md").read_text(), None)
    assert loc.shown[0].ref == "shop/cart.py::Cart.total"
    assert "shop/cart.py::Cart" not in [d.ref for d in loc.shown]
    assert "def total(self):" in loc.shown[0].code and loc.language == "python"


def test_localize_shows_a_helper_the_named_function_calls_and_name_parts_count() -> None:
    from codeagent.agent import phases

    examples = Path(__file__).resolve().parents[2] / "examples"
    invoice = phases.localize(SymbolIndex(examples / "invoice"), (examples / "invoice" / "issue.md").read_text(), None)
    assert invoice.shown[0].ref == "billing/invoice.py::render_invoice"
    assert "billing/money.py::format_money" in [d.ref for d in invoice.shown]
    geometry = phases.localize(SymbolIndex(examples / "geometry"), (examples / "geometry" / "issue.md").read_text(), None)
    assert "shapes/geometry.py::circle_area" in [d.ref for d in geometry.shown]
