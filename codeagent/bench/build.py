"""Build benchmark tasks from real code on this machine (stdlib and installed packages).

Three families, each deterministic for a seed (on a given machine, since the code comes from the
installed files):

- ``signature_recall``: an agent session (issue, plan, file views, test logs, edits) whose first,
  finished subtask views a function with a distinctive parameter list; the probe asks for a
  wrapper with the same signature, so the target is that parameter list as written.
- ``next_line``: a long file shown as a line-numbered view; the probe continues the file from its
  last lines, and the target is the next line, which uses an identifier defined in the file's
  first quarter.
- ``session``: a long multi-turn session (several subtasks committed in turn) whose probe recalls
  a signature from the first subtask's file view.

Sessions are rendered as the agent loop would write them: ``view path`` tool calls answered by
line-numbered views (``f"{lineno:>6}\\t{line}"``), pytest runs with failure tracebacks through real
code, and edits as fenced code. The target function always sits early, so windowed caches lose it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import os
import random
import re
import site
import sysconfig
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from pydantic import Field

from codeagent.bench.tasks import Probe, Segment, Task, dump_tasks, render_chatml
from codeagent.errors import InputError

FAMILIES: tuple[str, ...] = ("signature_recall", "next_line", "session", "next_line_raw")
TOKEN_RANGES: dict[str, tuple[int, int]] = {
    "signature_recall": (1500, 3000),
    "next_line": (1500, 3000),
    "session": (6000, 8000),
    "next_line_raw": (1500, 3000),
}
"""Accepted context sizes in tokens per family; a built task always lies inside its range."""
_AIMS: dict[str, tuple[int, int]] = {
    "signature_recall": (1700, 2800),
    "next_line": (1700, 2800),
    "session": (6300, 7700),
    "next_line_raw": (1700, 2800),
}
_ID_PREFIX = {"signature_recall": "sigrecall", "next_line": "nextline", "session": "session",
              "next_line_raw": "nextraw"}
_SKIP_DIRS = frozenset({
    "__pycache__", "test", "tests", "testing", "idlelib", "turtledemo", "lib2to3", "ensurepip",
    "pydoc_data", "encodings", "site-packages", "dist-packages", "_vendor", "vendored", "migrations",
})
_MAX_LINE = 160
_MIN_BYTES, _MAX_BYTES = 3_000, 150_000
_ATTEMPTS = 400
_BUILTINS = frozenset(dir(builtins))

SYSTEM_PROMPT = """You are codeagent, an autonomous coding agent working in a git checkout of the user's project.
Work in small steps: plan, read the code you need, edit, run the tests, and fix what fails.
Tools (one call per message):
  view PATH [START-END]   show a file with line numbers
  search PATTERN [PATH]   grep the workspace
  edit PATH               replace a block of code with the fenced block that follows
  create PATH             write a new file
  bash COMMAND            run a shell command in the sandbox
  run_tests [ARGS]        run the project's test command
  finish                  stop and hand back the patch
Keep signatures and public interfaces stable unless the issue asks otherwise.
Mark each plan step done when its tests pass."""


class BuiltTask(Task):
    """A task made by this builder: a Task plus where its code came from."""

    meta: dict[str, Any] = Field(default_factory=dict)
    """Source file, function or line, and builder settings (ignored by loaders)."""


# --- tokens -----------------------------------------------------------------------------------


class TokenCounter:
    """Counts tokens with a HF tokenizer (``encode``) or any ``str -> int`` callable."""

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer
        self._encode = hasattr(tokenizer, "encode")

    def __call__(self, text: str) -> int:
        """Tokens in ``text``, without special tokens added."""
        if self._encode:
            return len(self._tok.encode(text, add_special_tokens=False))
        return int(self._tok(text))

    def many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of several texts (batched when the tokenizer allows)."""
        if self._encode and callable(self._tok) and texts:
            return [len(ids) for ids in self._tok(list(texts), add_special_tokens=False)["input_ids"]]
        return [self(t) for t in texts]

    def segments(self, segments: Sequence[Segment]) -> int:
        """Tokens of segments rendered as ChatML, one message each."""
        return self(render_chatml(segments))


def load_default_tokenizer() -> Any:
    """The embedded model's tokenizer (SmolLM2), from the local converted copy."""
    from transformers import AutoTokenizer

    from codeagent.kvcache.models import _quiet_transformers, resolve

    _quiet_transformers()
    return AutoTokenizer.from_pretrained(str(resolve("smollm2")))


# --- source files -----------------------------------------------------------------------------


