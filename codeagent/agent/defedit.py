"""Structure-aware edits: the complete new version of a definition replaces its tree-sitter node.

The model writes whole functions, methods or classes (what a small coder model writes reliably);
each definition in its code replaces the definition of the same name in the file: the node's
indentation is applied, decorators are kept when the new code has none, new helper definitions
are inserted before the first replaced one, new imports go after the file's imports, and the
result must parse without errors before anything is written.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import tree_sitter as ts

from codeagent.agent.symbols import definition_nodes, parser_for
from codeagent.kvcache.languages import language_for_path


class EditError(Exception):
    """The new code cannot be applied; the message says why in one line."""


@dataclass
class Applied:
    """What a replacement changed."""

    path: str
    replaced: list[str]
    added: list[str]
    first_line: int
    last_line: int


IMPORT_NODES = {"python": ("import_statement", "import_from_statement", "future_import_statement"),
                "javascript": ("import_statement",), "typescript": ("import_statement",), "tsx": ("import_statement",),
                "go": ("import_declaration",), "java": ("import_declaration",), "rust": ("use_declaration",)}


def _top_definitions(code: str, language: str) -> tuple[list[tuple[str, str, str, bool]], list[str]]:
    """Top-level definitions of ``code`` as (name, kind, text, has_decorators), and its import lines."""
    parser = parser_for(language)
    if parser is None:
        raise EditError(f"no parser for {language}")
    src = code.encode()
    tree = parser.parse(src)
    defs = []
    for name, kind, node in definition_nodes(tree, src, language):
        if "." in name and any(name.startswith(d[0] + ".") for d in defs):
            continue  # a method inside a class the code defines whole
        text = src[node.start_byte:node.end_byte].decode()
        defs.append((name, kind, text, node.type == "decorated_definition"))
    imports = [src[n.start_byte:n.end_byte].decode() for n in tree.root_node.named_children
               if n.type in IMPORT_NODES.get(language, ())]
    if tree.root_node.has_error:
        line = _error_line(tree.root_node)
        raise EditError(f"the new code does not parse (syntax error near its line {line})")
    return defs, imports


_MEMBER_NOISE = {"comment", "pass_statement", "empty_statement"}


def _split_partial_classes(defs: list[tuple[str, str, str, bool]], code: str, language: str,
                           existing: list[tuple[str, str, ts.Node]],
                           methods_only: bool = False) -> list[tuple[str, str, str, bool]]:
    """A class written with only some of the methods the file's class has (a small model showing a fixed method
    in its class) stands for those methods: each replaces its namesake and the class's other members stay. A class
    whose body holds anything but methods (fields, assignments) is a whole new version and is kept as it is,
    unless ``methods_only``: then any class of the file stands for its methods alone."""
    if not any(kind == "class" for _, kind, _, _ in defs):
        return defs
    src = code.encode()
    nodes = definition_nodes(parser_for(language).parse(src), src, language)
    out: list[tuple[str, str, str, bool]] = []
    for name, kind, text, decorated in defs:
        target = _match(existing, name, []) if kind == "class" else None
        cls = next((node for n, _, node in nodes if n == name), None)
        methods = [(n, k, node) for n, k, node in nodes if n.startswith(name + ".") and "." not in n[len(name) + 1:]]
        body = _inner(cls).child_by_field_name("body") if cls is not None else None
        if target is None or not methods or body is None:
            out.append((name, kind, text, decorated))
            continue
        ids = {node.id for _, _, node in methods}
        only_methods = all(m.id in ids or m.type in _MEMBER_NOISE or _is_docstring(m) for m in body.named_children)
        old = {n.rsplit(".", 1)[-1] for n, _, _ in existing if n.startswith(target[0] + ".")
               and "." not in n[len(target[0]) + 1:]}
        new = {n.rsplit(".", 1)[-1] for n, _, _ in methods}
        if not methods_only and (not only_methods or old <= new):
            out.append((name, kind, text, decorated))
            continue
        for n, k, node in methods:
            line_start = src.rfind(b"\n", 0, node.start_byte) + 1  # with its indentation, so dedent sees it
            out.append((f"{target[0]}.{n.rsplit('.', 1)[-1]}", k, src[line_start:node.end_byte].decode(),
                        node.type == "decorated_definition"))
    return out


def _is_docstring(node: ts.Node) -> bool:
    return node.type == "expression_statement" and node.named_child_count == 1 and node.named_children[0].type == "string"


def _error_line(node: ts.Node) -> int:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n.start_point[0] + 1
        stack.extend(reversed(n.children))
    return node.start_point[0] + 1


def _indent(text: str, indent: str) -> str:
    """``text`` dedented, then every line but the first indented by ``indent`` (the first sits at the node)."""
    lines = textwrap.dedent(text).splitlines()
    return "\n".join([lines[0]] + [(indent + ln) if ln.strip() else "" for ln in lines[1:]])


def _inner(node: ts.Node) -> ts.Node:
    """The definition inside a decorated definition."""
    inner = node.child_by_field_name("definition")
    return inner if inner is not None else node


def replace_definitions(root: Path, path: str, code: str, prefer: list[str] = ()) -> Applied:
    """Apply ``code`` to the file ``path`` under ``root`` (plain file access: for trusted trees and tests)."""
    file = Path(root) / path
    if not file.is_file():
        raise EditError(f"no such file: {path}")
    new_src, done = replace_in_source(file.read_bytes(), path, code, prefer)
    file.write_bytes(new_src)
    return done


def replace_in_source(src: bytes, path: str, code: str, prefer: list[str] = (),
                      methods_only: bool = False) -> tuple[bytes, Applied]:
    """``src`` (the content of ``path``) with ``code``'s definitions applied; :class:`EditError` if it cannot be.
    ``methods_only``: a class of the file written anew changes only its methods (its other members stay)."""
    language = language_for_path(path)
    if language is None or parser_for(language) is None:
        raise EditError(f"cannot parse {path}: no grammar for its language")
    code = textwrap.dedent(code.strip("\n"))
    defs, imports = _top_definitions(code, language)
    if not defs:
        raise EditError("the code holds no complete function, method or class definition")
    parser = parser_for(language)
    tree = parser.parse(src)
    existing = definition_nodes(tree, src, language)
    defs = _split_partial_classes(defs, code, language, existing, methods_only)
    edits: list[tuple[int, int, str]] = []
    replaced, added, pending = [], [], []
    first_target: ts.Node | None = None
    for name, _kind, text, decorated in defs:
        target = _match(existing, name, prefer)
        if target is None:
            pending.append((name, text))
            continue
        tname, node = target
        if node.type == "decorated_definition" and not decorated:
            node = _inner(node)
        line_start = src.rfind(b"\n", 0, node.start_byte) + 1
        indent = src[line_start:node.start_byte].decode()
        if indent.strip():  # something precedes the node on its line (export, const): keep it
            indent = re.match(r"\s*", indent).group(0)
        edits.append((node.start_byte, node.end_byte, _indent(text, indent)))
        replaced.append(tname)
        if first_target is None or node.start_byte < first_target.start_byte:
            first_target = node
    if not replaced:
        names = ", ".join(d[0] for d in defs)
        raise EditError(f"{path} has no definition named {names}; rewrite one of the definitions shown")
    for name, text in pending:  # new helpers go right before the first replaced definition
        line_start = src.rfind(b"\n", 0, first_target.start_byte) + 1
        indent = src[line_start:first_target.start_byte].decode()
        indent = re.match(r"\s*", indent).group(0)
        gap = "\n\n\n" if not indent and language == "python" else "\n\n"
        edits.append((line_start, line_start, indent + _indent(text, indent) + gap))
        added.append(name)
    new_src = src
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        new_src = new_src[:start] + text.encode() + new_src[end:]
    new_src = _add_imports(new_src, imports, language, parser)
    new_tree = parser.parse(new_src)
    if new_tree.root_node.has_error:
        raise EditError(f"the result would not parse ({path} near line {_error_line(new_tree.root_node)}); "
                        "write the whole definition with consistent indentation")
    first = min(e[0] for e in edits)
    first_line = new_src.count(b"\n", 0, first) + 1
    total = sum(t.count("\n") for _, _, t in edits)
    return new_src, Applied(path=path, replaced=replaced, added=added, first_line=first_line,
                            last_line=first_line + total)


def _match(existing: list[tuple[str, str, ts.Node]], name: str, prefer: list[str]) -> tuple[str, ts.Node] | None:
    """The file's definition for ``name``: the same qualified name, else a unique (or preferred) last part."""
    exact = [(n, node) for n, _, node in existing if n == name]
    if exact:
        return exact[0]
    short = name.rsplit(".", 1)[-1]
    same = [(n, node) for n, _, node in existing if n.rsplit(".", 1)[-1] == short]
    if len(same) == 1:
        return same[0]
    chosen = [x for x in same if x[0] in prefer]
    return chosen[0] if chosen else None


