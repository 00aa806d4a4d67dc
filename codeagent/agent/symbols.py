"""A tree-sitter symbol index of a repository: definitions with signatures, ranked by an issue's identifiers.

Each source file is parsed once (again only when its content changes); the index lists functions,
classes and methods with their qualified names (``Class.method``), line ranges, signatures and the
identifiers their bodies use. :meth:`SymbolIndex.rank` scores definitions by the identifiers of the
issue and of the failing tests' traceback frames, spreading part of a score to the definitions a
scored one calls (a bug in a helper of the function the issue names), as Aider's repo map does.
"""

from __future__ import annotations

import importlib
import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tree_sitter as ts

from codeagent.kvcache.languages import language_for_path
from codeagent.tools import beneath
from codeagent.tools.base import SKIP_DIRS

GRAMMARS = {"python": ("tree_sitter_python", "language"), "javascript": ("tree_sitter_javascript", "language"),
            "typescript": ("tree_sitter_typescript", "language_typescript"),
            "tsx": ("tree_sitter_typescript", "language_tsx"), "go": ("tree_sitter_go", "language"),
            "java": ("tree_sitter_java", "language"), "rust": ("tree_sitter_rust", "language")}
"""Grammar wheel and entry point per language."""

DEFINITIONS = {
    "python": {"function_definition": "def", "class_definition": "class"},
    "javascript": {"function_declaration": "function", "class_declaration": "class", "method_definition": "method",
                   "generator_function_declaration": "function"},
    "go": {"function_declaration": "func", "method_declaration": "method", "type_declaration": "type"},
    "java": {"method_declaration": "method", "class_declaration": "class", "constructor_declaration": "method",
             "interface_declaration": "interface"},
    "rust": {"function_item": "fn", "impl_item": "impl", "struct_item": "struct", "enum_item": "enum"},
}
DEFINITIONS["typescript"] = DEFINITIONS["tsx"] = {**DEFINITIONS["javascript"], "interface_declaration": "interface"}
"""Node types that define a symbol, and how the map shows them."""

ARROW_VALUES = frozenset({"arrow_function", "function", "function_expression"})
MAX_FILE_BYTES = 400_000
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOISE = frozenset("""the a an and or not is are be to of in on for with by it this that as at from if else when
then return returns should would will can does do fails fail error test tests bug fix issue function method
class file true false none null self def import value values expected actual but get set new""".split())


@lru_cache(maxsize=None)
def parser_for(language: str) -> ts.Parser | None:
    """A parser for ``language``, or None when its grammar wheel is not installed."""
    spec = GRAMMARS.get(language)
    if spec is None:
        return None
    try:
        module = importlib.import_module(spec[0])
    except ImportError:
        return None
    return ts.Parser(ts.Language(getattr(module, spec[1])()))


@dataclass
class Symbol:
    """One definition in one file."""

    path: str
    name: str  # qualified: Class.method
    kind: str  # def, class, method, function, ...
    start_line: int  # 1-based, decorators included
    end_line: int
    signature: str
    uses: frozenset[str] = field(default_factory=frozenset)
    is_test: bool = False

    @property
    def short(self) -> str:
        """The last part of the qualified name."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def ref(self) -> str:
        """``path::name``, as ``view`` takes it."""
        return f"{self.path}::{self.name}"


def is_test_path(path: str) -> bool:
    """Whether a file holds tests (by the usual names and folders)."""
    p = Path(path)
    name = p.name
    return (name.startswith("test_") or name.endswith(("_test.py", "_test.go", ".test.js", ".test.ts", ".spec.js",
                                                       ".spec.ts", "Test.java"))
            or name == "conftest.py" or bool({"tests", "test", "__tests__"} & set(p.parts[:-1])))


def _name_of(node: ts.Node, src: bytes) -> str | None:
    named = node.child_by_field_name("name")
    if named is None and node.type == "impl_item":
        named = node.child_by_field_name("type")
    if named is None and node.type == "type_declaration":
        spec = next((c for c in node.named_children if c.type == "type_spec"), None)
        named = spec.child_by_field_name("name") if spec is not None else None
    return src[named.start_byte:named.end_byte].decode("utf-8", "replace") if named is not None else None


def definition_nodes(tree: ts.Tree, src: bytes, language: str) -> list[tuple[str, str, ts.Node]]:
    """``(qualified name, kind, node)`` for every definition; ``node`` includes decorators (Python) and
    ``const f = () => ...`` declarations (JavaScript/TypeScript)."""
    kinds = DEFINITIONS.get(language, {})
    out: list[tuple[str, str, ts.Node]] = []

    def visit(node: ts.Node, scope: list[str]) -> None:
        for child in node.named_children:
            target, kind, name = child, kinds.get(child.type), None
            if child.type == "decorated_definition":
                inner = child.child_by_field_name("definition")
                if inner is not None and inner.type in kinds:
                    kind, name = kinds[inner.type], _name_of(inner, src)
                    if name:
                        out.append((".".join([*scope, name]), kind, child))
                        visit(inner, [*scope, name])
                    continue
            if child.type in ("lexical_declaration", "variable_declaration") and language in ("javascript",
                                                                                               "typescript", "tsx"):
                for decl in child.named_children:
                    value = decl.child_by_field_name("value")
                    if decl.type == "variable_declarator" and value is not None and value.type in ARROW_VALUES:
                        name = _name_of(decl, src)
                        if name:
                            out.append((".".join([*scope, name]), "function", child))
                continue
            if child.type == "export_statement":
                visit(child, scope)
                continue
            if kind is not None:
                name = _name_of(target, src)
                if name:
                    out.append((".".join([*scope, name]), kind, target))
                    visit(target, [*scope, name])
                    continue
            if child.type in ("class_body", "block", "declaration_list", "body", "class_declaration"):
                visit(child, scope)

    visit(tree.root_node, [])
    return out


def _signature(text: str, language: str) -> str:
    """The definition's head: up to the colon/brace that opens its body, on one line."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("@")]
    head = ""
    for line in lines[:6]:
        head += (" " if head else "") + line.strip()
        if language == "python" and head.rstrip().endswith(":"):
            break
        if language != "python" and ("{" in line or "=>" in line):
            break
    head = head.split("{")[0].rstrip() if language != "python" else head
    return head[:160]


