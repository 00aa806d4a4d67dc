"""The agent: reproduce -> localize -> k candidate repairs from one KV snapshot -> validate -> bounded debug.

Each candidate is one turn in mini-swe-agent's shape: query (generate after the snapshot), parse (the
reply format), execute (the ``replace`` tool, then the tests), observe (judge and record). Candidates
after the first start from ``Engine.restore(snapshot)``: the shared prompt is never prefilled again.
Every phase is a subtask the KV manager hears about (``commit``, ``set_debug``); the phase steps are in
:mod:`codeagent.agent.steps`. One exception handler ends the run; "resolved" means the tests that failed pass and
nothing that passed fails.
"""

from __future__ import annotations

import time
from pathlib import Path

from codeagent.agent import branches, phases, verify
from codeagent.agent.candidates import Candidate, Files, bypassed, try_fix, try_repro
from codeagent.agent.config import AgentConfig
from codeagent.agent.events import (ContextLimit, EngineFailure, FormatError, Interrupted, Terminate,
                                    TimeLimit, TokenLimit, Unresolved)
from codeagent.agent.formats import get_format
from codeagent.agent.listener import Listener
from codeagent.agent.prompts import render
from codeagent.agent.steps import Phases
from codeagent.agent.symbols import SymbolIndex
from codeagent.agent.testreport import TestReport
from codeagent.agent.trajectory import ResultRecord, StepRecord, Trajectory, save
from codeagent.agent.transcript import Transcript
from codeagent.errors import CodeagentError
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.tools import ToolContext, make_tools


def query(engine, transcript: Transcript, state, info: SpanInfo, max_tokens: int, *, stop: list[str] | None,
          temperature: float, top_p: float, seed: int | None, on_token, primer: str = ""):
    """One model reply (the "query" of a turn), shared by solve and the repl: open an assistant message
    tagged ``info``, append ``primer``, generate, close it, count it in ``state`` and record it in the
    transcript. Returns the generation and its message record."""
    engine.start_assistant(info)
    if primer:
        engine.append(primer, info)
        on_token(primer)
    gen = engine.generate(max_tokens, stop=stop, temperature=temperature, top_p=top_p, seed=seed,
                          on_token=on_token, info=info)
    engine.end_assistant(info)
    state.gen_tokens += len(gen.token_ids)
    state.turns += 1
    return gen, transcript.reply(gen, info, primer)


