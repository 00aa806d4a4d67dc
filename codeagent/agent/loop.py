"""The agent: plan -> (write -> run -> debug)* per step -> commit -> ... -> finish.

One class, one turn at a time. Every turn is one model reply holding one action; control flow
that ends or retries a turn is an exception (:mod:`codeagent.agent.events`). The KV manager hears
about everything the loop knows: each message carries its kind and subtask (the plan step), parsed
replies are re-tagged, a failing test run opens a debug round, a finished step is committed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from codeagent.agent import actions
from codeagent.agent.actions import DONE, Action
from codeagent.agent.config import AgentConfig
from codeagent.agent.events import (ContextLimit, EngineFailure, Finished, FormatError, FormatLimit, GaveUp,
                                    Interrupted, Nudge, StepLimit, StepStuck, Terminate, TimeLimit, TokenLimit)
from codeagent.errors import CodeagentError
from codeagent.agent.listener import Listener
from codeagent.agent.prompts import render
from codeagent.agent.trajectory import PlanStep, ResultRecord, StepRecord, Trajectory, save
from codeagent.agent.transcript import Transcript
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Generation, Observation
from codeagent.tools import ToolContext, make_tools
from codeagent.tools.bash import looks_like_test_run

EDIT_TOOLS = frozenset({"edit", "create"})
GIVEN_UP = frozenset({"given_up", "abandoned"})


def action_key(action: dict) -> str:
    """What makes two actions the same (tool and arguments; the thought before the block does not count)."""
    return json.dumps([action["tool"], action["args"]], sort_keys=True, default=str)


class Agent:
    """Runs one issue to an end state, saving the trajectory after every turn."""

    def __init__(self, engine, ctx: ToolContext, cfg: AgentConfig, traj: Trajectory, traj_path: Path,
                 listener: Listener | None = None, workspace=None) -> None:
        self.engine = engine
        self.ctx = ctx
        self.cfg = cfg
        self.traj = traj
        self.traj_path = Path(traj_path)
        self.ui = listener or Listener()
        self.workspace = workspace
        self.tools = make_tools(cfg.tools)
        self.tool_names = frozenset(self.tools) | {DONE}
        self.transcript = Transcript(engine, traj)
        self.state = traj.state
        self._t0 = time.monotonic()
        self._max_slots = max((s.kv.get("physical_slots", 0) for s in traj.steps), default=0)
        self._turn_events: list[str] = []

    # ------------------------------------------------------------------ entry points
    def run(self) -> ResultRecord:
        """Plan (unless resumed past it), then turns until something ends the run; returns the result."""
        self._t0 = time.monotonic() - self.state.elapsed_s
        try:
            if not self.traj.messages:
                self._start()
            while not self.traj.plan:
                self._plan_turn()
            self._announce()
            while True:
                self._turn()
        except Terminate as end:
            return self._finish(end)
        except KeyboardInterrupt:
            return self._finish(Interrupted("interrupted by Ctrl-C"))
        except CodeagentError as exc:
            return self._finish(EngineFailure(f"engine: {exc}"))

    def resume(self) -> ResultRecord:
        """Rebuild the cache from the saved transcript (a fresh prefill), then go on."""
        self.ui.note(f"resuming: re-prefilling {len(self.traj.messages)} messages")
        self.transcript.replay()
        self.traj.result = None
        return self.run()

    # ------------------------------------------------------------------ phases
    def _start(self) -> None:
        self.transcript.say("system", render("system"), SpanInfo(kind=SegmentKind.SYSTEM, pinned=True))
        files = ", ".join(self._files()[:30])
        self.transcript.say("user", render("issue", issue=self.traj.issue.strip(), files=files),
                            SpanInfo(kind=SegmentKind.ISSUE))
        self._save()

    def _files(self) -> list[str]:
        from codeagent.tools.gitdiff import GitError, git

        try:
            out = git(self.ctx.workspace, "ls-files", "--cached", "--others", "--exclude-standard")
        except GitError:
            return []
        return [f for f in out.splitlines() if f and not f.startswith(".")]

    def _plan_turn(self) -> None:
        self.ui.phase("plan", 0, 0, "")
        rec = self._begin_turn("plan", None)
        try:
            prompt = render("plan", min_steps=2, max_steps=self.cfg.max_plan_steps)
            self.transcript.say("user", prompt, SpanInfo(kind=SegmentKind.TEXT))
            prefix = self.cfg.plan_primer if self.cfg.prime_replies else ""
            gen, prefix = self._generate(self.cfg.plan_tokens, ["\n\n", "```"], SpanInfo(kind=SegmentKind.TEXT), rec,
                                         "plan", prefix, SpanInfo(kind=SegmentKind.PLAN))
            try:
                steps = actions.parse_plan(prefix + gen.text, self.cfg.max_plan_steps, prompt)
            except FormatError as err:
                self._format_error(err, rec)
                return
            self.state.format_errors = 0
            self.transcript.retag(gen, [(0, len(prefix + gen.text), SpanInfo(kind=SegmentKind.PLAN))], len(prefix))
            self.traj.plan = [PlanStep(id=f"step-{i + 1}", text=s) for i, s in enumerate(steps)]
            self.traj.plan[0].status = "active"
            self.state.phase, self.state.step_index = "write", 0
            self.ui.plan(steps)
        finally:
            self._end_turn(rec)

    def _announce(self) -> None:
        step = self._step()
        self.ui.phase(self.state.phase, self.state.step_index + 1, len(self.traj.plan), step.text)

    def _step(self) -> PlanStep:
        return self.traj.plan[min(self.state.step_index, len(self.traj.plan) - 1)]

    def _phase_prompt(self) -> str:
        step, st = self._step(), self.state
        common = dict(index=st.step_index + 1, total=len(self.traj.plan), step=step.text)
        if st.phase == "debug":
            return render("debug", round=st.debug_rounds, max_rounds=self.cfg.max_debug_rounds, **common)
        changed = ", ".join(self._changed_files()) or "files"
        return render("write", phase=st.phase, changed=changed, example=self._example_path(step.text), **common)

    def _example_path(self, hint: str = "") -> str:
        """A file named in ``hint`` or the issue (else the first Python file): the path prompts show."""
        named = self._named_file(hint)
        if named is not None:
            return named
        files = self._files()
        return next((f for f in files if f.endswith(".py")), files[0] if files else "README.md")

    def _named_file(self, hint: str = "") -> str | None:
        """The repository file ``hint`` (else the issue) names, source files before tests; None if none is named."""
        files = self._files()
        for text in (hint, self.traj.issue):
            named = [f for f in files if f in text]
            if named:
                return min(named, key=lambda f: ("test" in f, -len(f)))
        return None

    def _changed_files(self) -> list[str]:
        from codeagent.tools.gitdiff import GitError, git

        try:
            out = git(self.ctx.workspace, "status", "--porcelain", "--untracked-files=all")
        except GitError:
            return []
        return [line[3:] for line in out.splitlines() if line[3:] and "__pycache__" not in line][:5]

    # ------------------------------------------------------------------ one turn
    def _turn(self) -> None:
        step = self._step()
        rec = self._begin_turn(self.state.phase, step.id)
        try:
            self.transcript.say("user", self._phase_prompt(), SpanInfo(kind=SegmentKind.TEXT, subtask=step.id))
            info = SpanInfo(kind=SegmentKind.TEXT, subtask=step.id)
            prefix = actions.PRIMER if self.cfg.prime_replies else ""
            gen, prefix = self._generate(self.cfg.max_new_tokens, actions.STOP, info, rec, step.id, prefix,
                                         SpanInfo(kind=SegmentKind.TOOL_CALL, subtask=step.id),
                                         tools=self._offered(step) if self.cfg.choose_tool else None)
            try:
                action = actions.parse(prefix + gen.text, self.tool_names, truncated=gen.finish_reason == "length")
            except FormatError as err:
                self._format_error(err, rec)
                if _nudged(self._since_edit(step.id)):
                    self._complete_step("malformed reply after a nudge", status="given_up")
                return
            self.state.format_errors = 0
            self._retag(gen, action, step.id, len(prefix))
            rec.action = {"tool": action.tool, "args": action.args, "thought": action.thought}
            self.ui.action(action.brief())
            pending: Nudge | None = None
            try:
                self._check_stall(rec.action, step)
            except Nudge as nudge:
                if not nudge.run:
                    self._nudge(nudge, rec)
                    return
                pending = nudge
            except StepStuck as stuck:
                self._complete_step(str(stuck), status="given_up")
                return
            obs = self._execute(action)
            self._observe(action, obs, rec, step.id)
            index = self.state.step_index
            self._after(action, obs)
            if pending is not None and self.state.step_index == index:
                self._nudge(pending, rec)
        finally:
            self._end_turn(rec)

    def _begin_turn(self, phase: str, subtask: str | None) -> StepRecord:
        self._check_limits()
        self._turn_events = []
        return StepRecord(n=len(self.traj.steps) + 1, phase=phase, subtask=subtask, started=time.time())

    def _end_turn(self, rec: StepRecord) -> None:
        rec.duration_s = round(time.time() - rec.started, 3)
        rec.events = list(self._turn_events)
        stats = self.engine.stats()
        rec.kv = stats.as_dict()
        self._max_slots = max(self._max_slots, stats.physical_slots)
        self.traj.steps.append(rec)
        self._save()
        self.ui.kv(stats)

    def _check_limits(self) -> None:
        st, cfg = self.state, self.cfg
        if st.turns >= cfg.max_steps:
            raise StepLimit(f"step limit reached ({cfg.max_steps} turns)")
        if time.monotonic() - self._t0 >= cfg.max_wall_s:
            raise TimeLimit(f"time limit reached ({cfg.max_wall_s:.0f} s)")
        if st.gen_tokens >= cfg.max_gen_tokens:
            raise TokenLimit(f"generated-token limit reached ({cfg.max_gen_tokens} tokens)")
        if self.engine.logical + cfg.max_new_tokens + cfg.context_margin > self.engine.max_context:
            raise ContextLimit(f"model context nearly full ({self.engine.logical} of {self.engine.max_context} positions)")

    def _generate(self, max_tokens: int, stop: list[str] | None, info: SpanInfo, rec: StepRecord,
                  label: str, prefix: str = "", prefix_info: SpanInfo | None = None,
                  tools: list[str] | None = None) -> tuple[Generation, str]:
        """One reply after ``prefix`` (appended as its start); counts tokens, records it; returns it and the prefix.

        With ``tools``, the tool name after the primer is picked by the model's likelihood among them
        (when the engine can score), with its header (:meth:`_header`), and appended too.
        """
        self.state.turns += 1
        self.ui.generating(label)
        self.engine.start_assistant(info)
        if prefix:
            self.engine.append(prefix, prefix_info or info)
            self.ui.token(prefix)
            name = self._choose(tools) if tools else None
            if name is not None:
                more = self._header(name)
                self.engine.append(more, prefix_info or info)
                self.ui.token(more)
                prefix += more
        seed = None if self.cfg.seed is None else self.cfg.seed + self.state.turns
        budget = min(max_tokens, self.cfg.max_gen_tokens - self.state.gen_tokens)
        gen = self.engine.generate(max(budget, 1), stop=stop, temperature=self.cfg.temperature, top_p=self.cfg.top_p,
                                   seed=seed, on_token=self.ui.token, info=info)
        self.engine.end_assistant(info)
        self.state.gen_tokens += len(gen.token_ids)
        self.transcript.reply(gen, info, prefix)
        rec.reply = prefix + gen.text
        rec.gen = {"tokens": len(gen.token_ids), "finish_reason": gen.finish_reason, "decode_s": round(gen.decode_s, 3)}
        if gen.finish_reason == "interrupted":
            raise Interrupted("interrupted by Ctrl-C during generation")
        return gen, prefix

    def _header(self, tool: str) -> str:
        """The chosen tool's name and header: a newline, or a path chosen by likelihood (an edit also opens SEARCH)."""
        if tool not in actions.PATH_HEADER:
            return tool + ("\n" if tool in actions.NO_HEADER else " ")
        path = self._choose(self._paths(tool))
        if path is None:
            return tool + " "
        return f"{tool} {path}\n" + (actions.EDIT_PRIMER if tool == "edit" and self.cfg.focus_tools else "")

    def _paths(self, tool: str) -> list[str]:
        """Path options: for a view, files not viewed since the step's last edit; for an edit, the files viewed."""
        files = [f for f in self._files() if f != self._issue_rel()]
        if not self.cfg.focus_tools:
            return files[:40]
        step = self._step()
        since = self._since_edit(step.id)
        seen = self._viewed(since)
        if tool == "view":
            return [f for f in files if f not in seen][:40] or files[:40]
        wanted = list(dict.fromkeys([self._edit_target(step, since), *seen])) if _nudged(since) else seen
        return [f for f in wanted if f in files] or files[:40]

    def _offered(self, step: PlanStep) -> list[str]:
        """Tools the primed reply may pick from: all, or, once the step's file was read or after a nudge, the ones
        that move the step on (finish only once the workspace has changes)."""
        tools = sorted(self.tool_names)
        if not self.cfg.focus_tools:
            return tools
        if not self.traj.patch.strip():
            tools = [t for t in tools if t != "finish"]
        since = self._since_edit(step.id)
        target = self._named_file(step.text)
        if _nudged(since) or (target is not None and target in self._viewed(since)):
            keep = {"edit", DONE} | ({"run_tests"} if self.state.step_edits else set())
            tools = [t for t in tools if t in keep]
        return tools

    def _issue_rel(self) -> str | None:
        """The issue file's path inside the repository, when it lies there (the model has its text already)."""
        if not self.traj.issue_path:
            return None
        try:
            return str(Path(self.traj.issue_path).resolve().relative_to(Path(self.traj.repo).resolve()))
        except ValueError:
            return None

    def _choose(self, options: list[str]) -> str | None:
        """The option (a tool name, a path) the model finds likeliest here; None when the engine cannot score."""
        score, tok = getattr(self.engine, "score", None), getattr(self.engine, "tok", None)
        if score is None or tok is None or not options:
            return None
        best, best_lp = None, float("-inf")
        encoded = {name: tok(name, add_special_tokens=False)["input_ids"] for name in options}
        reserve = getattr(self.engine, "reserve", None)
        if reserve is not None:  # scoring must not lift the cache past its budget
            reserve(max(len(ids) for ids in encoded.values()))
        for name, ids in encoded.items():
            mark = self.engine.mark()
            try:
                lp = sum(score(ids)[0])
            finally:
                self.engine.rollback(mark)
            if lp > best_lp:
                best, best_lp = name, lp
        return best

    def _format_error(self, err: FormatError, rec: StepRecord) -> None:
        self.state.format_errors += 1
        rec.format_error = str(err)
        self.ui.note(f"format error ({self.state.format_errors}/{self.cfg.max_format_errors}): {err}")
        if self.state.format_errors >= self.cfg.max_format_errors:
            raise FormatLimit(f"{self.state.format_errors} malformed replies in a row (last: {err})")
        example = self._example_path(self._step().text if self.traj.plan else "")
        self.transcript.say("user", render("format_error", error=str(err), example_path=example),
                            SpanInfo(kind=SegmentKind.TEXT, subtask=rec.subtask))

    def _retag(self, gen: Generation, action: Action, subtask: str, offset: int) -> None:
        spans = [(action.start, action.end, SpanInfo(kind=SegmentKind.TOOL_CALL, subtask=subtask))]
        if action.code is not None:
            s, e, lang = action.code
            spans.append((s, e, SpanInfo(kind=SegmentKind.CODE, subtask=subtask, language=lang)))
        self.transcript.retag(gen, spans, offset)

    # ------------------------------------------------------------------ stalls
    def _since_edit(self, step_id: str) -> list[StepRecord]:
        """The step's earlier action turns since its last successful edit (or its start), oldest first."""
        out: list[StepRecord] = []
        for r in reversed(self.traj.steps):
            if r.subtask != step_id:
                break
            if r.action is None and r.format_error is None:
                continue
            if _edited(r):
                break
            out.append(r)
        return out[::-1]

    @staticmethod
    def _viewed(turns: list[StepRecord]) -> list[str]:
        """Paths those turns viewed successfully, in order, each once."""
        paths = [str(r.action["args"].get("path", "")) for r in turns if _succeeded(r, frozenset({"view"}))]
        return list(dict.fromkeys(p for p in paths if p))

    def _check_stall(self, action: dict, step: PlanStep) -> None:
        """Raise :class:`Nudge` when the action repeats the last one or the step has gone too long without an edit;
        :class:`StepStuck` when that happens again after the step's nudge. ``done`` and new edits always run."""
        since = self._since_edit(step.id)
        last = next((r.action for r in reversed(since) if r.action is not None), None)
        repeat = last is not None and action_key(last) == action_key(action)
        if action["tool"] == DONE or (action["tool"] in EDIT_TOOLS and not repeat):
            return
        idle = len(since) + 1
        if not repeat and idle <= self.cfg.max_idle_turns:
            return
        brief = Action(tool=action["tool"], args=action["args"], start=0, end=0).brief()
        why = f"repeated {brief}" if repeat else f"{idle} turns without an edit"
        if _nudged(since):
            raise StepStuck(f"{why} after a nudge")
        did = (f"You already ran `{brief}`; its result is above." if repeat
               else f"That is {idle} turns in this step without an edit.")
        raise Nudge(why, message=render("nudge", did=did, path=self._edit_target(step, since)), run=not repeat)

    def _edit_target(self, step: PlanStep, since: list[StepRecord]) -> str:
        """The file a nudge asks to edit: the one the step (or issue) names, else the last one viewed."""
        named = self._named_file(step.text)
        return named or (self._viewed(since) or [self._example_path(step.text)])[-1]

    def _nudge(self, nudge: Nudge, rec: StepRecord) -> None:
        """Tell the model its step stalls: in place of running a repeated action, or after a new one's result."""
        self.transcript.say("user", nudge.message, SpanInfo(kind=SegmentKind.TEXT, subtask=rec.subtask))
        if rec.observation is None:
            rec.observation = {"text": "", "ok": False, "kind": "text", "done": False, "data": {}}
        rec.observation["data"] = {**rec.observation["data"], "nudge": True, "why": str(nudge)}
        rec.observation["nudge"] = nudge.message
        self._turn_events.append(f"nudge {rec.subtask}: {nudge}")
        self.ui.note(f"nudge: {nudge}")

    # ------------------------------------------------------------------ acting
    def _execute(self, action: Action) -> Observation:
        if action.tool == DONE:
            if not self.state.step_edits:
                return Observation(text=f"Step {self.state.step_index + 1} marked done.",
                                   info=SpanInfo(kind=SegmentKind.TEXT), data={"step_done": True})
            return self.tools["run_tests"].run({}, self.ctx) if "run_tests" in self.tools else Observation(
                text="Step marked done.", info=SpanInfo(kind=SegmentKind.TEXT), data={"step_done": True})
        return self.tools[action.tool].run(action.args, self.ctx)

    def _observe(self, action: Action, obs: Observation, rec: StepRecord, subtask: str) -> None:
        info = SpanInfo(kind=obs.info.kind, subtask=subtask, language=obs.info.language, pinned=obs.info.pinned)
        self.transcript.say("user", obs.text, info)
        rec.observation = {"text": obs.text, "ok": obs.ok, "kind": obs.info.kind.name.lower(), "done": obs.done,
                           "data": obs.data}
        self.ui.observation(action.brief(), obs)

    def _after(self, action: Action, obs: Observation) -> None:
        """Phase transitions: edits lead to run, test results to commit or debug, finish ends the run."""
        if obs.done:
            raise Finished("the model called finish", summary=str(obs.data.get("summary", "")))
        if action.tool in EDIT_TOOLS and obs.ok:
            self.state.step_edits = True
            if self.workspace is not None:
                self.traj.patch = self.workspace.diff()
            if self.state.phase == "write":
                self.state.phase = "run"
            return
        if obs.data.get("step_done"):
            self._complete_step("declared done (no edits to check)")
            return
        passed = self._test_outcome(action, obs)
        if passed is True:
            self._complete_step("tests pass")
        elif passed is False:
            self._failing_tests()

    def _test_outcome(self, action: Action, obs: Observation) -> bool | None:
        """True/False for a test run (run_tests, a test command through bash, a done check), else None."""
        if "passed" in obs.data:
            return bool(obs.data["passed"])
        if action.tool == "bash" and looks_like_test_run(str(action.args.get("command", ""))):
            return obs.ok
        if action.tool == DONE:
            return True  # no test set-up to check with: the declaration stands
        return None

    def _failing_tests(self) -> None:
        st, step = self.state, self._step()
        st.debug_rounds += 1
        if st.phase != "debug":
            st.phase = "debug"
            self.engine.set_debug(step.id)
            self.transcript.event("debug_open", step.id)
            self._turn_events.append(f"debug_open {step.id}")
            self.ui.note(f"tests fail: debug round opened for {step.id}")
        if st.debug_rounds > self.cfg.max_debug_rounds:
            self._complete_step(f"tests still fail after {self.cfg.max_debug_rounds} debug rounds", status="given_up")
        else:
            self.ui.phase("debug", st.step_index + 1, len(self.traj.plan), step.text)

    def _complete_step(self, why: str, status: str = "done") -> None:
        st, step = self.state, self._step()
        if st.phase == "debug":
            self.engine.set_debug(None)
            self.transcript.event("debug_close", step.id)
            self._turn_events.append(f"debug_close {step.id}")
        moved = self.engine.commit(step.id)
        self.transcript.event("commit", step.id)
        if status == "given_up":
            self._turn_events.append(f"given_up {step.id}: {why}")
        self._turn_events.append(f"commit {step.id}")
        step.status, step.reason = status, why  # type: ignore[assignment]
        self.ui.step_end(st.step_index + 1, status, why)
        self.ui.note(f"{step.id} {status.replace('_', ' ')} ({why}); committed {moved} slots")
        st.step_index += 1
        st.phase, st.debug_rounds, st.step_edits, st.format_errors = "write", 0, False, 0
        if st.step_index >= len(self.traj.plan):
            self._plan_ended()
        self.traj.plan[st.step_index].status = "active"
        self._announce()

    def _plan_ended(self) -> None:
        """Every plan step has ended: :class:`Finished` when all are done, :class:`GaveUp` when some were given up."""
        done, given, total = self._step_counts()
        if not given:
            raise Finished("all plan steps are done")
        raise GaveUp(f"plan ended: {done} of {total} steps done, {given} given up")

    def _step_counts(self) -> tuple[int, int, int]:
        """(done, given up, total) plan steps."""
        plan = self.traj.plan
        return (sum(s.status == "done" for s in plan), sum(s.status in GIVEN_UP for s in plan), len(plan))

    # ------------------------------------------------------------------ the end
    def _finish(self, end: Terminate) -> ResultRecord:
        self.state.phase = "finish"
        self.ui.phase("finish", self.state.step_index + 1, len(self.traj.plan), str(end))
        tests = self._final_tests()
        try:
            patch = self.workspace.diff() if self.workspace is not None else ""
        except CodeagentError as exc:  # e.g. git failing on a wrecked work tree: the run still ends with a result
            patch = self.traj.patch
            self.ui.note(f"cannot compute the final patch ({exc}); keeping the last one")
        self.traj.patch = patch
        patch_path = self.traj_path.parent / "patch.diff"
        patch_path.write_text(patch)
        files = sum(1 for line in patch.splitlines() if line.startswith("diff --git "))
        summary = getattr(end, "summary", "") or self._summary(end, tests)
        status = end.status
        if isinstance(end, Finished) and tests is True and files:
            status = "resolved"
        stats = self.engine.stats()
        self._max_slots = max(self._max_slots, stats.physical_slots)
        budget = stats.budget_slots
        done, given, total = self._step_counts()
        self.traj.result = ResultRecord(
            status=status, reason=str(end), summary=summary, tests_passed=tests, files_changed=files,
            patch_path=str(patch_path), kv=stats.as_dict(), max_physical_slots=self._max_slots, budget_slots=budget,
            within_budget=budget is None or self._max_slots <= budget, steps_total=total, steps_done=done,
            steps_given_up=given,
        )
        self._save()
        return self.traj.result

    def _final_tests(self) -> bool | None:
        if not self.cfg.check_on_finish or "run_tests" not in self.tools:
            return None
        try:
            obs = self.tools["run_tests"].run({}, self.ctx)
        except KeyboardInterrupt:
            return None
        return bool(obs.data["passed"]) if "passed" in obs.data else None

    def _summary(self, end: Terminate, tests: bool | None) -> str:
        done, given, total = self._step_counts()
        counts = f"{done} of {total} plan steps done" + (f", {given} given up" if given else "")
        fallback = counts if isinstance(end, Finished) else f"{counts}; {end}"  # a plan's end already says as much
        room = self.engine.logical + self.cfg.summary_tokens + 64 < self.engine.max_context
        if self.cfg.summary_tokens == 0 or isinstance(end, (Interrupted, EngineFailure)) or not room:
            return fallback
        rec = StepRecord(n=len(self.traj.steps) + 1, phase="finish", subtask=None, started=time.time())
        self._turn_events = []
        try:
            tests_text = {True: "pass", False: "fail", None: ""}[tests]
            self.transcript.say("user", render("finish", reason=str(end), tests=tests_text),
                                SpanInfo(kind=SegmentKind.TEXT))
            prompt = render("finish", reason=str(end), tests=tests_text)
            gen, _ = self._generate(self.cfg.summary_tokens, ["\n\n"], SpanInfo(kind=SegmentKind.TEXT), rec, "summary")
            text = _prose(gen.text, prompt)
        except (Interrupted, KeyboardInterrupt):
            text = ""
        finally:
            self._end_turn(rec)
        return text or fallback

    def _save(self) -> None:
        self.state.elapsed_s = round(time.monotonic() - self._t0, 3)
        save(self.traj, self.traj_path)


def _nudged(turns: list[StepRecord]) -> bool:
    """Whether one of those turns was a nudge."""
    return any(r.observation is not None and r.observation.get("data", {}).get("nudge") for r in turns)


def _prose(text: str, prompt: str) -> str:
    """``text`` as a summary: one paragraph without fences; empty when it parrots ``prompt`` or degenerates into
    repetition (a small model's failure modes)."""
    text = " ".join(text.replace("```", " ").split())
    words = text.lower().split()
    if len(words) < 3 or len(set(words)) * 2 < len(words) or text[:24] in prompt:
        return ""
    return text


def _succeeded(rec: StepRecord, tools: frozenset[str]) -> bool:
    """Whether that turn ran one of ``tools`` and it worked."""
    return (rec.action is not None and rec.action["tool"] in tools and rec.observation is not None
            and bool(rec.observation["ok"]))


def _edited(rec: StepRecord) -> bool:
    """Whether that turn changed a file."""
    return _succeeded(rec, EDIT_TOOLS)
