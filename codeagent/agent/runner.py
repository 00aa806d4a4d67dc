"""Setting a run up: settings, engine, workspace, sandbox, tool context, trajectory; then the agent."""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from codeagent.agent.config import AgentConfig, agent_config, sandbox_config
from codeagent.agent.listener import Listener
from codeagent.agent.loop import Agent
from codeagent.agent.trajectory import ResultRecord, Trajectory, WorkspaceRecord, load
from codeagent.agent.workspace import Workspace
from codeagent.errors import InputError

ENGINE_ENV = "CODEAGENT_ENGINE"
"""Environment variable naming a test engine (``scripted:PATH``); the hidden ``--engine`` option wins."""


@dataclass
class RunOutcome:
    """What a finished run leaves: its result, trajectory file and workspace."""

    result: ResultRecord
    trajectory: Path
    workspace: Workspace
    run_id: str
    sandbox: str = ""  # what the sandbox isolated (a WEAK note when it protected nothing outside the workspace)


def prepare(config: Path | None, sets: list[str], model: str | None, budget: int | None = None,
            max_steps: int | None = None):
    """Settings and agent config; the KV budget defaults to the agent's ``kv_budget_tokens``."""
    from codeagent.runtime import settings_from

    settings = settings_from(config, sets, model)
    cfg = agent_config(settings.extra)
    if max_steps is not None:
        cfg = cfg.model_copy(update={"max_steps": max_steps})
    if budget is not None:
        settings.kv.budget_tokens = budget
    elif settings.kv.budget_tokens is None:
        settings.kv.budget_tokens = cfg.kv_budget_tokens
    return settings, cfg


def make_engine(settings, spec: str | None = None, progress=None):
    """The real engine for ``settings``, or a test engine named by ``spec`` / $CODEAGENT_ENGINE."""
    spec = spec or os.environ.get(ENGINE_ENV) or None
    if spec:
        if not spec.startswith("scripted:"):
            raise InputError(f"unknown engine {spec!r} (only scripted:PATH, for tests)")
        from codeagent.agent.scripted import ScriptedEngine

        return ScriptedEngine.from_file(Path(spec.split(":", 1)[1]), budget_tokens=settings.kv.budget_tokens)
    from codeagent.runtime import build_engine

    return build_engine(settings, progress)


def read_issue(path: Path) -> str:
    """The issue text; one-line errors for a missing, unreadable or empty file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"issue file not found: {path}")
    try:
        text = path.read_text()
    except (OSError, UnicodeError) as exc:
        raise InputError(f"cannot read issue file {path}: {exc}") from None
    if not text.strip():
        raise InputError(f"issue file is empty: {path}")
    return text


def check_repo(repo: Path) -> Path:
    """``repo`` as an existing directory, else a one-line error."""
    repo = Path(repo).expanduser()
    if not repo.exists():
        raise InputError(f"repository path does not exist: {repo}")
    if not repo.is_dir():
        raise InputError(f"repository path is not a directory: {repo}")
    return repo.resolve()


def runs_root(repo: Path, runs_dir: Path | None) -> Path:
    """Where runs live (``<repo>/.codeagent-runs`` by default), git-ignored so the user's status stays clean."""
    root = Path(runs_dir).expanduser().resolve() if runs_dir else repo / ".codeagent-runs"
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return root


def new_run_id() -> str:
    """A sortable, unique run id."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def _reopen(traj: Trajectory, run_dir: Path) -> Workspace:
    """The workspace a saved run used; recreated from its base plus the saved patch if it is gone."""
    rec = traj.workspace
    if rec is None:
        raise InputError("trajectory has no workspace record")
    path = Path(rec.path)
    if path.is_dir():
        return Workspace(repo=Path(rec.repo), path=path, base=rec.base, branch=rec.branch,
                         is_worktree=rec.is_worktree, dirty=rec.dirty)
    ws = Workspace.create(check_repo(Path(rec.repo)), run_dir.parent, run_dir.name)
    if traj.patch.strip():
        from codeagent.tools.gitdiff import GitError, git

        try:
            git(ws.path, "apply", "--whitespace=nowarn", "-", input=traj.patch)
        except GitError as exc:
            raise InputError(f"cannot restore the run's changes in a new workspace: {exc}") from None
    return ws


def tidy(ws: Workspace, status: str | None, keep: bool) -> str | None:
    """A finished run that changed nothing drops its worktree and branch (its trajectory stays) unless ``keep``;
    an interrupted one keeps them for ``--resume``. Returns a line saying so, or None."""
    if keep or status == "interrupted" or ws.diff().strip():
        return None
    ws.drop()
    what = "worktree and branch" if ws.branch else "copy"
    return f"no change: the run's {what} removed (--keep keeps them)"


def solve(engine, settings, cfg: AgentConfig, *, repo: Path | None = None, issue: str | None = None,
          issue_path: Path | None = None, runs_dir: Path | None = None, run_id: str | None = None,
          sandbox_kind: str | None = None, resume: Path | None = None, listener: Listener | None = None) -> RunOutcome:
    """Run the agent on ``issue`` in a fresh workspace of ``repo``, or continue the run saved at ``resume``."""
    from codeagent.sandbox import open_sandbox
    from codeagent.tools import ToolContext

    ui = listener or Listener()
    if resume is not None:
        traj_path = Path(resume).resolve()
        traj = load(traj_path)
        if traj.result is not None and not traj.result.resumable():
            raise InputError(f"run {traj.run_id} already ended ({traj.result.status}); nothing to resume")
        ws = _reopen(traj, traj_path.parent)
    else:
        if issue is None:
            raise InputError("no issue given")
        repo = check_repo(repo or Path("."))
        run_id = run_id or new_run_id()
        root = runs_root(repo, runs_dir)
        ws = Workspace.create(repo, root, run_id)
        traj_path = root / run_id / f"{run_id}.traj.json"
        traj = Trajectory(run_id=run_id, issue=issue, issue_path=str(issue_path) if issue_path else None,
                          repo=str(repo), model=settings.model.model, settings=settings.model_dump(mode="json"),
                          workspace=WorkspaceRecord(repo=str(ws.repo), path=str(ws.path), base=ws.base,
                                                    branch=ws.branch, is_worktree=ws.is_worktree, dirty=ws.dirty))
    if ws.dirty:
        ui.note(f"warning: {ws.repo} has uncommitted changes; the run starts from HEAD ({ws.base[:10]}) "
                "and leaves your working tree as it is")
    try:
        box = open_sandbox(sandbox_config(settings.extra, sandbox_kind), ws.path, ro_paths=ws.git_dirs())
    except BaseException:
        if resume is None:  # nothing of a run that never started is left behind
            ws.discard()
        raise
    try:
        ctx = ToolContext(workspace=ws.path, sandbox=box, max_output_chars=cfg.max_output_chars,
                          command_timeout=cfg.command_timeout_s, test_command=cfg.test_command, base_ref=ws.base)
        agent = Agent(engine, ctx, cfg, traj, traj_path, listener=ui, workspace=ws)
        if resume is not None:
            result = agent.resume()
        else:
            engine.reset()
            result = agent.run()
    finally:
        box.close()
    return RunOutcome(result=result, trajectory=traj_path, workspace=ws, run_id=traj.run_id,
                      sandbox=getattr(box, "isolation", ""))
