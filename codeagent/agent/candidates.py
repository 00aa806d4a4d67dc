"""Candidates and the files they change: each repair is applied to the files as they were before any
candidate, tested, judged, and taken back; the best one can be put back at the end."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from codeagent.agent import phases
from codeagent.agent.defedit import rewrites_a_class
from codeagent.agent.testreport import TestReport
from codeagent.agent.trajectory import MessageRecord
from codeagent.tools import ToolContext, beneath


@dataclass
class Candidate:
    """One sampled reply, what it changed, and how the tests judged it."""

    n: int
    code: str = ""
    files: dict[str, str] = field(default_factory=dict)  # path -> new content
    verdict: phases.Verdict | None = None
    report: TestReport | None = None
    error: str = ""
    snapshot: object = None  # the cache right after the reply
    message: MessageRecord | None = None
    messages: int = 0  # transcript length before the reply
    duplicate: bool = False  # the same reply as an earlier candidate of the run
    unchanged: bool = False  # the reply restates the code it should fix
    replaced: list[str] = field(default_factory=list)  # names of the definitions the reply rewrote
    bypasses: list[str] = field(default_factory=list)  # shown definitions the rewrite no longer calls

    @property
    def wasted(self) -> bool:
        """A reply that told nothing new: a repeat or a copy of the code."""
        return self.duplicate or self.unchanged

    @property
    def accepted(self) -> bool:
        """The tests accept it: a repair resolves, a reproduction fails by an assertion."""
        return not self.error and self.verdict is not None and (self.verdict.resolved or self.verdict.reproduces)

    @property
    def score(self) -> tuple:
        """Ordering of candidates (applied ones with the best verdict first)."""
        return self.verdict.score if self.verdict is not None else (-1, -1_000, -1)


class Files:
    """The workspace files candidates touch, with their content before any candidate (None: did not exist)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.baseline: dict[str, str | None] = {}

    def read(self, path: str) -> str | None:
        return beneath.read_text_if_file(self.root, path)

    def write(self, path: str, text: str | None) -> None:
        """Write (None: delete) a file beneath the workspace, never through a link leading out of it."""
        if text is not None:
            beneath.write_bytes(self.root, path, text.encode())
            return
        f = self.root / path
        if f.parent.resolve().is_relative_to(self.root.resolve()):
            f.unlink(missing_ok=True)

    def track(self, path: str, before: str | None = None, known: bool = False) -> None:
        """Remember ``path``'s content before the candidates (``before`` when the caller read it already)."""
        if path not in self.baseline:
            self.baseline[path] = before if known else self.read(path)

    def reset(self) -> None:
        """Every tracked file back to its content before the candidates."""
        for path, text in self.baseline.items():
            self.write(path, text)

    def put(self, cand: Candidate) -> None:
        """The base files with ``cand``'s changes."""
        self.reset()
        for path, text in cand.files.items():
            self.track(path)
            self.write(path, text)

    def keep(self) -> None:
        """The current files become the base (e.g. after a reproduction test was accepted)."""
        self.baseline = {}


def try_fix(cand: Candidate, action, ctx: ToolContext, files: Files, tool, before: TestReport, targets: set[str],
            groups: list[set[str]] | None = None) -> None:
    """Apply a repair to the base files with ``tool`` (replace), run the tests, judge them against ``before``.
    A reply that rewrites a whole class and is not accepted is tried once more changing only the class's
    methods (a small model often restates a class with a fix in one method and a broken field or import)."""
    if action.tool != "replace":
        files.reset()
        cand.error = f"expected a definition, got {action.tool}"
        return
    _apply_fix(cand, action.args, ctx, files, tool, before, targets, groups)
    path = next(iter(cand.files), "") or action.args.get("path") or ""
    base = files.baseline.get(path)
    if cand.accepted or not base or not rewrites_a_class(base.encode(), path, action.args.get("code", "")):
        return
    alt = Candidate(n=cand.n)
    _apply_fix(alt, {**action.args, "methods_only": "true"}, ctx, files, tool, before, targets, groups)
    if not alt.error and alt.score > cand.score:
        cand.files, cand.report, cand.verdict, cand.error = alt.files, alt.report, alt.verdict, alt.error
    files.put(cand)


def _apply_fix(cand: Candidate, args: dict, ctx: ToolContext, files: Files, tool, before: TestReport,
               targets: set[str], groups: list[set[str]] | None) -> None:
    files.reset()
    obs = tool.run(args, ctx)
    path = obs.data.get("path", "")
    if not obs.ok:
        cand.error = obs.text.removeprefix("error: ")
        return
    files.track(path, obs.data["before"], known=True)
    cand.replaced = list(obs.data.get("replaced", []))
    if phases.touches_tests(path):
        cand.error = f"{path} is a test file: fix the code, not the tests"
        files.reset()
        return
    cand.files = {path: files.read(path) or ""}
    if cand.files[path] == files.baseline[path]:
        cand.unchanged = True
        cand.error = f"{', '.join(obs.data.get('replaced', []))} is unchanged: that is the code with the bug"
        return
    cand.report = phases.run_suite(ctx)
    cand.verdict = phases.judge(before, cand.report, targets, groups)


def dropped_calls(old: str, new: str, names: set[str]) -> list[str]:
    """The ``names`` that ``old`` calls and ``new`` no longer does (a rewrite that works around a helper)."""
    def called(code: str) -> set[str]:
        return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", code))
    return sorted((called(old) & names) - called(new))


def bypassed(cand: Candidate, shown: list[phases.Shown]) -> list[str]:
    """The shown definitions (not tests) that the definitions ``cand`` rewrote called and its code no longer calls."""
    mine = [d for d in shown if d.name in cand.replaced]
    helpers = {d.name.split(".")[-1] for d in shown if d not in mine and not phases.touches_tests(d.path)}
    return dropped_calls("".join(d.code for d in mine), cand.code, helpers)


def try_repro(cand: Candidate, action, ctx: ToolContext, files: Files, tool, index=None) -> None:
    """Write a reproduction test with ``tool`` (create) and run it alone: it must fail, by an assertion or an
    exception the repository's code raises (``phases.repro_failures``). Its imports of the repository's
    definitions (``index``, a SymbolIndex) are made right first (``phases.fix_imports``)."""
    path = phases.repro_path(ctx.workspace)
    files.reset()
    files.track(path)
    code = action.args.get("code", "")
    obs = tool.run({"path": path, "content": phases.fix_imports(code, index) if index is not None else code}, ctx)
    if not obs.ok:
        cand.error = obs.text.removeprefix("error: ")
        return
    cand.report = phases.run_suite(ctx, only=[path])
    cand.files = {path: files.read(path) or ""}
    _, why = phases.repro_failures(cand.report, path)
    cand.verdict = phases.Verdict(fixed=[], still_failing=[], broken=[], passed=0, reproduces=not why)
    cand.error = why
