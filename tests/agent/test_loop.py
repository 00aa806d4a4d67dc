"""Control flow of the solve loop with the scripted engine and real test runs: candidates from one snapshot, branch
points, honest outcomes, limits, resume, the trajectory (the phases themselves: ``test_steps.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeagent.agent.runner import prepare, solve
from codeagent.agent.scripted import ScriptedEngine
from codeagent.agent.trajectory import load
from codeagent.protocols import ModelEngine
from tests.agent.conftest import BREAKING_DEF, EXAMPLE, GOOD_DEF, WRONG_DEF, calls, git, make_repo, run

def test_scripted_engine_conforms_to_the_protocol() -> None:
    eng = ScriptedEngine([])
    assert isinstance(eng, ModelEngine)
    for name in ("snapshot", "restore", "mark", "rollback", "reset", "start_assistant", "end_assistant", "score_text"):
        assert callable(getattr(eng, name))


def test_greedy_miss_then_sampled_fix_from_one_snapshot_resolves(repo: Path) -> None:
    out, eng = run(repo, [WRONG_DEF, GOOD_DEF])
    r = out.result
    assert r.status == "resolved", r.reason
    assert r.fail_to_pass == ["tests/test_calc.py::test_division"] and not r.broken
    assert r.tests_before["tests/test_calc.py::test_division"] == "failed"
    assert set(r.tests_after.values()) == {"passed"} and r.tests_passed is True
    assert r.candidates == 2 and r.prefill_saved_tokens > 0
    [snap] = [c for c in eng.calls if c[0] == "snapshot"][:1]
    assert set(calls(eng, "restore")) == {("restore", snap[1])}  # the second candidate starts from the snapshot
    assert "return a / b" in (out.workspace.path / "calc/ops.py").read_text()
    gens = calls(eng, "generate")
    assert len(gens) == 2 and all(g[1] == "code" for g in gens)
    traj = load(out.trajectory)
    assert [m.kind for m in traj.messages[:4]] == ["system", "issue", "error", "file_view"]
    assert sum(m.role == "assistant" for m in traj.messages) == 1  # the transcript holds what the cache holds
    assert "calc/ops.py::divide" in traj.messages[3].content
    view = traj.messages[3]  # the definitions a repair may rewrite are protected in the cache, tests are not
    kept = [view.content[s:e] for s, e in view.protect]
    assert kept and any(k.startswith("def divide(") for k in kept) and not any("def test_" in k for k in kept)
    assert traj.messages[0].pinned is False  # the system prompt is pinned by kind and may give way to the budget
    assert [s.phase for s in traj.steps][:2] == ["reproduce", "localize"]
    events = [(e.type, e.subtask) for e in traj.events]
    assert events[0] == ("debug_open", "reproduce")
    assert events.index(("commit", "localize")) == len(events) - 1  # the shown code stays open while repairs run
    assert "+    return a / b" in Path(r.patch_path).read_text()


def test_all_candidates_fail_unresolved_with_best_patch_and_a_debug_round(repo: Path) -> None:
    out, eng = run(repo, [WRONG_DEF, BREAKING_DEF, WRONG_DEF, "fix", WRONG_DEF, "no code here"],
                   "agent.candidates=3", "agent.debug_candidates=2", "agent.max_shown_definitions=1")
    r = out.result
    assert r.status == "unresolved" and "best: now failing (passed before)" in r.reason
    assert r.candidates == 5
    assert r.tests_passed is False and r.broken == ["tests/test_calc.py::test_division_by_zero"]
    assert "+    return a / b if b else 0.0" in Path(r.patch_path).read_text()  # the best candidate (fixes one, breaks one) is kept
    debug = [m for m in eng.calls if m[0] == "message" and m[2] == "error" and m[3] == "attempt-2"]
    assert debug and "test_division_by_zero" in debug[0][4]
    assert ("debug", "attempt-2") in eng.calls and ("commit", "attempt-2") in eng.calls
    traj = load(out.trajectory)
    assert traj.steps[-1].observation["error"]  # prose instead of a definition is an error, not a crash
    assert any(s.observation and s.observation.get("duplicate_of") for s in traj.steps)  # same code is not re-run


def test_candidates_after_the_greedy_one_start_at_the_branch_points_of_the_shown_code(repo: Path) -> None:
    """The shown definitions are scored as the reply; where the model prefers another token (here `/` for `//`),
    a candidate is forced to take it there and finishes on its own. Names and comments are never branch points."""
    rest = "```python\n" + "def divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError(\"division by zero\")\n" \
        "    return a / b\n```\n"
    out, eng = run(repo, [WRONG_DEF, rest], "agent.candidates=3", "agent.max_debug_rounds=0",
                   "agent.max_shown_definitions=1", prefer={"//": "/", "divide": "div"})
    assert out.result.status == "resolved", out.result.reason
    assert out.result.candidates == 2
    scored = [c[1] for c in calls(eng, "score")]
    assert len(scored) == 1 and scored[0].startswith("def divide(") and scored[0].endswith("\n```")
    primers = [c[3] for c in eng.calls if c[0] == "append" and c[1] == "code"]
    assert primers[0] == "```python\n" and primers[-1].endswith("    return a /")  # not at the name
    steps = [s for s in load(out.trajectory).steps if s.gen]
    assert [s.gen["temperature"] for s in steps] == [0.0, 0.0]  # a branch finishes greedily
    assert "+    return a / b" in Path(out.result.patch_path).read_text()
    plain, eng2 = run(make_repo(repo.parent / "again"), [WRONG_DEF, rest], "agent.candidates=2",
                      "agent.max_debug_rounds=0", "agent.branches=false", prefer={"//": "/"})
    assert not calls(eng2, "score") and [s.gen["temperature"] for s in load(plain.trajectory).steps if s.gen] == \
        [0.0, 0.7]


def test_a_definition_the_greedy_reply_restated_unchanged_gets_the_first_branch_point(repo: Path) -> None:
    """Localization shows divide, then evaluate; the greedy reply restates evaluate unchanged, so the model thinks the
    bug is there: the next candidate branches in evaluate although divide's branch point comes first otherwise."""
    evaluate = (repo / "calc/evaluate.py").read_text().split("\n\n\n")[-1].rstrip() + "\n"
    assert evaluate.startswith("def evaluate(")
    same = "```python\n" + evaluate + "```\n"
    out, eng = run(repo, [same, "```\n"], "agent.candidates=2", "agent.max_debug_rounds=0",
                   "agent.max_shown_definitions=2", prefer={"//": "/", "ops": "stack"})
    assert out.result.status == "unresolved"
    primers = [c[3] for c in eng.calls if c[0] == "append" and c[1] == "code"]
    assert primers[-1].endswith("    values, stack")  # not divide's `return a /`


