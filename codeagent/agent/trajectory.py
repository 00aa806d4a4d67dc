"""The trajectory: a run's linear transcript plus its state, saved as JSON after every turn.

Everything needed to continue a run lives here: the messages (with the tags the cache got), the
commit/debug events between them, the plan, the loop's counters and the workspace's patch.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codeagent.errors import InputError
from codeagent.kvcache.tags import SegmentKind, SpanInfo

FORMAT = "codeagent-trajectory/1"
MINI_FORMAT = "mini-swe-agent-1.1"
"""The mini-swe-agent trajectory format whose fields each trajectory also carries (``info``, ``messages``)."""
SUFFIX = ".traj.json"
"""Trajectory files are ``<run id>.traj.json``, the name mini-swe-agent's inspector looks for."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


FILE_MODE = 0o666 & ~_umask()
"""Mode of a saved trajectory: what ``open()`` would create (mkstemp's 0600 hides it from other readers)."""


class SpanRecord(BaseModel):
    """Tags of a char span of an assistant message (after the reply was parsed)."""

    start: int
    end: int
    kind: str
    subtask: str | None = None
    language: str | None = None
    pinned: bool = False


class MessageRecord(BaseModel):
    """One message as the model saw it, with the tags it was cached under."""

    role: Literal["system", "user", "assistant"]
    content: str
    kind: str
    subtask: str | None = None
    language: str | None = None
    pinned: bool = False
    protect: list[tuple[int, int]] = Field(default_factory=list)
    """Character ranges of the content the cache keeps verbatim (SpanInfo.protect)."""
    spans: list[SpanRecord] = Field(default_factory=list)

    def info(self) -> SpanInfo:
        """The message's tags as a SpanInfo."""
        return SpanInfo(kind=SegmentKind[self.kind.upper()], subtask=self.subtask, language=self.language,
                        pinned=self.pinned, protect=tuple(tuple(r) for r in self.protect))


class EventRecord(BaseModel):
    """A KV-manager event placed after a message: a commit or a debug round opening/closing."""

    type: Literal["commit", "debug_open", "debug_close"]
    subtask: str
    after_message: int


class PlanStep(BaseModel):
    """One plan step: a subtask of the run."""

    id: str
    text: str
    status: Literal["pending", "active", "done", "given_up", "abandoned"] = "pending"  # abandoned: older runs
    reason: str = ""  # why the step ended: "tests pass", "repeated view calc/ops.py after a nudge", ...


class StepRecord(BaseModel):
    """One turn of the loop: what the model said, what it did, what came back, and the cache after."""

    n: int
    phase: str
    subtask: str | None
    started: float
    duration_s: float = 0.0
    reply: str | None = None
    action: dict[str, Any] | None = None
    observation: dict[str, Any] | None = None
    format_error: str | None = None
    gen: dict[str, Any] = Field(default_factory=dict)
    kv: dict[str, Any] = Field(default_factory=dict)
    events: list[str] = Field(default_factory=list)


class RunState(BaseModel):
    """The loop's counters: where to continue from."""

    phase: str = "plan"
    step_index: int = 0
    debug_rounds: int = 0
    step_edits: bool = False
    format_errors: int = 0
    turns: int = 0
    gen_tokens: int = 0
    elapsed_s: float = 0.0


class WorkspaceRecord(BaseModel):
    """Where the run edits (fields of :class:`codeagent.agent.workspace.Workspace`)."""

    repo: str
    path: str
    base: str
    branch: str | None
    is_worktree: bool
    dirty: bool


class ResultRecord(BaseModel):
    """How the run ended."""

    status: str  # resolved, unresolved, failed, interrupted
    reason: str
    summary: str = ""
    tests_passed: bool | None = None
    files_changed: int = 0
    patch_path: str | None = None
    kv: dict[str, Any] = Field(default_factory=dict)
    max_physical_slots: int = 0
    budget_slots: int | None = None
    within_budget: bool = True
    tests_before: dict[str, str] = Field(default_factory=dict)
    """Each test id's outcome before any edit."""
    tests_after: dict[str, str] = Field(default_factory=dict)
    """Each test id's outcome at the end."""
    fail_to_pass: list[str] = Field(default_factory=list)
    broken: list[str] = Field(default_factory=list)
    """Tests that passed before and do not now."""
    candidates: int = 0
    kv_peak: int = 0
    """Most cache slots at any moment of the run (compression may briefly lift it above the step-end counts)."""
    prefill_saved_tokens: int = 0
    """Prompt tokens not prefilled again thanks to snapshot/restore."""
    gen_tokens: int = 0

    def resumable(self) -> bool:
        """Whether ``--resume`` can go on: the run was interrupted."""
        return self.status == "interrupted"


class ModelStats(BaseModel):
    """mini-swe-agent's ``info.model_stats``: the model runs in-process, so the cost is 0."""

    instance_cost: float = 0.0
    api_calls: int = 0
    """Model replies generated (candidates and turns)."""
    tokens_generated: int = 0


class MiniInfo(BaseModel):
    """mini-swe-agent's ``info``: how the run ended and what it submits (the patch)."""

    exit_status: str = ""
    """The result's status (resolved, unresolved, failed, interrupted); empty while the run goes on."""
    submission: str = ""
    """The final patch."""
    model_stats: ModelStats = Field(default_factory=ModelStats)
    model: str = ""


class Trajectory(BaseModel):
    """A whole run; :func:`save` writes it atomically, :func:`load` reads and validates it."""

    model_config = ConfigDict(protected_namespaces=())

    format: str = FORMAT
    run_id: str
    created: float = Field(default_factory=time.time)
    updated: float = Field(default_factory=time.time)
    issue: str
    issue_path: str | None = None
    repo: str
    model: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    workspace: WorkspaceRecord | None = None
    plan: list[PlanStep] = Field(default_factory=list)
    state: RunState = Field(default_factory=RunState)
    messages: list[MessageRecord] = Field(default_factory=list)
    events: list[EventRecord] = Field(default_factory=list)
    steps: list[StepRecord] = Field(default_factory=list)
    patch: str = ""
    result: ResultRecord | None = None
    info: MiniInfo = Field(default_factory=MiniInfo)
    """mini-swe-agent's fields, filled from the rest on every save."""
    trajectory_format: str = MINI_FORMAT


def mini_info(traj: Trajectory) -> MiniInfo:
    """mini-swe-agent's ``info`` for ``traj``, from its result, patch and counters."""
    return MiniInfo(exit_status=traj.result.status if traj.result else "", submission=traj.patch,
                    model_stats=ModelStats(api_calls=traj.state.turns, tokens_generated=traj.state.gen_tokens),
                    model=traj.model)


def save(traj: Trajectory, path: Path) -> Path:
    """Write ``traj`` to ``path`` atomically (a temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    traj.updated = time.time()
    traj.info = mini_info(traj)
    fd, tmp = tempfile.mkstemp(prefix=".traj-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(traj.model_dump_json(indent=1))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def load(path: Path) -> Trajectory:
    """The trajectory saved at ``path``; a one-line error when it is missing or not a trajectory."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"trajectory not found: {path}")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"trajectory {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"{path} is not a codeagent trajectory (format {FORMAT})")
    try:
        return Trajectory.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"trajectory {path} is invalid at {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
