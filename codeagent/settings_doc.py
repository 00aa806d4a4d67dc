"""The settings reference and the effective settings, generated from the pydantic section models."""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
import typing
from typing import Any

from pydantic import BaseModel

from codeagent.config import Settings, sections, validate

HEADER = """# Settings reference

Generated from the pydantic models by `codeagent config show --doc` (do not edit by hand: regenerate
with `codeagent config show --doc > docs/settings.md`). Every key can be set in a YAML file given
to `--config` (one mapping per section) or on the command line with `--set SECTION.KEY=VALUE`
(the value is read as YAML). Precedence: defaults < `--config` < `--set` < explicit flags such as
`--model`, `--budget`, `--sandbox`. An unknown section or key is an error, with a "did you mean".
"""


def field_docs(cls: type[BaseModel]) -> dict[str, str]:
    """Each field's docstring: the string literal right after its annotated assignment in the class body."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for stmt, nxt in zip(body, body[1:]):
            if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and isinstance(nxt, ast.Expr)
                    and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)):
                docs[stmt.target.id] = " ".join(inspect.cleandoc(nxt.value.value).split())
    return docs


def type_name(ann: Any) -> str:
    """A short readable name of a field's type: ``int | None``, ``auto | fp32``, ``dict[str, float]``."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Literal:
        return " | ".join(str(a) for a in args)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " | ".join(type_name(a) for a in args)
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(type_name(a) for a in args)}]"
    if ann is type(None):
        return "None"
    return getattr(ann, "__name__", str(ann))


def limits(field: Any) -> str:
    """The field's numeric bounds as text (``>= 1``, ``> 0, <= 1``), from its pydantic metadata."""
    marks = []
    for meta in field.metadata:
        for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                marks.append(f"{sign} {value}")
    return ", ".join(marks)


def reference() -> str:
    """The settings reference in Markdown: every section and key with its type, default and docstring."""
    out = [HEADER]
    for name, cls in sections().items():
        out.append(f"## `{name}`\n\n{inspect.cleandoc(cls.__doc__ or '')}\n")
        docs = field_docs(cls)
        for key, field in cls.model_fields.items():
            default = json.dumps(field.get_default(call_default_factory=True), default=str)
            text = docs.get(key, "")
            bounds = f", {limits(field)}" if limits(field) else ""
            out.append(f"- `{name}.{key}` (`{type_name(field.annotation)}`{bounds}, default `{default}`)"
                       + (f": {text}" if text else ""))
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def effective(settings: Settings) -> dict[str, Any]:
    """Every section with every key: what a run given ``settings`` uses (defaults filled in)."""
    data: dict[str, Any] = {"model": settings.model.model_dump(mode="json"), "kv": settings.kv.model_dump(mode="json")}
    for name, cls in sections().items():
        if name not in data:
            data[name] = validate(cls, settings.extra.get(name) or {}, f"{name}.").model_dump(mode="json")
    return data