def source_roots() -> list[Path]:
    """The stdlib and site-packages directories of this interpreter, deduplicated."""
    paths = sysconfig.get_paths()
    found = [paths["stdlib"], paths.get("purelib", ""), paths.get("platlib", ""), *site.getsitepackages()]
    roots: list[Path] = []
    for p in found:
        if p and Path(p).is_dir() and Path(p).resolve() not in roots:
            roots.append(Path(p).resolve())
    return roots


@functools.lru_cache(maxsize=8)
def list_sources(roots: tuple[Path, ...]) -> tuple[tuple[Path, str], ...]:
    """Every candidate ``.py`` file under the roots as (absolute path, path relative to its root), sorted."""
    out: list[tuple[Path, str]] = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith((".", "_test")))
            for name in sorted(filenames):
                if not name.endswith(".py") or name.startswith(("test_", "conftest")) or name.endswith("_pb2.py"):
                    continue
                path = Path(dirpath) / name
                try:
                    size = path.stat().st_size
                except OSError:
                    continue
                if _MIN_BYTES <= size <= _MAX_BYTES:
                    out.append((path, path.relative_to(root).as_posix()))
    return tuple(out)


@dataclass(frozen=True)
class FuncInfo:
    """A function with a one-line, distinctive signature."""

    name: str
    """Function name."""
    lineno: int
    """1-based line of the ``def``."""
    end_lineno: int
    """1-based last line of the body."""
    params: str
    """The header after ``def name(`` up to its final colon, as written (e.g. ``a, b=1) -> int:``)."""
    param_names: tuple[str, ...]
    """Parameter names, without self/cls."""
    defaults: dict[str, str] = field(default_factory=dict)
    """Default value source per parameter that has one."""
    stmt_lines: tuple[int, ...] = ()
    """First lines of the statements in the body (docstring excluded), sorted."""


@dataclass
class SourceFile:
    """A parsed source file and what the builders need from it."""

    path: Path
    rel: str
    lines: list[str]
    tree: ast.Module

    @property
    def text(self) -> str:
        """The file's text, newline-joined."""
        return "\n".join(self.lines)

    @functools.cached_property
    def functions(self) -> list[FuncInfo]:
        """Functions with a one-line header, >= 2 parameters, a default and a non-trivial body."""
        return find_functions(self)


