"""The interactive session: one cache kept across turns, slash commands, Ctrl-C stops only the reply.

Each request is a turn: the model answers, or acts (one action per reply, up to
``max_actions`` in a row) until it replies without an action block. Each reply is made by the
agent's own :func:`codeagent.agent.loop.query` and shown as Markdown. A finished turn is committed
to the KV manager like a plan step; ``/undo`` rolls the cache, the transcript and the files back;
``/apply`` and ``/commit`` take the work out of the session, as solve's flags do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from codeagent.agent import actions
from codeagent.agent.actions import DONE
from codeagent.agent.config import AgentConfig, sandbox_config
from codeagent.agent.display import obs_line
from codeagent.agent.loop import query
from codeagent.agent.repl_input import LineReader, ReplCompleter, history_path
from codeagent.agent.events import FormatError
from codeagent.agent.prompts import render
from codeagent.agent.trajectory import Trajectory, WorkspaceRecord, load, save
from codeagent.agent.transcript import Transcript
from codeagent.agent.workspace import Workspace
from codeagent.errors import CodeagentError, InputError
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.tools import ToolContext, make_tools
from codeagent.tools.gitdiff import GitError, git

HELP = ("/plan [TEXT] plan a task · /diff changes so far · /apply them to your tree · /commit [MESSAGE] them on "
        "the session's branch · /kv cache statistics · /undo the last turn · /save [PATH] the session · "
        "/resume PATH a saved session · /quit.  End a line with \\ (or press Esc Enter) for another line.")
COMMANDS = ("/plan", "/diff", "/apply", "/commit", "/kv", "/undo", "/save", "/resume", "/help", "/quit")


@dataclass
class UndoPoint:
    """State before a turn: cache mark, transcript length, files (as a patch)."""

    mark: object
    messages: int
    patch: str


class Repl:
    """Reads requests and slash commands from ``stdin`` until /quit or end of input."""

    def __init__(self, engine, settings, cfg: AgentConfig, *, repo: Path, runs_dir: Path | None = None,
                 sandbox_kind: str | None = None, stdin: TextIO | None = None, console: Console | None = None,
                 max_actions: int = 6, keep: bool = False, reader: LineReader | None = None) -> None:
        from codeagent.agent.runner import check_repo, new_run_id, runs_root

        self.engine, self.settings, self.cfg = engine, settings, cfg
        self.con = console or Console(highlight=False)
        self.max_actions = max_actions
        self.keep = keep
        self.committed = False
        repo = check_repo(repo)
        self.run_id = "repl-" + new_run_id()
        root = runs_root(repo, runs_dir)
        self.ws = Workspace.create(repo, root, self.run_id)
        self.traj_path = root / self.run_id / f"{self.run_id}.traj.json"
        self.traj = Trajectory(run_id=self.run_id, issue="(interactive session)", repo=str(repo),
                               model=settings.model.model, settings=settings.model_dump(mode="json"),
                               workspace=WorkspaceRecord(repo=str(self.ws.repo), path=str(self.ws.path),
                                                         base=self.ws.base, branch=self.ws.branch,
                                                         is_worktree=self.ws.is_worktree, dirty=self.ws.dirty))
        self.sandbox_kind = sandbox_kind
        self.tools = make_tools(cfg.tools)
        self.names = frozenset(self.tools) | {DONE}
        self.transcript = Transcript(engine, self.traj)
        self.undo: list[UndoPoint] = []
        self.turns = 0
        self.reader = reader or LineReader(ReplCompleter(COMMANDS, repo), history_path(), stdin)

    # ------------------------------------------------------------------ session
    def loop(self) -> None:
        """Run the session; the sandbox is closed and the transcript saved at the end."""
        from codeagent.sandbox import open_sandbox

        if self.ws.dirty:
            self.con.print(f"warning: {self.ws.repo} has uncommitted changes; the session starts from HEAD")
        try:
            box = open_sandbox(sandbox_config(self.settings.extra, self.sandbox_kind), self.ws.path,
                               ro_paths=self.ws.git_dirs())
        except BaseException:
            self.ws.discard()  # a session that never started leaves no worktree or branch
            raise
        self.ctx = ToolContext(workspace=self.ws.path, sandbox=box, max_output_chars=self.cfg.max_output_chars,
                               command_timeout=self.cfg.command_timeout_s, test_command=self.cfg.test_command,
                               base_ref=self.ws.base)
        try:
            self.engine.reset()
            self.transcript.say("system", render("system"), SpanInfo(kind=SegmentKind.SYSTEM))
            self._banner(getattr(box, "isolation", "") or type(box).__name__)
            while True:
                line = self._read()
                if line is None:
                    break
                line = line.strip()
                if not line:
                    continue
                try:
                    if line.startswith("/"):
                        if not self.command(line):
                            break
                    else:
                        self.turn(line)
                except CodeagentError as exc:
                    self.con.print(f"error: {exc}")
        finally:
            box.close()
            self._save()
            self.con.print(f"session saved: {self.traj_path}", markup=False, soft_wrap=True)
            from codeagent.agent.runner import tidy

            tidied = tidy(self.ws, None, self.keep or self.committed)
            if tidied:
                self.con.print(tidied)

    def _banner(self, sandbox: str) -> None:
        st = self.engine.stats()
        kv = self.settings.kv
        self.con.print(f"[bold]codeagent repl[/] · model [cyan]{self.settings.model.model}[/] · kv policy "
                       f"[cyan]{kv.policy}[/], budget {st.budget_slots or kv.budget_tokens or 'none'} slots")
        self.con.print(f"sandbox: {sandbox}", markup=False)
        self.con.print(f"workspace: {self.ws.path}" + (f" (branch {self.ws.branch})" if self.ws.branch else ""),
                       markup=False, soft_wrap=True)
        self.con.print(HELP, style="dim", markup=False)

    def _read(self) -> str | None:
        while True:
            try:
                return self.reader.read()
            except KeyboardInterrupt:
                self.con.print("(Ctrl-C: type /quit to leave)")

    def _save(self, path: Path | None = None) -> Path:
        self.traj.patch = self.ws.diff()
        return save(self.traj, path or self.traj_path)

    # ------------------------------------------------------------------ turns
    def turn(self, request: str) -> None:
        """One request: answer or act until a reply has no action; then commit the turn."""
        self.turns += 1
        sub = f"turn-{self.turns}"
        self.undo.append(UndoPoint(self.engine.mark(), len(self.traj.messages), self.ws.diff()))
        try:
            self.transcript.say("user", render("repl", request=request), SpanInfo(kind=SegmentKind.ISSUE, subtask=sub))
            for _ in range(self.max_actions):
                gen = self._generate(self.cfg.max_new_tokens, actions.STOP, sub)
                if gen.finish_reason == "interrupted":
                    self.con.print("(stopped)")
                    break
                try:
                    action = actions.parse(gen.text, self.names, truncated=gen.finish_reason == "length")
                except FormatError:
                    break  # a plain answer ends the turn
                spans = [(action.start, action.end, SpanInfo(kind=SegmentKind.TOOL_CALL, subtask=sub))]
                if action.code is not None:
                    spans.append((action.code[0], action.code[1],
                                  SpanInfo(kind=SegmentKind.CODE, subtask=sub, language=action.code[2])))
                self.transcript.retag(gen, spans)
                if action.tool == DONE:
                    break
                self.con.print(f"→ {action.brief()}", markup=False)
                obs = self.tools[action.tool].run(action.args, self.ctx)
                self.transcript.say("user", obs.text, SpanInfo(kind=obs.info.kind, subtask=sub,
                                                               language=obs.info.language, pinned=obs.info.pinned))
                self.con.print(f"← {obs_line(obs)}", markup=False)
                if obs.done:
                    break
        except KeyboardInterrupt:
            self.con.print("(interrupted)")
        self.engine.commit(sub)
        self.transcript.event("commit", sub)
        self._save()

    def _generate(self, max_tokens: int, stop: list[str] | None, sub: str, kind: SegmentKind = SegmentKind.TEXT):
        """One reply through the agent's :func:`query`, streamed as Markdown (live in a terminal)."""
        info = SpanInfo(kind=kind, subtask=sub)
        shown = {"text": ""}
        live = Live(Markdown(""), console=self.con, refresh_per_second=8, transient=True) if self.con.is_terminal else None

        def on_token(delta: str) -> None:
            shown["text"] += delta
            if live is not None:
                live.update(Markdown(shown["text"]))

        if live is not None:
            live.start()
        try:
            gen, _ = query(self.engine, self.transcript, self.traj.state, info, max_tokens, stop=stop,
                           temperature=self.cfg.temperature, top_p=self.cfg.top_p, seed=self.cfg.seed, on_token=on_token)
        finally:
            if live is not None:
                live.stop()
        if gen.text.strip():
            self.con.print(Markdown(gen.text))
        return gen

    # ------------------------------------------------------------------ slash commands
    def command(self, line: str) -> bool:
        """Run a slash command; False means leave the session."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/quit", "/exit", "/q"):
            return False
        if name == "/help":
            self.con.print(HELP)
        elif name == "/diff":
            patch = self.ws.diff()
            self.con.print(patch.rstrip() if patch.strip() else "no changes yet", markup=False)
        elif name == "/kv":
            self._kv()
        elif name == "/apply":
            self.con.print(self.ws.apply_to_user_tree(), markup=False)
        elif name == "/commit":
            sha = self.ws.commit(arg or f"codeagent: repl session {self.run_id}")
            self.committed = True
            self.con.print(f"committed {sha[:10]} on {self.ws.branch or self.ws.path}", markup=False)
        elif name == "/plan":
            self._plan(arg)
        elif name == "/undo":
            self._undo()
        elif name == "/save":
            self.con.print(f"saved: {self._save(Path(arg) if arg else None)}")
        elif name == "/resume":
            self._resume(arg)
        else:
            self.con.print(f"unknown command {name}; {HELP}")
        return True

    def _kv(self) -> None:
        from codeagent.agent.display import kv_gauge

        st = self.engine.stats()
        self.con.print(kv_gauge(st))
        states = ", ".join(f"{k} {v}" for k, v in st.by_state.items() if v)
        kinds = ", ".join(f"{k} {v}" for k, v in st.by_kind.items() if v)
        self.con.print(f"kv: {st.physical_slots} slots, logical {st.logical_tokens}, budget {st.budget_slots}, "
                       f"{st.kv_bytes / 1e6:.1f} MB; states: {states or '-'}; kinds: {kinds or '-'}; "
                       f"commits {st.commits}, merges {st.merges}, drops {st.drops}", markup=False)

    def _plan(self, text: str) -> None:
        last = next((m.content for m in reversed(self.traj.messages) if m.kind == "issue"), "")
        task = text or last
        if not task:
            self.con.print("nothing to plan: /plan TEXT")
            return
        self.turns += 1
        sub = f"turn-{self.turns}"
        self.undo.append(UndoPoint(self.engine.mark(), len(self.traj.messages), self.ws.diff()))
        self.transcript.say("user", f"{task}\n\n" + render("plan", min_steps=2, max_steps=self.cfg.max_plan_steps),
                            SpanInfo(kind=SegmentKind.ISSUE, subtask=sub))
        gen = self._generate(self.cfg.plan_tokens, None, sub)
        self.transcript.retag(gen, [(0, len(gen.text), SpanInfo(kind=SegmentKind.PLAN, subtask=sub))])
        try:
            for i, step in enumerate(actions.parse_plan(gen.text, self.cfg.max_plan_steps), 1):
                self.con.print(f"  {i}. {step}", markup=False)
        except FormatError as exc:
            self.con.print(f"(no plan: {exc})")
        self._save()

    def _undo(self) -> None:
        if not self.undo:
            self.con.print("nothing to undo")
            return
        point = self.undo.pop()
        try:
            self.engine.rollback(point.mark)
            self.transcript.truncate(point.messages)
            how = "cache rolled back"
        except InputError:
            self.transcript.truncate(point.messages)
            self.transcript.replay()
            how = "cache rebuilt from the transcript (it was compressed since)"
        self._restore_files(point.patch)
        self.turns = max(self.turns - 1, 0)
        self._save()
        self.con.print(f"undone: {how}; files restored")

    def _restore_files(self, patch: str) -> None:
        try:
            git(self.ws.path, "reset", "--hard", "--quiet", self.ws.base)
            git(self.ws.path, "clean", "-fdq")
            if patch.strip():
                git(self.ws.path, "apply", "--whitespace=nowarn", "-", input=patch)
        except GitError as exc:
            raise InputError(f"cannot restore the files: {exc}") from None

    def _resume(self, arg: str) -> None:
        if not arg:
            self.con.print("usage: /resume PATH (a saved session or run trajectory)")
            return
        saved = load(Path(arg))
        self.traj.messages, self.traj.events = saved.messages, saved.events
        self.transcript.replay()
        if saved.patch.strip() and not self.ws.diff().strip():
            self._restore_files(saved.patch)
        self.undo.clear()
        self.turns = sum(1 for ev in saved.events if ev.type == "commit")
        self._save()
        self.con.print(f"resumed {len(saved.messages)} messages from {arg}; cache {self.engine.stats().physical_slots} slots")