def _add_imports(src: bytes, imports: list[str], language: str, parser: ts.Parser) -> bytes:
    """``src`` with the import lines it lacks added after its last top-level import (or at the top)."""
    text = src.decode("utf-8", "replace")
    missing = [i for i in imports if i.strip() and i.strip() not in text]
    if not missing:
        return src
    tree = parser.parse(src)
    kinds = IMPORT_NODES.get(language, ())
    last = [n for n in tree.root_node.named_children if n.type in kinds]
    if last:
        at = last[-1].end_byte
        return src[:at] + ("\n" + "\n".join(missing)).encode() + src[at:]
    at = 0
    first = tree.root_node.named_children[0] if tree.root_node.named_children else None
    if first is not None and first.type == "expression_statement" and language == "python":
        at = first.end_byte  # after the module docstring
        return src[:at] + ("\n\n" + "\n".join(missing)).encode() + src[at:]
    return ("\n".join(missing) + "\n").encode() + src


def definitions_in(code: str, language: str) -> list[str]:
    """Names of the top-level definitions in ``code`` (empty when it does not parse)."""
    try:
        return [d[0] for d in _top_definitions(textwrap.dedent(code.strip("\n")), language)[0]]
    except EditError:
        return []


def rewrites_a_class(src: bytes, path: str, code: str) -> bool:
    """Whether ``code`` writes anew a class that ``src`` has, with methods (``methods_only`` then applies it
    differently: only those methods change)."""
    language = language_for_path(path)
    if language is None or parser_for(language) is None:
        return False
    code = textwrap.dedent(code.strip("\n"))
    try:
        defs, _ = _top_definitions(code, language)
    except EditError:
        return False
    csrc = code.encode()
    names = [n for n, _, _ in definition_nodes(parser_for(language).parse(csrc), csrc, language)]
    existing = definition_nodes(parser_for(language).parse(src), src, language)
    return any(kind == "class" and _match(existing, name, []) is not None and any(n.startswith(name + ".") for n in names)
               for name, kind, _, _ in defs)
