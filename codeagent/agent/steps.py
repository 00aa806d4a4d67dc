"""The solve phases as the model meets them: reproduce, localize (and, with no failing test, write one), an optional
plan, view requests, repair with bounded debug rounds.

``Phases`` is mixed into :class:`codeagent.agent.loop.Agent`: the phases decide what to say and when a subtask opens or
commits; the agent's turn machinery (``_candidates``, ``_ask``, ``_event``, ``_record``) queries the model and runs
the tests. The model-free parts of each phase are in :mod:`codeagent.agent.phases`.
"""

from __future__ import annotations

from codeagent.agent import phases
from codeagent.agent.candidates import Candidate
from codeagent.agent.events import Resolved, Unresolved
from codeagent.agent.prompts import render
from codeagent.agent.testreport import failure_text
from codeagent.kvcache.tags import SegmentKind, SpanInfo


class Phases:
    """The phase steps of :class:`codeagent.agent.loop.Agent` (a mixin: the state they use lives on the agent)."""

    def _reproduce(self) -> None:
        self.ui.phase("reproduce", 0, 0, "running the tests before any edit")
        rec = self._record("reproduce")
        self.before = phases.run_suite(self.ctx)
        if self.before is None:
            raise Unresolved("no test set-up found: nothing can show the issue is resolved")
        rec.observation = {"command": self.before.command, "outcomes": self.before.outcomes}
        self._save_step(rec)
        self.ui.note(f"before: {self.before.summary()}")
        self.targets = set(self.before.failing)
        failing = phases.failing_summary(self.before)
        text = render("failing", failing=failing, summary=self.before.summary(),
                      output=failure_text(self.before, self.cfg.max_failure_chars))
        self.transcript.say("user", text, SpanInfo(kind=SegmentKind.ERROR if failing else SegmentKind.TEST_LOG,
                                                   subtask="reproduce"))
        if failing:
            self._event("debug_open", "reproduce")  # the failing output stays pinned while the fix is open

    def _localize(self) -> phases.Localization:
        self.ui.phase("localize", 0, 0, "ranking definitions by the issue and the traceback")
        loc = phases.localize(self.index, self.traj.issue, self.before if self.targets else None,
                              self.cfg.max_shown_definitions)
        self.ctx.extra["shown"] = [d.ref for d in loc.shown if not phases.touches_tests(d.path)]
        self.loc = loc
        rec = self._record("localize")
        rec.observation = {"shown": [d.ref for d in loc.shown], "top": [(round(s, 2), x.ref) for s, x in
                                                                          loc.ranked[:8]]}
        self._save_step(rec)
        self.ui.note("localized: " + ", ".join(d.ref for d in loc.shown))
        text = render("context", repo_map=loc.repo_map, definitions=loc.shown)
        self.transcript.say("user", text, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask="localize", language=loc.language,
                                                   protect=phases.edit_targets(text, loc.shown)))
        if not self.targets:
            self._reproduction(loc)
        return loc

    def _reproduction(self, loc: phases.Localization) -> None:
        """No test fails yet: the model writes tests that do (k tries, up to ``agent.reproductions`` distinct ones
        kept, each in its own file); their failing tests become the targets, one group per file."""
        path = phases.repro_path(self.ctx.workspace)
        if not path.endswith(".py") or (self.before and "pytest" not in self.before.command):
            raise Unresolved("no failing test, and reproductions are written for pytest projects only")
        self.ui.phase("reproduce", 0, 0, f"writing a failing test in {path}")
        cands = self._candidates(render("reproduce"), "reproduce-test", "python", self.cfg.candidates,
                                 self._try_repro, enough=self.cfg.reproductions, least=256)
        good = [c for c in cands if c.accepted and not c.duplicate]
        if not good:
            raise Unresolved("no failing test, and no reproduction the model wrote failed by an assertion")
        self._back_to(good[0])
        paths = [path] + [phases.numbered(path, i) for i in range(2, len(good) + 1)]
        for other, cand in zip(paths[1:], good[1:]):
            self.files.write(other, cand.files[path])
        self.files.keep()  # the reproduction tests stay: repairs start from here
        self.before = phases.run_suite(self.ctx)
        groups = [{t for t in self.before.failing if t.split("::")[0] == p} for p in paths]
        self.groups = [g for g in groups if g]
        self.targets = set().union(*self.groups)
        if not self.targets:
            raise Unresolved("the reproduction tests no longer fail when the whole suite runs")
        self.transcript.say("user", render("reproduced", path=", ".join(paths),
                                           output=failure_text(self.before, 800)),
                            SpanInfo(kind=SegmentKind.ERROR, subtask="reproduce"))
        self._event("commit", "reproduce-test")

    def _plan(self) -> None:
        """The model's own plan (``agent.plan``): a few lines kept in the cache as a PLAN span."""
        self.ui.phase("plan", 0, 0, "the model writes a short plan")
        rec = self._ask(render("plan_fix"), "plan", SegmentKind.PLAN, self.cfg.plan_tokens)
        self._save_step(rec)

    def _look(self, subtask: str) -> None:
        """Up to ``agent.view_turns`` times the model may ask for a definition of the map that it was not shown."""
        for _ in range(self.cfg.view_turns):
            rec = self._ask(render("view"), subtask, SegmentKind.TOOL_CALL, 32)
            sym = phases.requested_definition(rec.reply, self.index, [d.ref for d in self.loc.shown])
            rec.observation = {"view": sym.ref if sym is not None else None}
            self._save_step(rec)
            if sym is None:
                return
            shown = phases.shown_definition(self.index, sym, 80)
            self.loc.shown.append(shown)
            self.ctx.extra["shown"] = [shown.ref] + list(self.ctx.extra.get("shown", []))
            self.ui.note(f"viewed {shown.ref}")
            text = render("context", repo_map="", definitions=[shown])
            self.transcript.say("user", text, SpanInfo(kind=SegmentKind.FILE_VIEW, subtask=subtask,
                                                       language=shown.language, protect=phases.edit_targets(text, [shown])))

    def _repair(self, loc: phases.Localization) -> None:
        # the localized code stays an open subtask while repairs run: committing it here let the budget fold the
        # very definitions the candidates rewrite (default at 50% of the peak lost geometry that way)
        if self.cfg.plan:
            self._plan()
        self.ui.phase("repair", 0, 0, f"{self.cfg.candidates} candidate(s) from one snapshot")
        cands = self._candidates(render("repair", spec=self.format.spec()), "attempt", loc.language,
                                 self.cfg.candidates, self._try_fix, branch=self.cfg.branches)
        for round_ in range(1, self.cfg.max_debug_rounds + 1):
            self._resolved(cands)
            best = max(cands, key=lambda c: c.score)
            if best.report is None:  # nothing ran: tell the model why its last reply did not apply
                best = next((c for c in reversed(cands) if c.error and c.message is not None), None)
                if best is None:
                    break
            why = best.verdict.describe() if best.report is not None else best.error
            output = failure_text(best.report, self.cfg.max_failure_chars) if best.report is not None else ""
            self._back_to(best)
            sub = f"attempt-{best.n}"
            look = self.cfg.view_turns > 0
            self.transcript.say("user", render("debug", verdict=why, output=output, again=not look),
                                SpanInfo(kind=SegmentKind.ERROR, subtask=sub))
            self._event("debug_open", sub)
            self._event("commit", sub)
            self.ui.phase("debug", round_, self.cfg.max_debug_rounds, why)
            if look:
                self._look(f"debug-{round_}")
            cands = self._candidates(render("again") if look else None, f"debug-{round_}", loc.language,
                                     self.cfg.debug_candidates, self._try_fix, branch=self.cfg.branches)
        self._resolved(cands)

    def _resolved(self, cands: list[Candidate]) -> None:
        """End the run as resolved when the last candidate was accepted (its files are in the workspace)."""
        if cands and cands[-1].accepted:
            self._event("commit", self.state.phase)
            raise Resolved(f"candidate {cands[-1].n} fixed {', '.join(cands[-1].verdict.fixed[:4])}; nothing that "
                           "passed fails")