def test_editing_a_test_file_is_refused(repo: Path) -> None:
    cheat = "```python\n# file: tests/test_calc.py\ndef test_division():\n    assert True\n```\n"
    out, _ = run(repo, [cheat], "agent.candidates=1", "agent.max_debug_rounds=0")
    assert out.result.status == "unresolved"
    assert "assert evaluate" in (out.workspace.path / "tests/test_calc.py").read_text()
    traj = load(out.trajectory)
    assert "is a test file" in traj.steps[-1].observation["error"]


def test_repeated_or_unchanged_replies_raise_the_temperature_of_the_next_samples(repo: Path) -> None:
    """A sample that repeats an earlier reply is not tested again (in a later round either), and each wasted reply
    (a repeat, or the code restated unchanged) widens the next sample's temperature."""
    unchanged = ("```python\ndef divide(a, b):\n    if b == 0:\n        raise ZeroDivisionError(\"division by zero\")\n"
                 "    return a // b\n```\n")
    out, _ = run(repo, [WRONG_DEF, WRONG_DEF, unchanged, WRONG_DEF, WRONG_DEF, GOOD_DEF], "agent.candidates=4",
                 "agent.max_shown_definitions=1", "agent.view_turns=0", "agent.debug_candidates=2",
                 "agent.candidate_temperature=0.5", "agent.temperature_step=0.25")
    r = out.result
    assert r.status == "resolved", r.reason
    steps = [s for s in load(out.trajectory).steps if s.gen and s.phase != "view"]
    assert [s.gen["temperature"] for s in steps] == [0.0, 0.5, 0.75, 1.0, 0.0, 0.75]
    assert [bool(s.observation.get("duplicate_of")) for s in steps] == [False, True, False, True, True, False]
    assert "unchanged" in steps[2].observation["error"] and r.candidates == 6


@pytest.mark.parametrize("sets, reason", [
    (["agent.max_gen_tokens=1"], "generated-token limit"),
    (["agent.max_wall_s=0.001"], "time limit"),
])
def test_limits_end_the_run_unresolved(repo: Path, sets: list[str], reason: str) -> None:
    out, _ = run(repo, [WRONG_DEF, WRONG_DEF, WRONG_DEF, WRONG_DEF], *sets)
    assert out.result.status == "unresolved" and reason in out.result.reason


