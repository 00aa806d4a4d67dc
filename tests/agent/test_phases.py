"""Phases that need no model: which names a reproduction forgot to import, how reproductions are judged."""

from __future__ import annotations

from pathlib import Path

from codeagent.agent import phases
from codeagent.agent.symbols import SymbolIndex
from codeagent.agent.testreport import TestReport as Report


def test_missing_imports_are_the_unbound_names_the_repository_defines_once(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/dates.py").write_text("def is_leap(y):\n    return y % 4 == 0\n\n\ndef days(y, m):\n    return 28\n")
    (tmp_path / "pkg/other.py").write_text("def days(y, m):\n    return 30\n")  # two definitions: ambiguous
    code = ("import pytest\n\n\ndef test_x():\n    ys = [y for y in (1900,)]\n    try:\n        pass\n"
            "    except ValueError as exc:\n        raise exc\n    assert not is_leap(ys[0]) and days(1900, 2) == 28\n")
    assert phases.unbound_names(code) == {"is_leap", "days"}
    index = SymbolIndex(tmp_path)
    index.refresh()
    assert phases.missing_imports(code, index) == ["from pkg.dates import is_leap"]
    wrong_home = "from pkg import is_leap, days\n\n\ndef test_x():\n    assert not is_leap(1900) and days(1, 2)\n"
    fixed = phases.fix_imports(wrong_home, index)  # pkg/__init__.py is empty: is_leap lives in pkg/dates.py
    assert fixed.splitlines()[:2] == ["from pkg import days", "from pkg.dates import is_leap"]
    assert phases.fix_imports(code, index).splitlines()[0] == "from pkg.dates import is_leap"
    assert phases.fix_imports("def (", index) == "def ("
    assert phases.unbound_names("from pkg import *\nx = y\n") == set() and phases.unbound_names("def (") == set()
    assert phases.with_imports("from __future__ import annotations\nx = 1\n", ["import a"]).splitlines()[1] == "import a"
    assert phases.module_of("src/pkg/__init__.py") == "pkg" and phases.module_of("a-b/c.py") is None


def test_judging_by_groups_disputes_the_reproductions_a_repair_disagrees_with() -> None:
    before = Report("pytest", 1, {"t.py::ok": "passed", "r1.py::a": "failed", "r2.py::b": "failed",
                                       "r2.py::c": "failed"})
    after = Report("pytest", 1, {"t.py::ok": "passed", "r1.py::a": "passed", "r2.py::b": "passed",
                                      "r2.py::c": "failed"})
    groups = [{"r1.py::a"}, {"r2.py::b", "r2.py::c"}]
    v = phases.judge(before, after, {"r1.py::a", "r2.py::b", "r2.py::c"}, groups)
    assert v.resolved and v.disputed == ["r2.py::b", "r2.py::c"] and v.fixed == ["r1.py::a", "r2.py::b"]
    alone = phases.judge(before, after, {"r1.py::a", "r2.py::b", "r2.py::c"})
    assert not alone.resolved and alone.still_failing == ["r2.py::c"]
    none = Report("pytest", 1, {"t.py::ok": "failed", "r1.py::a": "failed", "r2.py::b": "failed", "r2.py::c": "failed"})
    v = phases.judge(before, none, {"r1.py::a", "r2.py::b", "r2.py::c"}, groups)
    assert not v.resolved and not v.disputed and v.broken == ["t.py::ok"]


def test_a_reproduction_that_raises_in_itself_is_rejected() -> None:
    path = "tests/test_issue_reproduction.py"
    report = Report("pytest", 1, {f"{path}::t1": "failed"}, details={
        f"{path}::t1": "NameError: name 'x' is not defined\ntests/test_issue_reproduction.py:4: in t1\n    x()"})
    failed, why = phases.repro_failures(report, path)
    assert failed == {f"{path}::t1"} and why.startswith("the test itself raises (NameError")
    report.details[f"{path}::t1"] = "TypeError: bad\ntests/test_issue_reproduction.py:4: in t1\n    f()\npkg/m.py:9: in f"
    assert phases.repro_failures(report, path)[1] == ""  # raised by the code under test: a reproduction
    report.details[f"{path}::t1"] = "AssertionError: 1 != 2\ntests/test_issue_reproduction.py:4: in t1"
    assert phases.repro_failures(report, path)[1] == ""


def test_edit_targets_leave_out_test_definitions_in_any_language() -> None:
    """A repair rewrites code, never tests: a Go or JS test definition is not an edit target even though its
    ref (``x_test.go::TestX``) does not itself end like a test file."""
    shown = [phases.Shown("store.go::Get", 1, 3, "go", "func Get(k string) int {\n\treturn 0\n}\n"),
             phases.Shown("store_test.go::TestGet", 1, 3, "go", "func TestGet(t *testing.T) {\n\tGet(\"a\")\n}\n"),
             phases.Shown("src/a.test.js::adds", 1, 2, "javascript", "test('adds', () => add(1, 2));\n")]
    text = "".join(d.code for d in shown)
    targets = phases.edit_targets(text, shown)
    assert targets == ((0, len(shown[0].code)),)