class Agent(Phases):
    """Runs one issue to resolved or unresolved, saving the trajectory after every turn."""

    def __init__(self, engine, ctx: ToolContext, cfg: AgentConfig, traj: Trajectory, traj_path: Path,
                 listener: Listener | None = None, workspace=None) -> None:
        self.engine, self.ctx, self.cfg, self.traj = engine, ctx, cfg, traj
        self.traj_path = Path(traj_path)
        self.ui = listener or Listener()
        self.workspace = workspace
        self.format = get_format(cfg.format)
        self.tools = make_tools(["replace", "create"])
        self.transcript = Transcript(engine, traj)
        self.state = traj.state
        self.index = SymbolIndex(ctx.workspace)
        ctx.extra["index"] = self.index
        self.before: TestReport | None = None
        self.targets: set[str] = set()
        self.groups: list[set[str]] = []  # the targets per reproduction file, when the model wrote them
        self.files = Files(ctx.workspace)
        self.best: Candidate | None = None
        self.seen: list[Candidate] = []  # every candidate of the run: a repeated reply is not tested again
        self.branched: set[str] = set()  # reply starts forced at branch points so far
        self.tried = 0
        self.prefill_saved = 0
        self.loc: phases.Localization | None = None
        self._t0 = time.monotonic()

    # ------------------------------------------------------------------ the run
    def run(self) -> ResultRecord:
        """All phases; every way a run can end is caught here, once."""
        self._t0 = time.monotonic() - self.state.elapsed_s
        try:
            self.transcript.say("system", render("solve_system"), SpanInfo(kind=SegmentKind.SYSTEM))
            self.transcript.say("user", render("issue", issue=self.traj.issue.strip()),
                                SpanInfo(kind=SegmentKind.ISSUE, subtask="reproduce"))
            self._reproduce()
            loc = self._localize()
            self._repair(loc)
            raise Unresolved(verify.why_unresolved(self.best, self.tried))
        except Terminate as end:
            return self._finish(end)
        except KeyboardInterrupt:
            return self._finish(Interrupted("interrupted by Ctrl-C"))
        except CodeagentError as exc:
            return self._finish(EngineFailure(f"engine: {exc}"))

    def resume(self) -> ResultRecord:
        """Start the phases again on a fresh cache and the run's base files (candidates are cheap to redo)."""
        self.ui.note("resuming: the phases start again from the base commit")
        from codeagent.tools.gitdiff import git

        git(self.ctx.workspace, "checkout", "--quiet", "--force", self.traj.workspace.base, "--", ".")
        git(self.ctx.workspace, "clean", "-fdq", "--exclude=.codeagent-runs")
        self.traj.messages, self.traj.events, self.traj.result = [], [], None
        self.engine.reset()
        return self.run()

    # ------------------------------------------------------------------ turns: free text, candidates from one snapshot
    def _ask(self, prompt: str, subtask: str, kind: SegmentKind, max_tokens: int) -> StepRecord:
        """A short greedy free-text turn (a plan, a view request); its reply stays in the cache and the trajectory."""
        self._check_limits()
        rec = self._record(subtask)
        self.transcript.say("user", prompt, SpanInfo(kind=SegmentKind.TEXT, subtask=subtask))
        info = SpanInfo(kind=kind, subtask=subtask)
        self.ui.generating(subtask)
        gen, _ = query(self.engine, self.transcript, self.state, info, max_tokens, stop=["\n\n"], temperature=0.0,
                       top_p=1.0, seed=self.cfg.seed, on_token=self.ui.token)
        rec.reply = gen.text
        rec.gen = {"tokens": len(gen.token_ids), "finish_reason": gen.finish_reason, "decode_s": round(gen.decode_s, 3)}
        if gen.finish_reason == "interrupted":
            self._save_step(rec)
            raise Interrupted("interrupted by Ctrl-C during generation")
        return rec

    def _candidates(self, request: str | None, subtask: str, language: str | None, k: int, evaluate,
                    branch: bool = False, enough: int = 1, least: int = 0) -> list[Candidate]:
        """Up to ``k`` replies to ``request`` from one snapshot: greedy first; with ``branch``, then replies forced to
        start at the branch points of the shown definitions (:mod:`codeagent.agent.branches`); then sampled ones.
        Each is evaluated; ``enough`` distinct replies the tests accept end the loop. A reply gets at least ``least``
        tokens (a reproduction test needs room for a few cases however short the code is)."""
        if request is not None:
            self.transcript.say("user", request, SpanInfo(kind=SegmentKind.TEXT, subtask=subtask))
        start = len(self.traj.messages)
        snap = self.engine.snapshot()
        out: list[Candidate] = []
        heads: list[str] = []
        for i in range(k):
            if i:
                if i == 1 and branch:
                    heads = self._branch_heads(snap, language, k - 1, out[0])
                self.engine.restore(snap)
                self.transcript.truncate(start)
                self.prefill_saved += snap.logical
            self.tried += 1
            cand = Candidate(n=self.tried, messages=start)
            head = heads[i - 1] if 0 < i <= len(heads) else None
            wasted = sum(c.wasted for c in out)  # replies that repeated one or copied the code: sample wider
            temperature = 0.0 if i == 0 or head else min(1.5, self.cfg.candidate_temperature +
                                                            self.cfg.temperature_step * wasted)
            self._turn(cand, subtask, language, temperature, evaluate, head, self._reply_budget(least))
            out.append(cand)
            self.seen.append(cand)
            done = [c for c in out if c.accepted and not c.duplicate]
            if len(done) >= enough and not all(c.bypasses for c in done):
                break
        held = [c for c in out if c.accepted and not c.duplicate and c.bypasses]
        if held and not (out[-1].accepted and not out[-1].bypasses):  # no later fix kept the helpers: the first stands
            self._back_to(held[0])
            out.remove(held[0])
            out.append(held[0])
        return out

    def _branch_heads(self, snap, language: str | None, k: int, greedy: Candidate) -> list[str]:
        """Starts of up to ``k`` replies at the branch points of the shown code (none used before in the run, none the
        ``greedy`` reply already took; first those of a definition it restated unchanged)."""
        shown = [d for d in (self.loc.shown if self.loc else []) if not phases.touches_tests(d.path)]
        found = branches.find(self.engine, snap, shown, self.format.primer(language), self.format.stop()[0], language)
        self.prefill_saved += snap.logical * len(shown)
        first = {d.ref for d in shown if d.name in greedy.replaced} if greedy.unchanged else set()
        heads = [b.head for b in branches.choose(found, k, self.branched, replies=[greedy.code], first=first)]
        self.branched.update(heads)
        self.ui.note(f"{len(heads)} branch point(s) of {sum(map(len, found))}")
        return heads

    def _turn(self, cand: Candidate, subtask: str, language: str | None, temperature: float, evaluate,
              head: str | None, max_tokens: int) -> bool:
        """Query -> parse -> execute -> observe, for one candidate; whether the tests accept it."""
        self._check_limits()
        rec = self._record(subtask)
        info = SpanInfo(kind=SegmentKind.CODE, subtask=subtask, language=language)
        primer = self.format.primer(language) + (head or "")
        self.ui.generating(f"candidate {cand.n}")
        seed = None if self.cfg.seed is None else self.cfg.seed + cand.n
        gen, cand.message = query(self.engine, self.transcript, self.state, info, max_tokens,
                                  stop=self.format.stop(), temperature=temperature, top_p=self.cfg.top_p, seed=seed,
                                  on_token=self.ui.token, primer=primer)
        cand.snapshot = self.engine.snapshot()
        rec.reply = primer + gen.text
        rec.gen = {"tokens": len(gen.token_ids), "finish_reason": gen.finish_reason, "decode_s": round(gen.decode_s, 3),
                   "temperature": temperature}
        if gen.finish_reason == "interrupted":
            self._save_step(rec)
            raise Interrupted("interrupted by Ctrl-C during generation")
        try:
            action = self.format.parse(primer + gen.text, frozenset(self.tools))
            cand.code = action.args.get("code", "")
            same = next((c for c in self.seen if c.code == cand.code and c.code), None)
            rec.action = {"tool": action.tool, "args": action.args}
            self.ui.action(f"candidate {cand.n}: {action.brief()}")
            if same is not None:
                cand.verdict, cand.report, cand.error, cand.files = same.verdict, same.report, same.error, same.files
                cand.duplicate, cand.unchanged, cand.replaced = True, same.unchanged, same.replaced
                rec.observation = {"duplicate_of": same.n}
            else:
                evaluate(cand, action)
        except FormatError as exc:
            cand.error = f"format: {exc}"
        rec.observation = {**(rec.observation or {}), "error": cand.error,
                           "verdict": cand.verdict.describe() if cand.verdict else None,
                           "tests": cand.report.summary() if cand.report else None,
                           **({"held": f"no longer calls {', '.join(cand.bypasses)}"} if cand.bypasses else {})}
        self.ui.note(f"candidate {cand.n}: {cand.error or (cand.verdict.describe() if cand.verdict else '-')}")
        self._save_step(rec)
        return cand.accepted

    def _try_fix(self, cand: Candidate, action) -> None:
        """Apply and test a repair. One the tests accept that no longer calls a shown definition (works around the
        helper instead of fixing it) is held while the other candidates of the request are tried."""
        try_fix(cand, action, self.ctx, self.files, self.tools["replace"], self.before, self.targets, self.groups)
        self.index.refresh()
        if cand.accepted and self.loc is not None:
            cand.bypasses = bypassed(cand, self.loc.shown)
            if cand.bypasses:
                self.ui.note(f"candidate {cand.n} passes but no longer calls {', '.join(cand.bypasses)}: "
                             "trying the others first")
        if cand.verdict is not None and not cand.error and (self.best is None or cand.score > self.best.score):
            self.best = cand

    def _try_repro(self, cand: Candidate, action) -> None:
        try_repro(cand, action, self.ctx, self.files, self.tools["create"], self.index)  # localize refreshed it

    def _back_to(self, cand: Candidate) -> None:
        """Cache, transcript and files as right after ``cand``'s reply."""
        self.engine.restore(cand.snapshot)
        self.prefill_saved += cand.snapshot.logical
        self.transcript.truncate(cand.messages)
        self.traj.messages.append(cand.message)
        self.files.put(cand)

    # ------------------------------------------------------------------ bookkeeping
    def _reply_budget(self, least: int) -> int:
        """Room for the longest shown definition rewritten with some growth (about 3 characters a token), at
        least ``least``, within the run's limits."""
        longest = max((len(d.code) for d in self.loc.shown), default=600) if self.loc else 600
        want = max(int(longest / 3 * 1.4) + 48, least)
        return max(64, min(self.cfg.max_reply_tokens, self.cfg.max_gen_tokens - self.state.gen_tokens, want))

    def _check_limits(self) -> None:
        if time.monotonic() - self._t0 >= self.cfg.max_wall_s:
            raise TimeLimit(f"time limit reached ({self.cfg.max_wall_s:.0f} s)")
        if self.state.gen_tokens >= self.cfg.max_gen_tokens:
            raise TokenLimit(f"generated-token limit reached ({self.cfg.max_gen_tokens} tokens)")
        if self.engine.logical + self.cfg.max_reply_tokens + 16 > self.engine.max_context:
            raise ContextLimit(f"model context nearly full ({self.engine.logical} of {self.engine.max_context})")

    def _event(self, type_: str, subtask: str) -> None:
        if type_ == "commit":
            self.engine.commit(subtask)
        else:
            self.engine.set_debug(subtask if type_ == "debug_open" else None)
        self.transcript.event(type_, subtask)

    def _record(self, phase: str) -> StepRecord:
        self.state.phase = phase
        return StepRecord(n=len(self.traj.steps) + 1, phase=phase, subtask=phase, started=time.time())

    def _save_step(self, rec: StepRecord) -> None:
        rec.duration_s = round(time.time() - rec.started, 3)
        stats = self.engine.stats()
        rec.kv = stats.as_dict()
        self.traj.steps.append(rec)
        self._save()
        self.ui.kv(stats)

    def _finish(self, end: Terminate) -> ResultRecord:
        self.state.phase = "verify"
        self.ui.phase("verify", 0, 0, str(end))
        out = verify.settle(end, self.ctx, self.files, self.best, self.before, self.targets, self.groups)
        if out.resolved:
            self._event("debug_close", "reproduce")
        if self.loc is not None and not isinstance(out.end, EngineFailure):
            self._event("commit", "localize")  # the repairs are over: the shown code may fold
        self.traj.patch = verify.final_patch(self.workspace, self.traj.patch, self.ui.note)
        patch_path = self.traj_path.parent / "patch.diff"
        patch_path.write_text(self.traj.patch)
        self.traj.result = verify.record(out, self.traj, self.engine.stats(), self.before, self.best, str(patch_path),
                                         candidates=self.tried, prefill_saved=self.prefill_saved)
        self._save()
        return self.traj.result

    def _save(self) -> None:
        self.state.elapsed_s = round(time.monotonic() - self._t0, 3)
        save(self.traj, self.traj_path)
