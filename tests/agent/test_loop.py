"""Control flow of the agent loop with the scripted engine: phases, tags, commits, limits, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codeagent.agent.listener import Listener
from codeagent.agent.runner import prepare, solve
from codeagent.agent.scripted import ScriptedEngine
from codeagent.agent.trajectory import load
from tests.agent.conftest import BAD_EDIT, DONE, FINISH, FIX, FIX_AFTER_BAD, PLAN, TESTS, VIEW, git


def run(repo: Path, replies: list, *sets: str, engine: ScriptedEngine | None = None, **kw):
    settings, cfg = prepare(None, ["sandbox.kind=local", "agent.summary_tokens=0", *sets], None)
    eng = engine or ScriptedEngine(replies, budget_tokens=settings.kv.budget_tokens)
    out = solve(eng, settings, cfg, repo=repo, issue="Division drops the fraction: 7 / 2 gives 3.0.", **kw)
    return out, eng


def calls(eng: ScriptedEngine, kind: str) -> list[tuple]:
    return [c for c in eng.calls if c[0] == kind]


def test_plan_edit_fail_debug_fix_pass_resolves(repo: Path) -> None:
    out, eng = run(repo, [PLAN, VIEW, DONE, BAD_EDIT, TESTS, FIX_AFTER_BAD, TESTS])
    r = out.result
    assert r.status == "resolved", r.reason
    assert r.tests_passed is True and r.files_changed == 1
    assert "return a / b" in Path(r.patch_path).read_text()
    # lifecycle events reach the KV manager in order: step-1 committed, debug opened and closed, step-2 committed
    ctl = [c for c in eng.calls if c[0] in ("commit", "debug")]
    assert ctl == [("commit", "step-1"), ("debug", "step-2"), ("debug", None), ("commit", "step-2")]
    # tags: plan re-tagged PLAN, actions TOOL_CALL, edit content CODE in python, observations by what they are
    retags = [(c[1], c[2], c[3]) for c in calls(eng, "retag")]
    assert retags[0] == ("plan", None, None)
    assert ("tool_call", "step-1", None) in retags and ("code", "step-2", "python") in retags
    obs_kinds = [(c[2], c[3]) for c in calls(eng, "message") if c[1] == "user" and c[2] in ("file_view", "test_log")]
    assert ("file_view", "step-1") in obs_kinds and ("test_log", "step-2") in obs_kinds
    assert calls(eng, "message")[0][2] == "system" and calls(eng, "message")[1][2] == "issue"
    # the user's repository is untouched
    assert "a // b" in (repo / "calc" / "ops.py").read_text() and not git(repo, "status", "--porcelain").strip()


def test_trajectory_schema_and_per_step_kv(repo: Path) -> None:
    out, _ = run(repo, [PLAN, VIEW, DONE, FIX, TESTS])
    data = json.loads(out.trajectory.read_text())
    assert data["format"] == "codeagent-trajectory/1"
    assert {"run_id", "issue", "plan", "state", "messages", "events", "steps", "result", "workspace"} <= set(data)
    traj = load(out.trajectory)
    assert [s.status for s in traj.plan] == ["done", "done"]
    assert [m.role for m in traj.messages[:2]] == ["system", "user"]
    assert [e.type for e in traj.events] == ["commit", "commit"]
    for step in traj.steps:
        assert step.kv["physical_slots"] <= step.kv["budget_slots"] and step.duration_s >= 0
        assert step.gen["tokens"] > 0
    assert traj.steps[1].action["tool"] == "view" and traj.steps[1].observation["kind"] == "file_view"
    assert not list(out.trajectory.parent.glob(".traj-*"))  # atomic save leaves no temp files


def test_three_format_errors_end_cleanly(repo: Path) -> None:
    out, eng = run(repo, [PLAN, "I think so.", "```frobnicate\n```\n", "```python\nx = 1\n```\n", FIX])
    r = out.result
    assert r.status == "failed" and "3 malformed replies" in r.reason
    errors = [s.format_error for s in load(out.trajectory).steps if s.format_error]
    assert len(errors) == 3 and "unknown tool 'frobnicate'" in errors[1]
    told = [c[4] for c in calls(eng, "message") if c[4].startswith("Format error")]
    assert len(told) == 2 and "unknown tool" in told[1]  # the model is told; the third ends the run


def test_format_error_counter_resets_after_a_good_reply(repo: Path) -> None:
    out, _ = run(repo, [PLAN, "no action", "no action", VIEW, "no action", "no action", DONE, FIX, TESTS])
    assert out.result.status == "resolved"


def test_debug_rounds_are_bounded(repo: Path) -> None:
    out, eng = run(repo, [PLAN, DONE, BAD_EDIT, TESTS, DONE, TESTS], "agent.max_debug_rounds=2")
    traj = load(out.trajectory)
    assert traj.plan[1].status == "given_up" and "after 2 debug rounds" in traj.plan[1].reason
    assert out.result.status == "stopped" and "1 of 2 steps done, 1 given up" in out.result.reason
    assert out.result.tests_passed is False and out.result.steps_given_up == 1
    assert not out.result.resumable()  # the plan ended: nothing left to resume
    assert [c for c in eng.calls if c[0] in ("commit", "debug")] == [
        ("commit", "step-1"), ("debug", "step-2"), ("debug", None), ("commit", "step-2")]


@pytest.mark.parametrize("sets, status, reason", [
    (["agent.max_steps=3"], "stopped", "step limit"),
    (["agent.max_gen_tokens=30"], "stopped", "generated-token limit"),
])
def test_limits_end_the_run(repo: Path, sets: list[str], status: str, reason: str) -> None:
    out, _ = run(repo, [PLAN, VIEW, VIEW, VIEW, VIEW, VIEW], *sets)
    assert out.result.status == status and reason in out.result.reason


def test_interrupted_generation_ends_and_saves(repo: Path) -> None:
    out, _ = run(repo, [PLAN, {"text": "Let me", "finish_reason": "interrupted"}])
    assert out.result.status == "interrupted"
    assert load(out.trajectory).steps[-1].gen["finish_reason"] == "interrupted"


def test_model_finish_ends_with_its_summary(repo: Path) -> None:
    out, _ = run(repo, [PLAN, FIX, FINISH])
    assert out.result.status == "resolved" and out.result.summary == "divide uses true division now"


class Kill(BaseException):
    """Stands for the process being killed right after a save."""


class KillAfter(Listener):
    def __init__(self, turns: int) -> None:
        self.turns = turns

    def kv(self, stats) -> None:  # called after each turn's save
        self.turns -= 1
        if self.turns == 0:
            raise Kill()


def test_resume_after_kill_continues_the_run(repo: Path, tmp_path: Path) -> None:
    replies = [PLAN, VIEW, DONE, FIX, TESTS]
    with pytest.raises(Kill):
        run(repo, replies[:3], listener=KillAfter(3), runs_dir=tmp_path / "runs")
    [traj_path] = list((tmp_path / "runs").glob("*/trajectory.json"))
    saved = load(traj_path)
    assert saved.result is None and saved.state.turns == 3 and saved.state.step_index == 1
    settings, cfg = prepare(None, ["sandbox.kind=local", "agent.summary_tokens=0"], None)
    eng = ScriptedEngine(replies[3:], budget_tokens=settings.kv.budget_tokens)
    out = solve(eng, settings, cfg, resume=traj_path)
    assert out.result.status == "resolved" and out.trajectory == traj_path
    # the fresh cache was re-prefilled with the transcript, step-1's commit replayed at its place
    replayed = [c for c in eng.calls if c[0] in ("message", "append", "commit")]
    first_commit = replayed.index(("commit", "step-1"))
    assert [c[1] for c in replayed[:2]] == ["system", "user"] and first_commit > 4
    assert eng.calls.count(("commit", "step-1")) == 1 and ("commit", "step-2") in eng.calls
    final = load(traj_path)
    assert final.state.turns == 5 and [s.n for s in final.steps] == [1, 2, 3, 4, 5]


def test_resume_of_finished_run_is_refused(repo: Path) -> None:
    from codeagent.errors import InputError

    out, _ = run(repo, [PLAN, FIX, FINISH])
    settings, cfg = prepare(None, ["sandbox.kind=local"], None)
    with pytest.raises(InputError, match="already ended"):
        solve(ScriptedEngine([]), settings, cfg, resume=out.trajectory)


def test_dirty_tree_is_left_exactly_as_it_was(repo: Path) -> None:
    (repo / "calc" / "ops.py").write_text((repo / "calc" / "ops.py").read_text() + "# local change\n")
    (repo / "scratch.txt").write_text("mine\n")
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts}
    status = git(repo, "status", "--porcelain")
    notes: list[str] = []

    class Notes(Listener):
        def note(self, text: str) -> None:
            notes.append(text)

    out, _ = run(repo, [PLAN, FIX, FINISH], listener=Notes())
    assert out.result.status == "resolved"
    assert any("uncommitted changes" in n for n in notes)
    after = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts
             and ".codeagent-runs" not in p.parts}
    assert after == before and git(repo, "status", "--porcelain") == status


def test_replies_are_primed_and_the_primer_is_tagged(repo: Path) -> None:
    out, eng = run(repo, [PLAN, VIEW, DONE, FIX, TESTS])
    assert out.result.status == "resolved"
    appended = [c[1:] for c in calls(eng, "append")]
    assert ("plan", None, "1. View") in appended and ("tool_call", "step-1", "```") in appended
    traj = load(out.trajectory)
    replies = [m.content for m in traj.messages if m.role == "assistant"]
    assert replies[0].startswith("1. View calc/ops.py") and replies[1] == VIEW


def test_unprimed_replies_may_think_before_the_action(repo: Path) -> None:
    out, _ = run(repo, [PLAN, "Let me look.\n" + VIEW, DONE, "Now fix.\n" + FIX, TESTS], "agent.prime_replies=false")
    assert out.result.status == "resolved"
    assert load(out.trajectory).steps[1].action["thought"] == "Let me look."


class ScoringEngine(ScriptedEngine):
    """Scores options: 'view' and then 'calc/ops.py' are the likeliest continuations of the primer fence."""

    @staticmethod
    def tok(text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": [ord(c) for c in text]}

    def score(self, ids: list[int]):
        self.calls.append(("score", "".join(map(chr, ids))))
        return [0.0 if "".join(map(chr, ids)) in ("view", "calc/ops.py") else -5.0], []


def test_tool_name_is_chosen_by_likelihood_after_the_primer(repo: Path) -> None:
    settings, _ = prepare(None, [], None)
    eng = ScoringEngine([PLAN, "```\n"], budget_tokens=settings.kv.budget_tokens)
    out, _ = run(repo, [], "agent.max_steps=2", engine=eng)
    traj = load(out.trajectory)
    assert traj.steps[1].action == {"tool": "view", "args": {"path": "calc/ops.py"}, "thought": ""}
    scored = {c[1] for c in calls(eng, "score")}
    assert scored >= {"view", "edit", "run_tests", "done", "calc/ops.py", "calc/tokens.py"}
    assert ("tool_call", "step-1", "view calc/ops.py\n") in [c[1:] for c in calls(eng, "append")]
    assert sum(1 for c in eng.calls if c[0] == "rollback") == len(calls(eng, "score"))


def test_repeated_action_is_nudged_then_the_step_is_given_up_and_committed(repo: Path) -> None:
    out, eng = run(repo, [PLAN, VIEW, VIEW, VIEW, FIX, TESTS])
    traj = load(out.trajectory)
    assert [(s.status, s.reason) for s in traj.plan] == [("given_up", "repeated view calc/ops.py after a nudge"),
                                                          ("done", "tests pass")]
    nudge = traj.steps[2]
    assert nudge.observation["data"] == {"nudge": True, "why": "repeated view calc/ops.py"}
    told = nudge.observation["nudge"]
    assert "already ran `view calc/ops.py`" in told and "```edit calc/ops.py" in told
    assert traj.steps[3].events == ["given_up step-1: repeated view calc/ops.py after a nudge", "commit step-1"]
    # the repeated views were not run again: one file view reached the cache, then the nudge
    views = [c for c in calls(eng, "message") if c[2] == "file_view" and c[3] == "step-1"]
    assert len(views) == 1
    assert [c for c in eng.calls if c[0] == "commit"] == [("commit", "step-1"), ("commit", "step-2")]
    r = out.result
    assert r.status == "resolved" and (r.steps_done, r.steps_given_up, r.steps_total) == (1, 1, 2)


def test_idle_step_is_nudged_then_given_up_and_the_run_is_not_resolved(repo: Path) -> None:
    search = "```search divide\n```\n"
    tokens = "```view calc/tokens.py\n```\n"
    out, eng = run(repo, [PLAN, VIEW, search, tokens, VIEW], "agent.max_idle_turns=2", "agent.max_steps=5")
    traj = load(out.trajectory)
    nudged = traj.steps[3].observation
    assert nudged["data"]["why"] == "3 turns without an edit" and nudged["kind"] == "file_view"  # the new view ran
    assert "3 turns in this step without an edit" in nudged["nudge"]
    assert traj.plan[0].status == "given_up" and traj.plan[0].reason == "4 turns without an edit after a nudge"
    assert ("commit", "step-1") in eng.calls
    assert out.result.status == "stopped" and "given up" in out.result.summary


def test_done_and_edits_are_never_stalled(repo: Path) -> None:
    out, _ = run(repo, [PLAN, VIEW, "```search divide\n```\n", DONE, FIX, TESTS], "agent.max_idle_turns=1")
    traj = load(out.trajectory)
    assert [s.status for s in traj.plan] == ["done", "done"] and out.result.status == "resolved"


def test_after_reading_the_named_file_edit_is_offered_with_the_file_and_search_opened(repo: Path) -> None:
    class EditAfterView(ScoringEngine):
        def score(self, ids: list[int]):
            lp, preds = super().score(ids)
            return ([-1.0] if "".join(map(chr, ids)) == "edit" else lp), preds

    settings, _ = prepare(None, [], None)
    eng = EditAfterView([PLAN, "```\n", "```\n"], budget_tokens=settings.kv.budget_tokens)
    out, _ = run(repo, [], "agent.max_steps=3", engine=eng)
    traj = load(out.trajectory)
    assert traj.steps[1].action["tool"] == "view"
    second = [c[1] for c in calls(eng, "score")][len(calls(eng, "score")) // 2:]
    assert set(second) >= {"edit", "done"} and not {"view", "search", "finish"} & set(second)
    assert ("tool_call", "step-1", "edit calc/ops.py\n<<<<<<< SEARCH\n") in [c[1:] for c in calls(eng, "append")]


def test_a_malformed_reply_after_a_nudge_gives_the_step_up(repo: Path) -> None:
    out, eng = run(repo, [PLAN, VIEW, VIEW, "```edit calc/ops.py\n```\n", FIX, TESTS])
    traj = load(out.trajectory)
    assert (traj.plan[0].status, traj.plan[0].reason) == ("given_up", "malformed reply after a nudge")
    assert [c for c in eng.calls if c[0] == "commit"] == [("commit", "step-1"), ("commit", "step-2")]
    assert out.result.status == "resolved" and traj.state.format_errors == 0