def name_parts(name: str) -> list[str]:
    """Lower-case parts of a snake_case or camelCase name, three letters or more."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ")
    return [p.lower() for p in spaced.split() if len(p) >= 3]


def identifiers(text: str) -> list[str]:
    """Code-like words of ``text`` (identifiers, dotted names split), without common English words."""
    words = []
    for w in _WORD.findall(text):
        if len(w) > 2 and w.lower() not in _NOISE:
            words.append(w)
    return words


class SymbolIndex:
    """Definitions of every source file under ``root``; :meth:`refresh` re-parses only changed files."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.files: dict[str, tuple[float, int, list[Symbol]]] = {}
        self.refresh()

    def _source_files(self) -> list[str]:
        out = []
        for dirpath, dirs, files in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(dirpath, f), self.root)
                if language_for_path(rel) in GRAMMARS:
                    out.append(rel)
        return out

    def refresh(self) -> None:
        """Parse new and changed files, forget deleted ones."""
        seen = set()
        for rel in self._source_files():
            seen.add(rel)
            st = os.lstat(self.root / rel)
            if not stat.S_ISREG(st.st_mode):
                continue
            old = self.files.get(rel)
            if old is not None and old[0] == st.st_mtime and old[1] == st.st_size:
                continue
            self.files[rel] = (st.st_mtime, st.st_size, self._parse(rel) if st.st_size <= MAX_FILE_BYTES else [])
        for rel in set(self.files) - seen:
            del self.files[rel]

    def _parse(self, rel: str) -> list[Symbol]:
        language = language_for_path(rel) or ""
        parser = parser_for(language)
        if parser is None:
            return []
        try:
            src = beneath.read_bytes(self.root, rel, MAX_FILE_BYTES)
        except (OSError, beneath.PathRefused):
            return []
        tree = parser.parse(src)
        test = is_test_path(rel)
        out = []
        for name, kind, node in definition_nodes(tree, src, language):
            text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
            out.append(Symbol(path=rel, name=name, kind=kind, start_line=node.start_point[0] + 1,
                              end_line=node.end_point[0] + 1, signature=_signature(text, language),
                              uses=frozenset(_WORD.findall(text)), is_test=test))
        return out

    @property
    def symbols(self) -> list[Symbol]:
        """Every definition, file by file."""
        return [s for _, _, syms in self.files.values() for s in syms]

    def find(self, path: str, name: str) -> Symbol | None:
        """The definition ``name`` (qualified, or a unique last part) in ``path``."""
        syms = self.files.get(path, (0, 0, []))[2]
        exact = [s for s in syms if s.name == name]
        if exact:
            return exact[0]
        short = [s for s in syms if s.short == name]
        return short[0] if len(short) == 1 else None

    def source(self, sym: Symbol) -> str:
        """The definition's current text, with 1-based line numbers."""
        lines = (beneath.read_text_if_file(self.root, sym.path) or "").splitlines()
        return "\n".join(f"{n:>4} {lines[n - 1]}" for n in range(sym.start_line, min(sym.end_line, len(lines)) + 1))

    def rank(self, issue: str, frames: list[tuple[str, str]] = (), tests: list[Symbol] = ()) -> list[tuple[float, Symbol]]:
        """Non-test definitions by relevance, best first, each with its score (0 = nothing points at it).

        ``frames`` are (path, function) pairs from tracebacks; ``tests`` the failing test definitions,
        whose bodies' identifiers count too.
        """
        words = identifiers(issue)
        named = set(words)
        lowered = {w.lower() for w in words} | {p for w in words for p in name_parts(w)}
        backticked = set(identifiers(" ".join(re.findall(r"`([^`]+)`", issue))))
        frame_funcs = {f for p, f in frames if not is_test_path(p)}
        frame_files = {p for p, _ in frames}
        used_by_tests = set().union(*(t.uses for t in tests)) if tests else set()
        paths_named = {p for p in self.files if p in issue or Path(p).name in issue}
        scores: dict[str, float] = {}
        cands = [s for s in self.symbols if not s.is_test]
        for s in cands:
            score = 0.0
            if s.short in frame_funcs:
                score += 5
            if s.short in backticked:
                score += 4
            elif s.short in named or s.name in issue:
                score += 3
            elif not score:  # parts of the name (circle_area, parseDuration) the text uses
                parts = name_parts(s.short)
                hits = sum(p in lowered for p in parts)
                if len(parts) > 1 and hits:
                    score += min(2.0, 0.75 * hits)
            if s.path in paths_named:
                score += 3 if score else 1.5  # the issue names the definition and its file
            if any(s.path.endswith(f) or f.endswith(s.path) for f in frame_files):
                score += 1
            if s.short in used_by_tests:
                score += 1
            if s.kind == "class" and score:
                score -= 0.5  # prefer the method or function over its whole class
            scores[s.ref] = score
        by_short: dict[str, list[Symbol]] = {}
        for s in cands:
            by_short.setdefault(s.short, []).append(s)
        spread: dict[str, float] = {}
        for s in cands:  # a scored definition lends part of its score to what it calls
            if scores[s.ref] <= 0:
                continue
            for callee_name in s.uses:
                for callee in by_short.get(callee_name, []):
                    if callee.ref != s.ref and callee.kind != "class":
                        spread[callee.ref] = max(spread.get(callee.ref, 0.0), 0.4 * scores[s.ref])
        ranked = [(scores[s.ref] + spread.get(s.ref, 0.0), s) for s in cands]
        ranked.sort(key=lambda x: (-x[0], x[1].path, x[1].start_line))
        return ranked

    def repo_map(self, ranked: list[tuple[float, Symbol]], max_files: int = 6, max_lines: int = 24) -> str:
        """Files with their definitions' signatures, most relevant files first, cut to ``max_lines`` lines."""
        order: list[str] = []
        for _, s in ranked:
            if s.path not in order:
                order.append(s.path)
        lines: list[str] = []
        for path in order[:max_files]:
            lines.append(f"{path}:")
            for s in self.files[path][2]:
                indent = "  " * (s.name.count(".") + 1)
                lines.append(f"{indent}{s.signature}")
        if len(lines) > max_lines:
            lines = lines[:max_lines] + ["  ..."]
        return "\n".join(lines)