def parse_source(path: Path, rel: str) -> SourceFile | None:
    """Read and parse a file; None when it cannot be read, parsed, or has very long lines."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    lines = text.expandtabs(4).splitlines()
    if not lines or max(len(ln) for ln in lines) > _MAX_LINE:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return SourceFile(path=path, rel=rel, lines=lines, tree=tree)


def find_functions(sf: SourceFile) -> list[FuncInfo]:
    """Functions of a file whose signature is distinctive enough to be a recall target."""
    out: list[FuncInfo] = []
    text = sf.text
    for node in ast.walk(sf.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        name = node.name
        if name.startswith("__") or len(name) < 4 or name in _BUILTINS or not node.body:
            continue
        a = node.args
        params = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
        params += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        n_defaults = len(a.defaults) + sum(d is not None for d in a.kw_defaults)
        body = node.body[1:] if _is_docstring(node.body[0]) else node.body
        if len(params) < 2 or n_defaults == 0 or len(body) < 2 or node.end_lineno - node.lineno < 4:
            continue
        line = sf.lines[node.lineno - 1]
        m = re.match(rf"\s*(?:async\s+)?def\s+{re.escape(name)}\(", line)
        if m is None or "#" in line or not line.rstrip().endswith(":") or node.body[0].lineno <= node.lineno:
            continue
        header = line.strip()[len(m.group(0).strip()):].rstrip()
        if not 12 <= len(header) <= 150 or len(re.findall(rf"\bdef\s+{re.escape(name)}\(", text)) != 1:
            continue
        positional = [*a.posonlyargs, *a.args]
        defaults = {p.arg: ast.unparse(d) for p, d in zip(positional[len(positional) - len(a.defaults):], a.defaults)}
        defaults.update({p.arg: ast.unparse(d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        stmts = sorted({s.lineno for b in body for s in ast.walk(b) if isinstance(s, ast.stmt)})
        out.append(FuncInfo(name, node.lineno, node.end_lineno, header, tuple(params), defaults, tuple(stmts)))
    out.sort(key=lambda f: f.lineno)
    return out


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _interleaved(files: Sequence[tuple[Path, str]], rng: random.Random) -> Iterator[int]:
    """File indices in a seeded order that rotates over packages, so no big package dominates.

    A package is a root's top-level directory; a root's top-level modules form one group.
    """
    groups: dict[str, list[int]] = {}
    for i, (path, rel) in enumerate(files):
        head, sep, _ = rel.partition("/")
        root = str(path)[: len(str(path)) - len(rel)]
        groups.setdefault(root + (head if sep else ""), []).append(i)
    queues = [groups[k] for k in sorted(groups)]
    for q in queues:
        rng.shuffle(q)
    rng.shuffle(queues)
    depth = 0
    while queues:
        queues = [q for q in queues if depth < len(q)]
        for q in queues:
            yield q[depth]
        depth += 1


class SourcePool:
    """Source files in a seeded random order, parsed lazily, each handed out once."""

    def __init__(self, key: str, roots: Sequence[Path] | None = None) -> None:
        files = list_sources(tuple(roots) if roots is not None else tuple(source_roots()))
        if not files:
            raise InputError("no Python source files found to build tasks from")
        self._files = files
        self._order: Iterator[int] = _interleaved(files, random.Random(key))

    def take(self, need_functions: bool = False, exclude: Callable[[SourceFile], bool] | None = None) -> SourceFile:
        """The next usable file (with recall-worthy functions when asked); InputError when none is left."""
        for idx in self._order:
            sf = parse_source(*self._files[idx])
            if sf is None or (need_functions and not sf.functions) or (exclude is not None and exclude(sf)):
                continue
            return sf
        raise InputError("ran out of usable source files while building tasks")


# --- rendering pieces -------------------------------------------------------------------------


def view_text(sf: SourceFile, start: int, end: int) -> str:
    """Lines ``start..end`` (1-based, inclusive) as the view tool shows them."""
    return "\n".join(f"{no:>6}\t{sf.lines[no - 1]}" for no in range(start, end + 1))


def view_call(sf: SourceFile, start: int, end: int) -> str:
    """The tool call that shows those lines."""
    return f"view {sf.rel}" if start == 1 and end == len(sf.lines) else f"view {sf.rel} {start}-{end}"


def _rule(title: str, char: str = "=") -> str:
    return f" {title} ".center(80, char) if title else char * 80


class Writer:
    """Builds one context: segments, a token tally, and block makers that draw on a source pool."""

    def __init__(self, rng: random.Random, count: TokenCounter, pool: SourcePool, avoid: Sequence[str] = ()) -> None:
        self.rng = rng
        self.count = count
        self.pool = pool
        self.avoid = tuple(avoid)
        self.segments: list[Segment] = []
        self.tokens = 0
        self.files: list[str] = []
        self._line_costs: dict[str, list[int]] = {}
        self._overhead = count("<|im_start|>assistant\n<|im_end|>\n")

    def add(self, role: str, kind: str, text: str, subtask: str | None = None) -> None:
        """Append one message and tally its tokens (approximately: text plus template)."""
        self.segments.append(Segment(role=role, kind=kind, subtask=subtask, text=text))
        self.tokens += self.count(text) + self._overhead

    def cost(self, texts: Sequence[str]) -> int:
        """Approximate tokens of messages holding these texts."""
        return sum(self.count.many(texts)) + self._overhead * len(texts)

    def line_costs(self, sf: SourceFile, raw: bool = False) -> list[int]:
        """Tokens of each line as the view tool renders it, or as ``cat`` shows it (index 0 is line 1)."""
        key = f"{sf.rel}:raw" if raw else sf.rel
        if key not in self._line_costs:
            rendered = [f"{ln}\n" if raw else f"{no:>6}\t{ln}\n" for no, ln in enumerate(sf.lines, start=1)]
            self._line_costs[key] = self.count.many(rendered)
        return self._line_costs[key]

    def fit_end(self, sf: SourceFile, start: int, budget: int, at_least: int = 0) -> int | None:
        """Last line of a view from ``start`` whose tokens fit ``budget`` (None if not even ``at_least`` lines)."""
        costs = self.line_costs(sf)
        used = self.count(view_call(sf, start, len(sf.lines))) + 2 * self._overhead
        end = start - 1
        while end < len(sf.lines) and used + costs[end] <= budget:
            used += costs[end]
            end += 1
        return end if end >= start + max(at_least, 1) - 1 else None

    def distractor(self, need_functions: bool = False) -> SourceFile:
        """Another real file that does not define the target names."""

        def bad(sf: SourceFile) -> bool:
            return sf.rel in self.files or any(re.search(rf"\bdef\s+{re.escape(n)}\(", sf.text) for n in self.avoid)

        sf = self.pool.take(need_functions, exclude=bad)
        self.files.append(sf.rel)
        return sf

    # blocks: each appends segments and returns False when it could not fit ``budget`` tokens

    def view(self, sf: SourceFile, start: int, budget: int, subtask: str | None, at_least: int = 8) -> bool:
        """A ``view`` call and its line-numbered output, trimmed to the budget."""
        end = self.fit_end(sf, start, budget, at_least)
        if end is None:
            return False
        self.add("assistant", "tool_call", view_call(sf, start, end), subtask)
        self.add("tool", "tool_output", view_text(sf, start, end), subtask)
        return True

    def view_distractor(self, budget: int, subtask: str | None) -> bool:
        """A view of another file, from its top or around one of its functions."""
        sf = self.distractor()
        funcs = sf.functions
        start = 1
        if funcs and self.rng.random() < 0.6:
            start = max(1, self.rng.choice(funcs).lineno - self.rng.randint(2, 12))
        return self.view(sf, start, min(budget, self.rng.randint(250, 700)), subtask)

    def test_run(self, budget: int, subtask: str | None, fail: bool,
                 sf: SourceFile | None = None, func: FuncInfo | None = None) -> bool:
        """A pytest run over another file (or ``sf``): all green, or one failure through ``func``."""
        sf = sf or self.distractor(need_functions=True)
        func = func or self.rng.choice(sf.functions)
        mod = Path(sf.rel).stem
        test_rel = f"tests/test_{mod}.py"
        n = self.rng.randint(6, 40)
        secs = self.rng.uniform(0.05, 4.0)
        call = self.rng.choice([f"run_tests {test_rel}", f"bash python -m pytest -x {test_rel}"])
        head = [
            _rule("test session starts"),
            "platform linux -- Python 3.11.7, pytest-8.3.2, pluggy-1.5.0",
            "rootdir: /workspace",
            "configfile: pyproject.toml",
            f"collected {n} items",
            "",
        ]
        if not fail:
            log = head + [f"{test_rel} {'.' * n} [100%]", "", _rule(f"{n} passed in {secs:.2f}s")]
            return self._emit_run(call, "\n".join(log), budget, subtask)
        k = self.rng.randint(0, n - 1)
        case = self.rng.choice(["basic", "defaults", "empty_input", "roundtrip", "keyword_args", "edge_case"])
        test_name = f"test_{func.name.lstrip('_')}_{case}"
        args = ", ".join(self._arg(p, func) for p in func.param_names[:4] if not p.startswith("*"))
        early = [ln for ln in func.stmt_lines if ln <= func.lineno + 30] or [func.stmt_lines[0]]
        fail_line = self.rng.choice(early)
        exc, msg = self._failure(func)
        test_line = self.rng.randint(12, 240)
        cut = len(sf.lines[func.lineno - 1]) - len(sf.lines[func.lineno - 1].lstrip())

        def failing_log(at: int) -> str:
            shown = [f"{'>   ' if ln == at else '    '}{sf.lines[ln - 1][cut:]}" for ln in range(func.lineno, at + 1)]
            return "\n".join(head + [
                f"{test_rel} {'.' * k}F",
                "",
                _rule("FAILURES"),
                _rule(test_name, "_"),
                "",
                f"    def {test_name}():",
                f">       result = {mod}.{func.name}({args})",
                "",
                f"{test_rel}:{test_line}: ",
                " ".join("_" * 40),
                "",
                *shown,
                f"E       {exc}: {msg}",
                "",
                f"{sf.rel}:{at}: {exc}",
                _rule("short test summary info"),
                f"FAILED {test_rel}::{test_name} - {exc}: {msg}",
                _rule(f"1 failed, {k} passed in {secs:.2f}s"),
            ])

        # a traceback too long for the budget fails on an earlier statement of the same function
        for at in [fail_line, *(ln for ln in reversed(early) if ln < fail_line)]:
            if self._emit_run(call, failing_log(at), budget, subtask):
                return True
        return False

    def _emit_run(self, call: str, log: str, budget: int, subtask: str | None) -> bool:
        if self.cost([call, log]) > budget:
            return False
        self.add("assistant", "tool_call", call, subtask)
        self.add("tool", "tool_output", log, subtask)
        return True

    def _arg(self, param: str, func: FuncInfo) -> str:
        if param in func.defaults:
            return f"{param}={func.defaults[param]}"
        return self.rng.choice(["'example'", "3", "None", "[]", "{}", "tmp_path", "b'data'", "1.5"])

    def _failure(self, func: FuncInfo) -> tuple[str, str]:
        p = self.rng.choice([q.lstrip("*") for q in func.param_names])
        return self.rng.choice([
            ("TypeError", f"{func.name}() got an unexpected keyword argument '{p}_value'"),
            ("ValueError", f"invalid value for {p}: None"),
            ("KeyError", f"'{p}'"),
            ("AttributeError", f"'NoneType' object has no attribute '{p}'"),
            ("AssertionError", f"assert {p} is not None"),
        ])

    def edit(self, budget: int, subtask: str | None, sf: SourceFile | None = None, func: FuncInfo | None = None) -> bool:
        """An edit of a real function in another file (or ``func``): a guard on a parameter, as fenced code."""
        sf = sf or self.distractor(need_functions=True)
        func = func or self.rng.choice(sf.functions)
        indent = len(sf.lines[func.lineno - 1]) - len(sf.lines[func.lineno - 1].lstrip())
        at = func.stmt_lines[0]
        body_indent = " " * (len(sf.lines[at - 1]) - len(sf.lines[at - 1].lstrip()))
        p = next((q for q in func.param_names if not q.startswith("*")), func.param_names[0].lstrip("*"))
        guard = [f"{body_indent}if {p} is None:", f'{body_indent}    raise ValueError("{p} is required")']
        end = min(func.end_lineno, max(at, func.lineno + self.rng.randint(8, 30)))
        while True:
            edited = [*sf.lines[func.lineno - 1:at - 1], *guard, *sf.lines[at - 1:end]]
            dedented = "\n".join(ln[indent:] if ln[:indent].isspace() else ln for ln in edited)
            code = f"edit {sf.rel}\n```python\n{dedented}\n```"
            result = f"Edited {sf.rel}: lines {func.lineno}-{end} replaced (+2 -0)."
            if self.cost([code, result]) <= budget:
                break
            if end - 4 < at:
                return False
            end -= 4
        self.add("assistant", "code", code, subtask)
        self.add("tool", "tool_output", result, subtask)
        return True

    def fill(self, budget: int, subtask: str | None, failing: bool = True) -> None:
        """Add views, test runs and edits of other files until ``budget`` tokens are used."""
        goal = self.tokens + budget
        misses = 0
        while goal - self.tokens > 120 and misses < 6:
            left = goal - self.tokens
            pick = self.rng.random()
            if pick < 0.5:
                ok = self.view_distractor(left, subtask)
            elif pick < 0.75:
                ok = self.test_run(left, subtask, fail=failing and self.rng.random() < 0.7)
            else:
                ok = self.edit(left, subtask)
            misses = 0 if ok else misses + 1


# --- families ---------------------------------------------------------------------------------


def _issue(rng: random.Random, func: FuncInfo, sf: SourceFile, other: str) -> str:
    mod = Path(sf.rel).stem
    return rng.choice([
        f"Callers of `{func.name}` in `{sf.rel}` need a variant that logs its arguments and timing. "
        f"Add a wrapper next to it that keeps the exact same signature, and fix the failing tests in "
        f"`tests/test_{Path(other).stem}.py` while you are there.",
        f"We want to deprecate direct calls to `{mod}.{func.name}`. Please add a thin wrapper with the same "
        f"signature that emits a DeprecationWarning and delegates. CI is also red on `{other}`; fix that first.",
        f"`{func.name}` (in `{sf.rel}`) is hard to mock in tests. Add a wrapper with an identical signature "
        f"that we can patch, then make the test suite pass again (a failure shows up around `{other}`).",
    ])


def _plan(steps: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1))


def _probe_prompt(func: FuncInfo, lead: str) -> str:
    return f"{lead}\n```python\ndef {func.name}("


def _target_file(w: Writer) -> tuple[SourceFile, FuncInfo]:
    sf = w.pool.take(need_functions=True)
    func = w.rng.choice(sf.functions)
    w.files.append(sf.rel)
    w.avoid = (func.name,)
    return sf, func


def _target_view(w: Writer, sf: SourceFile, func: FuncInfo, budget: int, subtask: str) -> bool:
    start = max(1, func.lineno - w.rng.randint(3, 25))
    return w.view(sf, start, budget, subtask, at_least=func.lineno - start + 4)


def _recall_meta(sf: SourceFile, func: FuncInfo) -> dict[str, Any]:
    return {"source": str(sf.path), "path": sf.rel, "function": func.name, "line": func.lineno}


def _fix_step(w: Writer, sf: SourceFile, budget: int, subtask: str) -> bool:
    """A debugging step on another file: failing run, view of the failing function, edit, more context.

    False (and nothing added) when not even the failing test run fits ``budget``.
    """
    goal = w.tokens + budget
    func = w.rng.choice(sf.functions)
    if not w.test_run(goal - w.tokens, subtask, fail=True, sf=sf, func=func):
        return False
    w.add("assistant", "text", f"The failure is inside `{func.name}`; let me read it.", subtask)
    w.view(sf, max(1, func.lineno - w.rng.randint(2, 10)), min(goal - w.tokens, w.rng.randint(250, 600)), subtask)
    w.edit(goal - w.tokens, subtask, sf=sf, func=func)
    w.fill(goal - w.tokens, subtask)
    return True


def build_signature_recall(w: Writer, lo: int, hi: int) -> tuple[list[Segment], list[str], Probe, dict] | None:
    """An agent session whose finished first subtask viewed the target function."""
    sf, func = _target_file(w)
    aim = w.rng.randint(lo, hi)
    other = w.distractor(need_functions=True)
    w.add("system", "text", SYSTEM_PROMPT)
    w.add("user", "text", _issue(w.rng, func, sf, other.rel))
    w.add("assistant", "plan", _plan([
        f"Read `{sf.rel}` and find `{func.name}`.",
        f"Reproduce the failing tests for `{other.rel}` and fix them.",
        f"Add the wrapper for `{func.name}` and run the whole suite.",
    ]))
    if not _target_view(w, sf, func, min(int(aim * 0.3), 800), "s1"):
        return None
    w.add("assistant", "text", f"`{func.name}` is defined at line {func.lineno} of `{sf.rel}`. Step 1 done.", "s1")
    w.add("assistant", "text", "Step 2: run the tests to see what fails.", "s2")
    if not _fix_step(w, other, aim - w.tokens, "s2"):
        return None
    probe = Probe(prompt=_probe_prompt(func, "I'll add a wrapper with the same signature:"), target=func.params)
    return w.segments, ["s1"], probe, _recall_meta(sf, func)


def build_session(w: Writer, lo: int, hi: int) -> tuple[list[Segment], list[str], Probe, dict] | None:
    """A long session, several subtasks committed in turn; the probe recalls a signature from the first."""
    sf, func = _target_file(w)
    aim = w.rng.randint(lo, hi)
    n_steps = w.rng.randint(4, 6)
    others = [w.distractor(need_functions=True) for _ in range(n_steps - 2)]
    steps = [f"Read `{sf.rel}` around `{func.name}` and note its interface."]
    steps += [f"Fix the failing tests for `{o.rel}`." for o in others]
    steps.append(f"Add the wrapper for `{func.name}` and run the whole suite.")
    w.add("system", "text", SYSTEM_PROMPT)
    w.add("user", "text", _issue(w.rng, func, sf, others[0].rel))
    w.add("assistant", "plan", _plan(steps))
    if not _target_view(w, sf, func, w.rng.randint(500, 900), "s1"):
        return None
    w.add("assistant", "text", f"`{func.name}` is at line {func.lineno} of `{sf.rel}`. Step 1 done.", "s1")
    commits = ["s1"]
    per_step = (aim - w.tokens) // (n_steps - 1)
    for k, other in enumerate(others, start=2):
        sid = f"s{k}"
        w.add("assistant", "text", f"Step {k}: {steps[k - 1]}", sid)
        if not _fix_step(w, other, per_step - 200, sid):
            return None
        w.test_run(10_000, sid, fail=False, sf=other)
        w.add("assistant", "text", f"Tests for `{other.rel}` pass. Step {k} done.", sid)
        commits.append(sid)
    sid = f"s{n_steps}"
    w.add("assistant", "text", f"Step {n_steps}: {steps[-1]} First, the callers.", sid)
    w.fill(aim - w.tokens, sid, failing=False)
    lead = f"Step {n_steps}: the wrapper keeps the signature of `{func.name}` from step 1:"
    probe = Probe(prompt=_probe_prompt(func, lead), target=func.params)
    return w.segments, commits, probe, _recall_meta(sf, func)


def _definitions(sf: SourceFile) -> dict[str, int]:
    """Module-level functions, classes, constants and class methods/attributes: name -> first line."""
    defs: dict[str, int] = {}

    def note(name: str, line: int) -> None:
        if len(name) >= 4 and not name.startswith("__") and name not in _BUILTINS:
            defs.setdefault(name, line)

    for node in sf.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            note(node.name, node.lineno)
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    note(sub.name, sub.lineno)
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        note(n.id, node.lineno)
    return defs


def _line_statements(sf: SourceFile) -> dict[int, set[str]]:
    """Lines that start a one-line statement (or a one-line compound header) -> identifiers used there."""
    out: dict[int, set[str]] = {}
    for node in ast.walk(sf.tree):
        if not isinstance(node, ast.stmt) or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        body = getattr(node, "body", None)
        if body:
            if body[0].lineno <= node.lineno or not sf.lines[node.lineno - 1].rstrip().endswith(":"):
                continue
        elif node.end_lineno != node.lineno:
            continue
        out.setdefault(node.lineno, set())
    for node in ast.walk(sf.tree):
        line = getattr(node, "lineno", None)
        if line in out and getattr(node, "end_lineno", None) == line:
            if isinstance(node, ast.Name):
                out[line].add(node.id)
            elif isinstance(node, ast.Attribute):
                out[line].add(node.attr)
    return out


_SIGNATURE_LINE = re.compile(r"\s*(?:async\s+def|def|class|@)\b|\s*@")


def build_next_line(w: Writer, lo: int, hi: int, raw: bool = False) -> tuple[list[Segment], list[str], Probe, dict] | None:
    """A long file view; the target is the next line, using an identifier from the file's first quarter.

    ``raw``: the file is a raw ``cat`` dump (no line numbers) and the 20 lines the probe repeats
    hold no signature-looking line (def, class, decorator), so nothing near the probe points back.
    """
    sf = w.pool.take()
    w.files.append(sf.rel)
    costs = w.line_costs(sf, raw=raw)
    aim_lo, aim_hi = lo, w.rng.randint((lo + hi) // 2, hi)
    user = w.rng.choice([
        f"`{sf.rel}` was cut off during a bad merge. Please continue the code where the view ends.",
        f"Finish the code at the end of `{sf.rel}`; keep the existing style and names.",
        f"Help me continue writing `{sf.rel}` from where it stops.",
    ])
    head = [SYSTEM_PROMPT, user, _plan([f"View `{sf.rel}`.", "Continue the code after the last line shown."])]
    overhead = w.cost(head) + w.cost([f"view {sf.rel} 1-9999"]) + w.count("\n") + 4
    cum = [0]
    for c in costs:
        cum.append(cum[-1] + c)
    candidates = [t for t in range(30, len(sf.lines) + 1) if aim_lo <= overhead + cum[t - 1] <= aim_hi]
    if not candidates:
        return None
    stmts = _line_statements(sf)
    defs = _definitions(sf)
    words = [set(re.findall(r"[A-Za-z_]\w*", ln)) for ln in sf.lines]
    best: tuple[int, int, str, int] | None = None
    for t in candidates:
        target = sf.lines[t - 1]
        used = stmts.get(t)
        if not used or len(target.strip()) < 12 or target.strip().startswith(("#", '"', "'")):
            continue
        if any(ln.strip() == target.strip() for ln in sf.lines[: t - 1]):
            continue
        if raw and any(_SIGNATURE_LINE.match(ln) for ln in sf.lines[max(0, t - 21): t]):
            continue
        quarter = (t - 1) // 4
        prompt_words = set().union(*words[max(0, t - 21): t - 1])
        for ident in sorted(used):
            line = defs.get(ident)
            if line is None or line > quarter or ident in prompt_words:
                continue
            last_use = max(i for i in range(t - 1) if ident in words[i]) + 1
            if best is None or last_use < best[0]:
                best = (last_use, t, ident, line)
    if best is None:
        return None
    last_use, t, ident, defined = best
    w.add("system", "text", head[0])
    w.add("user", "text", head[1])
    w.add("assistant", "plan", head[2])
    if raw:
        w.add("assistant", "tool_call", f"bash sed -n '1,{t - 1}p' {sf.rel}", "s1")
        w.add("tool", "tool_output", "\n".join(sf.lines[: t - 1]), "s1")
    else:
        w.add("assistant", "tool_call", view_call(sf, 1, t - 1), "s1")
        w.add("tool", "tool_output", view_text(sf, 1, t - 1), "s1")
    tail = "\n".join(sf.lines[max(0, t - 21): t - 1])
    probe = Probe(prompt=f"Continuing `{sf.rel}` from line {max(1, t - 20)}:\n```python\n{tail}\n",
                  target=sf.lines[t - 1])
    meta = {"source": str(sf.path), "path": sf.rel, "line": t, "identifier": ident,
            "defined_line": defined, "last_use_line": last_use}
    return w.segments, [], probe, meta


def build_next_line_raw(w: Writer, lo: int, hi: int) -> tuple[list[Segment], list[str], Probe, dict] | None:
    """``next_line`` over a raw ``cat`` dump with no signature near the probe."""
    return build_next_line(w, lo, hi, raw=True)


_BUILDERS: dict[str, Callable[[Writer, int, int], tuple[list[Segment], list[str], Probe, dict] | None]] = {
    "signature_recall": build_signature_recall,
    "next_line": build_next_line,
    "session": build_session,
    "next_line_raw": build_next_line_raw,
}


def parse_tokens(text: str) -> tuple[int, int]:
    """``LO-HI`` (``4000-5500``) as a context-size range in tokens; InputError when malformed."""
    m = re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", text)
    if not m or not 500 <= int(m.group(1)) < int(m.group(2)):
        raise InputError(f"--tokens wants LO-HI with 500 <= LO < HI, got {text!r}")
    return int(m.group(1)), int(m.group(2))


def build_family(family: str, seed: int, n: int, count: TokenCounter, roots: Sequence[Path] | None = None,
                 tokens: tuple[int, int] | None = None) -> list[BuiltTask]:
    """``n`` tasks of one family; the same seed gives the same tasks (on the same machine). ``tokens``: the
    accepted context size (default: the family's ``TOKEN_RANGES``); the builder aims inside it."""
    if family not in _BUILDERS:
        raise InputError(f"unknown task family {family!r} (known: {', '.join(FAMILIES)})")
    pool = SourcePool(f"{seed}:{family}:files", roots)
    rng = random.Random(f"{seed}:{family}")
    lo, hi = tokens or TOKEN_RANGES[family]
    margin = (hi - lo) // 8
    aim_lo, aim_hi = (lo + margin, hi - margin) if tokens else _AIMS[family]
    tasks: list[BuiltTask] = []
    attempts = 0
    while len(tasks) < n:
        attempts += 1
        if attempts > _ATTEMPTS + 20 * n:
            raise InputError(f"could not build {n} {family} tasks from the source files here (built {len(tasks)})")
        w = Writer(random.Random(rng.getrandbits(64)), count, pool)
        built = _BUILDERS[family](w, aim_lo, aim_hi)
        if built is None:
            continue
        segments, commits, probe, meta = built
        n_tokens = count.segments(segments)
        if not lo <= n_tokens <= hi:
            continue
        meta.update({"seed": seed, "files": w.files, "builder": "codeagent.bench.build"})
        tasks.append(BuiltTask(
            id=f"{_ID_PREFIX[family]}-{seed}-{len(tasks):04d}", family=family, segments=segments,
            commits=commits, n_context_tokens=n_tokens, probe=probe, meta=meta,
        ))
    return tasks


def build_tasks(seed: int, n_per_family: int, tokenizer: Any, families: Sequence[str] = FAMILIES,
                roots: Sequence[Path] | None = None, tokens: tuple[int, int] | None = None) -> list[BuiltTask]:
    """``n_per_family`` tasks of each family, deterministic for a seed.

    ``tokenizer`` is a HF tokenizer or a ``str -> int`` token counter; ``roots`` overrides where the
    source files come from (default: this interpreter's stdlib and site-packages); ``tokens`` overrides
    every family's context size (``TOKEN_RANGES``).
    """
    count = TokenCounter(tokenizer)
    return [t for fam in families for t in build_family(fam, seed, n_per_family, count, roots, tokens)]


def write_tasks(path: str | Path, tasks: Sequence[Task]) -> Path:
    """Write built tasks (with their ``meta``) as a task JSONL file (docs/formats.md)."""
    return dump_tasks(tasks, path)


def summary_line(tasks: Sequence[Task], path: Path) -> str:
    """One line: how many tasks per family and their token ranges."""
    parts = []
    for fam in dict.fromkeys(t.family for t in tasks):
        sizes = [t.n_context_tokens or 0 for t in tasks if t.family == fam]
        parts.append(f"{fam} {len(sizes)} ({min(sizes)}-{max(sizes)} tokens)")
    return f"wrote {len(tasks)} tasks to {path}: " + ", ".join(parts)


def build_command(out: Path, seed: int, n: int, families: list[str], styles: Sequence[str] = ("own",),
                  tokens: tuple[int, int] | None = None) -> Path:
    """What ``codeagent bench build`` runs: build with the embedded tokenizer, render each task in
    every style (``own`` alone keeps plain ids and no style), write, print a summary. ``tokens``: the
    context size of the own-style rendering (other styles are longer or shorter by their wording)."""
    from codeagent.bench.styles import STYLES, restyle

    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        raise InputError(f"unknown task family {unknown[0]!r} (known: {', '.join(FAMILIES)})")
    bad = [s for s in styles if s not in STYLES]
    if bad or not styles:
        raise InputError(f"unknown style {bad[0]!r} (known: {', '.join(STYLES)})" if bad else "no style given")
    if n < 1:
        raise InputError(f"--n must be at least 1, got {n}")
    tokenizer = load_default_tokenizer()
    tasks = build_tasks(seed, n, tokenizer, families, tokens=tokens)
    if list(styles) != ["own"]:
        count = TokenCounter(tokenizer)
        tasks = [restyle(t, st, count.segments) for t in tasks for st in styles]
    path = write_tasks(out, tasks)
    print(summary_line(tasks, path))
    return path