def test_interrupted_generation_ends_and_can_resume(repo: Path) -> None:
    out, _ = run(repo, [{"text": "```python\ndef div", "finish_reason": "interrupted"}])
    assert out.result.status == "interrupted" and out.result.resumable()
    settings, cfg = prepare(None, ["sandbox.kind=local"], None)
    again = solve(ScriptedEngine([GOOD_DEF]), settings, cfg, resume=out.trajectory)
    assert again.result.status == "resolved"


def test_resume_of_an_ended_run_is_refused(repo: Path) -> None:
    from codeagent.errors import InputError

    out, _ = run(repo, [GOOD_DEF])
    settings, cfg = prepare(None, ["sandbox.kind=local"], None)
    with pytest.raises(InputError, match="already ended"):
        solve(ScriptedEngine([]), settings, cfg, resume=out.trajectory)


def test_dirty_tree_is_left_exactly_as_it_was(repo: Path) -> None:
    (repo / "calc/ops.py").write_text((repo / "calc/ops.py").read_text() + "\n# local note\n")
    (repo / "scratch.txt").write_text("mine\n")
    before = git(repo, "status", "--porcelain")
    out, _ = run(repo, [GOOD_DEF])
    assert out.result.status == "resolved"
    assert git(repo, "status", "--porcelain") == before
    assert (repo / "calc/ops.py").read_text().endswith("# local note\n")


INTERVALS_ISSUE = "Touching intervals are not merged: `merge([(1, 3), (3, 5)])` should give `[(1, 5)]`."
INLINED = ("```python\ndef merge(intervals):\n    out = []\n    for current in sorted(intervals):\n"
           "        if out and current[0] <= out[-1][1]:\n            out[-1] = (out[-1][0], max(out[-1][1], current[1]))\n"
           "        else:\n            out.append(current)\n    return out\n```\n")
HELPER_FIX = "```python\ndef overlaps(a, b):\n    return a[0] <= b[1] and b[0] <= a[1]\n```\n"


def test_a_fix_that_works_around_a_shown_helper_is_held_while_the_others_are_tried(tmp_path: Path) -> None:
    """The first reply passes by no longer calling `overlaps` (which keeps its bug); the next fixes `overlaps` itself
    and wins. When no other candidate passes, the held one stands."""
    ex = EXAMPLE.parent / "intervals"
    out, _ = run(make_repo(tmp_path / "a", ex), [INLINED, HELPER_FIX], "agent.candidates=3", "agent.max_debug_rounds=0",
                 issue=INTERVALS_ISSUE)
    assert out.result.status == "resolved" and out.result.candidates == 2, out.result.reason
    patch = Path(out.result.patch_path).read_text()
    assert "+    return a[0] <= b[1] and b[0] <= a[1]" in patch and "current[0] <=" not in patch
    assert [s.observation.get("held") for s in load(out.trajectory).steps if s.gen] == ["no longer calls overlaps", None]
    held, _ = run(make_repo(tmp_path / "b", ex), [INLINED, WRONG_DEF, WRONG_DEF], "agent.candidates=3",
                  "agent.max_debug_rounds=0", issue=INTERVALS_ISSUE)
    assert held.result.status == "resolved" and held.result.candidates == 3, held.result.reason
    assert held.result.reason.startswith("candidate 1 fixed")
    assert "current[0] <= out[-1][1]" in Path(held.result.patch_path).read_text()


CART_CLASS = '''```python
@dataclass
class Cart:
    lines: List[Line] = field(default_factory=list)

    def total(self):
        """Sum of price times quantity over all lines."""
        return round(sum(line.price * line.quantity for line in self.lines), 2)
```
'''


def test_a_whole_class_with_a_broken_field_is_retried_changing_only_its_methods(tmp_path: Path) -> None:
    """The reply restates the class with an undefined ``List`` (every test errors) and the right ``total``: the
    same reply applied to the methods alone resolves, and the class keeps its field and its other methods."""
    repo = make_repo(tmp_path / "cart", EXAMPLE.parent / "cart")
    out, _ = run(repo, [CART_CLASS], "agent.candidates=1", "agent.max_debug_rounds=0",
                 issue=(EXAMPLE.parent / "cart" / "issue.md").read_text())
    assert out.result.status == "resolved", out.result.reason
    text = (out.workspace.path / "shop/cart.py").read_text()
    assert "line.price * line.quantity" in text and "lines: list = field(default_factory=list)" in text
    assert "List[Line]" not in text and "def count(self):" in text and "def add(self" in text