_PY_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
_PYTEST_FRAME = re.compile(r"^([\w./-]+\.py):\d+: in (\w+)", re.M)
_JS_FRAME = re.compile(r"at (?:[\w.<>]+\.)?([\w$]+) \((?:file://)?([^():]+):\d+:\d+\)")
_GO_FRAME = re.compile(r"^\s*([\w./-]+\.go):\d+:", re.M)


def traceback_frames(text: str, root: Path | None = None) -> list[tuple[str, str]]:
    """(path, function) pairs of traceback frames in test output (Python, pytest --tb=short, node, go)."""
    frames: list[tuple[str, str]] = []
    for m in _PY_FRAME.finditer(text):
        frames.append((m.group(1), m.group(2)))
    for m in _PYTEST_FRAME.finditer(text):
        frames.append((m.group(1), m.group(2)))
    for m in _JS_FRAME.finditer(text):
        frames.append((m.group(2), m.group(1)))
    for m in _GO_FRAME.finditer(text):
        frames.append((m.group(1), ""))
    if root is not None:
        base = str(Path(root).resolve()) + "/"
        frames = [(p[len(base):] if p.startswith(base) else p, f) for p, f in frames]
    return [(p, f) for p, f in frames if "site-packages" not in p and not p.startswith(("node:", "/usr/"))]
