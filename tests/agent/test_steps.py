"""The solve phases with the scripted engine and real test runs: the debug round, view requests, the plan option,
reproductions when no test fails."""

from __future__ import annotations

from pathlib import Path

from codeagent.agent.trajectory import load
from tests.agent.conftest import GOOD_DEF, WRONG_DEF, calls, git, make_repo, run


def test_a_reply_that_did_not_apply_is_explained_in_the_debug_round(repo: Path) -> None:
    unchanged = ("```python\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError(\"division by zero\")\n"
                 "    return a // b\n```\n")
    out, eng = run(repo, [unchanged, GOOD_DEF], "agent.candidates=1", "agent.debug_candidates=1",
                   "agent.view_turns=0")
    assert out.result.status == "resolved" and out.result.candidates == 2
    debug = [c for c in eng.calls if c[0] == "message" and c[3] == "attempt-1"]
    assert debug and "divide is unchanged" in debug[0][4]


def test_the_model_may_view_a_definition_of_the_map_before_the_debug_round(repo: Path) -> None:
    """The bug is in a definition localization did not show: the model names it, sees it, rewrites it."""
    (repo / "calc/ops.py").write_text((repo / "calc/ops.py").read_text().replace("return a // b", "return _quotient(a, b)")
                                      + "\n\ndef _quotient(a, b):\n    return a // b\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "a helper")
    helper = "```python\ndef _quotient(a, b):\n    return a / b\n```\n"
    out, eng = run(repo, [WRONG_DEF, "view calc/ops.py::_quotient", helper], "agent.candidates=1",
                   "agent.debug_candidates=1", "agent.max_shown_definitions=1")
    assert out.result.status == "resolved", out.result.reason
    gens = calls(eng, "generate")
    assert [g[1:3] for g in gens] == [("code", "attempt"), ("tool_call", "debug-1"), ("code", "debug-1")]
    shown = [c for c in eng.calls if c[0] == "message" and c[2] == "file_view" and c[3] == "debug-1"]
    assert shown and "calc/ops.py::_quotient" in shown[0][4] and "return a // b" in shown[0][4]
    traj = load(out.trajectory)
    assert any(s.observation and s.observation.get("view") == "calc/ops.py::_quotient" for s in traj.steps)
    assert "+    return a / b" in Path(out.result.patch_path).read_text()


def test_a_view_of_nothing_known_goes_straight_to_the_debug_candidates(repo: Path) -> None:
    out, eng = run(repo, [WRONG_DEF, "fix", GOOD_DEF], "agent.candidates=1", "agent.debug_candidates=1")
    assert out.result.status == "resolved"
    assert not [c for c in eng.calls if c[0] == "message" and c[2] == "file_view" and c[3] == "debug-1"]
    traj = load(out.trajectory)
    assert any(s.observation == {"view": None} for s in traj.steps)


def test_plan_option_adds_a_plan_turn_before_the_repairs(repo: Path) -> None:
    plan = "divide floors with //; change it to true division."
    out, eng = run(repo, [plan, GOOD_DEF], "agent.plan=true")
    assert out.result.status == "resolved"
    gens = calls(eng, "generate")
    assert [g[1:3] for g in gens] == [("plan", "plan"), ("code", "attempt")] and gens[0][3] == plan
    default, eng2 = run(make_repo(repo.parent / "again"), [GOOD_DEF])
    assert [g[1] for g in calls(eng2, "generate")] == ["code"]  # off by default


def test_no_failing_test_the_agent_writes_a_reproduction_first(repo: Path) -> None:
    (repo / "tests/test_calc.py").write_text((repo / "tests/test_calc.py").read_text().replace(
        'def test_division():\n    assert evaluate("7 / 2") == 3.5\n', ""))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "drop the failing test")
    passing = "```python\nfrom calc import evaluate\n\ndef test_issue_reproduction():\n    assert evaluate('6 / 2') == 3\n```\n"
    failing = "```python\nfrom calc import evaluate\n\ndef test_issue_reproduction():\n    assert evaluate('7 / 2') == 3.5\n```\n"
    out, eng = run(repo, [passing, failing, GOOD_DEF], "agent.reproductions=1")
    r = out.result
    assert r.status == "resolved", r.reason
    assert r.fail_to_pass == ["tests/test_issue_reproduction.py::test_issue_reproduction"]
    patch = Path(r.patch_path).read_text()
    assert "tests/test_issue_reproduction.py" in patch and "+    return a / b" in patch


def test_reproductions_the_repair_disagrees_with_are_dropped(repo: Path) -> None:
    """A small model's first reproduction may expect a wrong result: the repairs are judged against every
    distinct reproduction that fails (each in its own file), one that passes resolves, the others leave the patch.
    A reproduction that fails in itself (a NameError in the test) is not a reproduction; one that only forgot to
    import a definition of the repository gets the import."""
    (repo / "tests/test_calc.py").write_text((repo / "tests/test_calc.py").read_text().replace(
        'def test_division():\n    assert evaluate("7 / 2") == 3.5\n', ""))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "drop the failing test")
    head = "```python\nfrom calc import evaluate\n\ndef test_issue_reproduction():\n"
    wrong = head + "    assert evaluate('7 / 2') == 3.4\n```\n"  # fails now and after any right fix
    broken = head + "    assert evaluat('7 / 2') == 3.5\n```\n"  # fails in the test itself
    right = "```python\ndef test_issue_reproduction():\n    assert evaluate('7 / 2') == 3.5\n```\n"  # no import
    out, _ = run(repo, [wrong, broken, right, right, GOOD_DEF], "agent.reproductions=3")
    r = out.result
    assert r.status == "resolved", r.reason
    assert r.fail_to_pass == ["tests/test_issue_reproduction_2.py::test_issue_reproduction"]
    traj = load(out.trajectory)
    errors = [s.observation.get("error") for s in traj.steps if s.phase == "reproduce-test"]
    assert errors[0] == "" and "the test itself raises (NameError" in errors[1] and errors[2] == ""
    assert "dropped the reproduction(s) it disagrees with: tests/test_issue_reproduction.py" in r.reason
    patch = Path(r.patch_path).read_text()
    assert "tests/test_issue_reproduction_2.py" in patch and "== 3.4" not in patch and "+    return a / b" in patch
    assert "+from calc" in patch and "import evaluate" in patch  # the import it forgot was added
    assert not (out.workspace.path / "tests/test_issue_reproduction.py").exists()


def test_nothing_fails_and_no_reproduction_fails_is_unresolved(repo: Path) -> None:
    git(repo, "rm", "-q", "tests/test_calc.py")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "no tests")
    (repo / "tests").mkdir(exist_ok=True)
    out, _ = run(repo, ["```python\ndef test_issue_reproduction():\n    assert True\n```\n"], "agent.candidates=1")
    assert out.result.status == "unresolved" and "no reproduction" in out.result.reason
    assert out.result.files_changed == 0
