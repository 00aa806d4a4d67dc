"""The solve phases that need no model: reproduce (run the tests), localize (rank definitions), judge.

The phase steps (:mod:`codeagent.agent.steps`) string them together with the model's candidate repairs.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field
from pathlib import Path

from codeagent.agent.symbols import Symbol, SymbolIndex, is_test_path, traceback_frames
from codeagent.agent.testreport import FAILED, TestReport, failure_text, run_tests
from codeagent.kvcache.languages import language_for_path
from codeagent.tools import ToolContext, beneath

REPRO_FILE = "test_issue_reproduction.py"
"""Name of the reproduction test the agent writes when no test fails before the fix."""


def run_suite(ctx: ToolContext, only: list[str] | None = None) -> TestReport | None:
    """The repository's tests, run in the sandbox with a machine-readable report (pytest for a Python
    project without a test set-up); None when there is nothing to run them with."""
    report = run_tests(ctx.sandbox, ctx.workspace, ctx.test_command, ctx.command_timeout, only)
    if report is None and any(ctx.workspace.glob("**/*.py")):
        report = run_tests(ctx.sandbox, ctx.workspace, "python3 -m pytest -q", ctx.command_timeout, only)
    return report


def repro_path(root: Path) -> str:
    """Where a reproduction test goes: beside the existing Python tests, else ``tests/``."""
    for folder in ("tests", "test"):
        if (root / folder).is_dir():
            return f"{folder}/{REPRO_FILE}"
    existing = sorted(p for p in root.rglob("test_*.py") if ".codeagent" not in str(p))
    if existing:
        return str(existing[0].parent.relative_to(root) / REPRO_FILE).lstrip("./")
    return f"tests/{REPRO_FILE}"


def numbered(path: str, n: int) -> str:
    """``tests/test_x.py`` -> ``tests/test_x_2.py`` for the n-th reproduction file."""
    stem, dot, ext = path.rpartition(".")
    return f"{stem}_{n}{dot}{ext}"


@dataclass
class Verdict:
    """How a test run compares with the run before any edit."""

    fixed: list[str]  # failed before, pass now
    still_failing: list[str]  # failed before, do not pass now
    broken: list[str]  # passed before, do not pass now
    passed: int  # tests passing now
    reproduces: bool = False  # a reproduction test that fails as it should
    disputed: list[str] = field(default_factory=list)  # tests of reproductions the repair does not agree with

    @property
    def resolved(self) -> bool:
        """The tests that failed pass and nothing that passed fails."""
        return bool(self.fixed) and not self.still_failing and not self.broken

    @property
    def score(self) -> tuple[int, int, int]:
        """Orders candidates: most fixed, fewest broken, most passing."""
        return (len(self.fixed), -len(self.broken), self.passed)

    def describe(self) -> str:
        """One line for the model and the report."""
        if self.resolved:
            extra = f"; reproduction(s) it disagrees with: {', '.join(self.disputed[:4])}" if self.disputed else ""
            return f"fixed {len(self.fixed)} failing test(s), nothing broken{extra}"
        parts = []
        if self.still_failing:
            parts.append(f"still failing: {', '.join(self.still_failing[:4])}")
        if self.broken:
            parts.append(f"now failing (passed before): {', '.join(self.broken[:4])}")
        return "; ".join(parts) or "no failing test to fix"


def judge(before: TestReport, after: TestReport | None, targets: set[str],
          groups: list[set[str]] | None = None) -> Verdict:
    """Compare ``after`` with ``before``: ``targets`` (the failing tests) must pass, nothing that passed may fail.
    ``groups`` splits the targets into independent reproductions the model wrote: when every test of at least one
    passes, the tests of the others are ``disputed`` (a reproduction no repair agrees with) instead of failing."""
    passing = after.passing if after is not None else set()
    disputed: set[str] = set()
    if groups and any(g and g <= passing for g in groups):
        disputed = {t for g in groups if not g <= passing for t in g}
    return Verdict(fixed=sorted(t for t in targets if t in passing),
                   still_failing=sorted(t for t in targets if t not in passing and t not in disputed),
                   broken=sorted(t for t in before.passing if t not in passing and t not in targets),
                   passed=len(passing), disputed=sorted(disputed))


@dataclass
class Shown:
    """A definition shown to the model."""

    ref: str
    start: int
    end: int
    language: str
    code: str

    @property
    def path(self) -> str:
        """The file, as the ref names it."""
        return self.ref.split("::")[0]

    @property
    def name(self) -> str:
        """The qualified name (``Class.method`` for a method)."""
        return self.ref.split("::")[-1]


@dataclass
class Localization:
    """What localization found: the ranked definitions, the map and the definitions to show."""

    ranked: list[tuple[float, Symbol]]
    repo_map: str
    shown: list[Shown] = field(default_factory=list)
    frames: list[tuple[str, str]] = field(default_factory=list)

    @property
    def language(self) -> str | None:
        """Language of the best-ranked definition (the reply's fence)."""
        return self.shown[0].language if self.shown else None


def failing_tests(index: SymbolIndex, report: TestReport) -> list[Symbol]:
    """Test definitions whose ids failed in ``report``."""
    out = []
    for test_id in sorted(report.failing):
        parts = test_id.split("::")
        path, name = parts[0], ".".join(parts[1:])
        sym = index.find(path, name) if name else None
        if sym is None and parts:
            sym = next((s for s in index.symbols if s.is_test and s.short == parts[-1].split("[")[0]), None)
        if sym is not None and sym not in out:
            out.append(sym)
    return out


def localize(index: SymbolIndex, issue: str, report: TestReport | None, max_shown: int = 3,
             max_lines: int = 60) -> Localization:
    """Rank the repository's definitions by the issue and the failing tests; pick the ones to show."""
    index.refresh()
    text = report.output if report is not None else ""
    frames = traceback_frames(text, index.root)
    tests = failing_tests(index, report) if report is not None else []
    ranked = index.rank(issue + "\n" + failure_text(report, 3000) if report is not None else issue, frames, tests)
    loc = Localization(ranked=ranked, repo_map=index.repo_map(ranked), frames=frames)
    top = ranked[0][0] if ranked else 0.0
    calls = ranked[0][1].uses if ranked else frozenset()  # what the best-ranked definition calls: a helper's bug
    used = 0
    for score, sym in ranked:
        if len(loc.shown) >= max_shown or score <= 0 and loc.shown:
            break
        if loc.shown and score < 0.5 * top and sym.short not in calls:
            continue
        if sym.kind == "class" and sym.end_line - sym.start_line > 40:
            continue  # a big class: its methods are ranked on their own
        if any(d.path == sym.path and d.start <= sym.end_line and sym.start_line <= d.end
               for d in loc.shown):
            continue  # a class whose method is shown (or the reverse) would show the same lines twice
        lines = sym.end_line - sym.start_line + 1
        if loc.shown and used + lines > max_lines:
            continue
        used += lines
        loc.shown.append(shown_definition(index, sym))
    for test in tests[:1]:  # the first failing test, as context (tests are never rewritten)
        loc.shown.append(shown_definition(index, test, 30))
    return loc


def shown_definition(index: SymbolIndex, sym: Symbol, max_lines: int | None = None) -> Shown:
    """``sym`` as the model is shown it: its current text (the first ``max_lines`` lines when given)."""
    lines = (beneath.read_text_if_file(index.root, sym.path) or "").splitlines()[sym.start_line - 1:sym.end_line]
    return Shown(ref=sym.ref, start=sym.start_line, end=sym.end_line, language=language_for_path(sym.path) or "",
                 code="\n".join(lines[:max_lines]))


_VIEW_REF = re.compile(r"([\w./-]+\.\w+)::([\w.]+)")
_WORD = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_NOT_NAMES = {"fix", "view", "none", "the", "in", "is", "bug", "definition"}


def requested_definition(reply: str, index: SymbolIndex, shown: list[str]) -> Symbol | None:
    """The code definition a reply asks to see (``view PATH::NAME``, or a bare name that is unique in the
    repository), when it is not a test and not shown already; None for ``fix`` or anything unknown."""
    wanted: list[Symbol] = []
    for m in _VIEW_REF.finditer(reply):
        sym = index.find(m.group(1).lstrip("./"), m.group(2))
        if sym is not None:
            wanted.append(sym)
    if not wanted:
        for word in (w for w in _WORD.findall(reply) if w.lower() not in _NOT_NAMES):
            found = [s for s in index.symbols if not s.is_test and (s.name == word or s.short == word)]
            if len(found) == 1:
                wanted.append(found[0])
    return next((s for s in wanted if not s.is_test and not touches_tests(s.path) and s.ref not in shown), None)


def failing_summary(report: TestReport) -> str:
    """Failing test ids in one line."""
    ids = sorted(report.failing)
    return ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")


_FRAME = re.compile(r"^([^\s:]+\.py):\d+:", re.M)
_BY_ASSERTION = ("assert", "AssertionError", "Failed:")


def fails_in_itself(detail: str, path: str) -> bool:
    """Whether a failure ``detail`` (message and traceback) is an exception other than an assertion raised in the
    test file ``path`` itself (a NameError, a call with the wrong arguments): the test is broken, not the code."""
    if not detail or detail.startswith(_BY_ASSERTION):
        return False
    frames = _FRAME.findall(detail)
    return bool(frames) and frames[-1].lstrip("./") == path


def repro_failures(report: TestReport | None, path: str) -> tuple[set[str], str]:
    """The tests in ``path`` (a reproduction) that fail, and why the reproduction is rejected ("" when it is
    not): it must fail, and every failure must be an assertion or an exception the repository's code raised."""
    if report is None:
        return set(), "the tests did not run"
    mine = {t: o for t, o in report.outcomes.items() if t.startswith(path)}
    failed = {t for t, o in mine.items() if o == FAILED}
    broken = sorted(t for t in failed if fails_in_itself(report.details.get(t, ""), path))
    if broken:
        first = report.details[broken[0]].splitlines()[0]
        return failed, f"the test itself raises ({first[:120]}), not the code under test"
    if not failed:
        return failed, "the test does not fail by an assertion: " + report.summary()
    return failed, ""


def module_of(path: str) -> str | None:
    """The dotted module a Python file is imported as (``src/`` layouts included); None for other files."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts and all(p.isidentifier() for p in parts) else None


def unbound_names(code: str) -> set[str]:
    """Names Python ``code`` reads that nothing in it binds and that are not builtins (scope-blind, so a name
    bound anywhere counts as bound); empty for code that does not parse or star-imports."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return set()
    bound, used = set(dir(builtins)), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return set()
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
    return used - bound


def _home(name: str, index: SymbolIndex) -> str | None:
    """The module of the one top-level code definition named ``name`` (None: none or several)."""
    found = [sym for sym in index.symbols if sym.name == name and not sym.is_test]
    return module_of(found[0].path) if len(found) == 1 else None


def missing_imports(code: str, index: SymbolIndex) -> list[str]:
    """Import lines for the names a test file uses without importing them that exactly one top-level definition
    of the repository's code has: a small model often forgets the import of a reproduction."""
    return [f"from {home} import {name}" for name in sorted(unbound_names(code)) if (home := _home(name, index))]


def fix_imports(code: str, index: SymbolIndex) -> str:
    """``code`` (a test the model wrote) with its imports of the repository's definitions made right: a name
    imported from a module of the repository that neither defines nor mentions it (``from pkg import f`` where
    ``f`` lives in ``pkg/mod.py``) is imported from its home, and the names it uses without importing them are
    imported (``missing_imports``)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    files = {module_of(p): p for p in index.files if module_of(p)}
    lines = code.splitlines()
    for node in sorted((n for n in tree.body if isinstance(n, ast.ImportFrom)), key=lambda n: -n.lineno):
        if node.level or node.module not in files:
            continue
        source = beneath.read_text_if_file(index.root, files[node.module]) or ""
        moved = [(a, home) for a in node.names if not re.search(rf"\b{re.escape(a.name)}\b", source)
                 and (home := _home(a.name, index)) and home != node.module]
        if not moved:
            continue
        stay = [a for a in node.names if all(a is not m for m, _ in moved)]
        new = [ast.unparse(ast.ImportFrom(module=node.module, names=stay, level=0))] if stay else []
        new += [ast.unparse(ast.ImportFrom(module=home, names=[a], level=0)) for a, home in moved]
        lines[node.lineno - 1:node.end_lineno] = new
    code = "\n".join(lines) + "\n"
    added = missing_imports(code, index)
    return with_imports(code, added) if added else code


def with_imports(code: str, imports: list[str]) -> str:
    """``code`` with ``imports`` added after its ``from __future__`` lines (at the top when it has none)."""
    lines = code.splitlines()
    at = max((i + 1 for i, ln in enumerate(lines) if ln.startswith("from __future__")), default=0)
    return "\n".join(lines[:at] + imports + lines[at:]) + "\n"


def touches_tests(path: str) -> bool:
    """Whether a repair would change a test file (repairs must fix the code, not the tests)."""
    return is_test_path(path)


def edit_targets(text: str, shown: list[Shown]) -> tuple[tuple[int, int], ...]:
    """Character ranges in ``text`` (a rendered context) of the shown definitions a repair may rewrite (not
    tests): the cache keeps them verbatim while the repairs run (``SpanInfo.protect``)."""
    out, at = [], 0
    for d in shown:
        i = text.find(d.code, at)
        if i < 0:
            continue
        at = i + len(d.code)
        if not touches_tests(d.path):
            out.append((i, at))
    return tuple(out)
