"""The verify phase: the final test run decides how a solve run ends, and the result record says so.

A run that claims "resolved" keeps that status only when the final run agrees (the targets pass, nothing
that passed fails); a reproduction the accepted repair disagrees with leaves the patch first. Any other
ending keeps the best candidate's patch (or none) in the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from codeagent.agent import phases
from codeagent.agent.candidates import Candidate, Files
from codeagent.agent.events import Interrupted, Resolved, Terminate, Unresolved
from codeagent.agent.testreport import TestReport
from codeagent.agent.trajectory import ResultRecord, Trajectory
from codeagent.errors import CodeagentError
from codeagent.tools import ToolContext


@dataclass
class Outcome:
    """How the run ends, with the final test run (None: not run) and its verdict."""

    end: Terminate
    after: TestReport | None = None
    verdict: phases.Verdict | None = None

    @property
    def resolved(self) -> bool:
        return isinstance(self.end, Resolved)


def why_unresolved(best: Candidate | None, tried: int) -> str:
    """The reason of a run whose candidates all failed."""
    if best is None or best.verdict is None:
        return f"no candidate applied ({tried} tried)"
    return f"no candidate resolved the issue ({tried} tried); best: {best.verdict.describe()}"


def settle(end: Terminate, ctx: ToolContext, files: Files, best: Candidate | None, before: TestReport | None,
           targets: set[str], groups: list[set[str]]) -> Outcome:
    """Put the files the ending calls for in place (the accepted repair stays; otherwise the best candidate's,
    or the base files) and run the tests once more to decide the outcome."""
    if not isinstance(end, (Resolved, Interrupted)):  # keep the best repair's patch, nothing else
        if best is not None:
            files.put(best)
        else:
            files.reset()
    if before is None or isinstance(end, Interrupted):
        return Outcome(end)
    after = phases.run_suite(ctx)
    verdict = phases.judge(before, after, targets, groups) if after is not None else None
    if isinstance(end, Resolved) and verdict is not None and verdict.disputed:
        gone = sorted({t.split("::")[0] for t in verdict.disputed})
        for path in gone:  # the reproductions the accepted repair disagrees with leave the patch
            files.write(path, None)
        groups = [g for g in groups if not g & set(verdict.disputed)]
        after = phases.run_suite(ctx)
        end = Resolved(f"{end}; dropped the reproduction(s) it disagrees with: {', '.join(gone)}")
        verdict = phases.judge(before, after, targets - set(verdict.disputed), groups)
    if isinstance(end, Resolved) and (verdict is None or not verdict.resolved):  # the final run must agree
        end = Unresolved(f"the final test run disagrees: {verdict.describe() if verdict else 'no run'}")
    return Outcome(end, after, verdict)


def final_patch(workspace, last: str, note: Callable[[str], None]) -> str:
    """The workspace's diff against the base commit (``last`` when git fails on a wrecked work tree)."""
    try:
        return workspace.diff() if workspace is not None else ""
    except CodeagentError as exc:
        note(f"cannot compute the final patch ({exc}); keeping the last one")
        return last


def record(out: Outcome, traj: Trajectory, stats, before: TestReport | None, best: Candidate | None,
           patch_path: str, *, candidates: int, prefill_saved: int) -> ResultRecord:
    """The run's result: status and reason, the test outcomes before and after, the patch, the KV figures."""
    if out.verdict is None:
        summary = str(out.end)
    else:
        changed = ", ".join(best.files) if best is not None and best.files else "nothing"
        summary = f"changed {changed}; {out.verdict.describe()}"
    peak = max([stats.peak_slots] + [s.kv.get("peak_slots", 0) for s in traj.steps])
    most = max([stats.physical_slots] + [s.kv.get("physical_slots", 0) for s in traj.steps])
    return ResultRecord(
        status=out.end.status, reason=str(out.end), summary=summary,
        tests_passed=None if out.after is None else out.after.ok, files_changed=traj.patch.count("diff --git "),
        patch_path=patch_path, kv=stats.as_dict(), max_physical_slots=most, budget_slots=stats.budget_slots,
        within_budget=stats.budget_slots is None or most <= stats.budget_slots, kv_peak=peak,
        tests_before=before.outcomes if before else {}, tests_after=out.after.outcomes if out.after else {},
        fail_to_pass=out.verdict.fixed if out.verdict else [], broken=out.verdict.broken if out.verdict else [],
        candidates=candidates, prefill_saved_tokens=prefill_saved, gen_tokens=traj.state.gen_tokens)
