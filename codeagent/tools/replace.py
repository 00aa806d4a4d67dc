"""replace: the complete new version of a function, method or class replaces its definition (by tree-sitter node)."""

from __future__ import annotations

from typing import Any

from codeagent.kvcache.languages import language_for_path
from codeagent.kvcache.tags import SegmentKind, SpanInfo
from codeagent.protocols import Observation
from codeagent.tools import beneath
from codeagent.tools.base import TOOLS, Arg, BaseTool, ToolContext, ToolError, resolve_path


@TOOLS.register("replace")
class Replace(BaseTool):
    """Finds the file by the definition's name when no path is given (``ctx.extra['shown']`` refs first)."""

    description = "Replace a whole definition (function, method or class) by its complete new version."
    args = (
        Arg("code", "the complete new definition(s)"),
        Arg("path", "file holding the definition, relative to the repository root", required=False),
        Arg("methods_only", "true: a class written anew changes only its methods; its fields and other members "
            "stay", required=False),
    )

    def call(self, args: dict[str, Any], ctx: ToolContext) -> Observation:
        from codeagent.agent.defedit import EditError, definitions_in, replace_in_source
        from codeagent.agent.symbols import SymbolIndex

        code = args["code"]
        shown: list[str] = list(ctx.extra.get("shown", []))
        raw = args.get("path")
        path = resolve_path(ctx, raw, write=True) if raw else self._locate(code, shown, ctx, SymbolIndex, definitions_in)
        if beneath.probe(ctx.workspace, path) is None:
            raise ToolError(f"no such file: {path} (use create for a new file)")
        before = beneath.read_bytes(ctx.workspace, path)
        try:
            after, done = replace_in_source(before, path, code, prefer=[r.split("::", 1)[1] for r in shown
                                                                       if r.startswith(path + "::")],
                                            methods_only=str(args.get("methods_only", "")).lower() in ("true", "1"))
        except EditError as exc:
            raise ToolError(str(exc)) from None
        beneath.write_bytes(ctx.workspace, path, after)
        what = ", ".join(done.replaced) + (f" (added {', '.join(done.added)})" if done.added else "")
        return Observation(text=f"replaced {what} in {path} (lines {done.first_line}-{done.last_line})",
                           info=SpanInfo(kind=SegmentKind.TOOL_OUTPUT, language=language_for_path(path)),
                           data={"path": path, "replaced": done.replaced, "added": done.added,
                                 "before": before.decode("utf-8", "replace")})

    @staticmethod
    def _locate(code: str, shown: list[str], ctx: ToolContext, index_cls, names_of) -> str:
        """The file whose shown (else any non-test) definition the code's first definition names."""
        for lang in ("python", "javascript", "typescript", "go", "java", "rust"):
            names = names_of(code, lang)
            if names:
                break
        else:
            raise ToolError("the code holds no complete function, method or class definition")
        for name in names:
            short = name.rsplit(".", 1)[-1]
            for ref in shown:
                path, _, qual = ref.partition("::")
                if qual == name or qual.rsplit(".", 1)[-1] == short:
                    return path
        index = ctx.extra.get("index") or index_cls(ctx.workspace)
        hits = sorted({s.path for s in index.symbols if not s.is_test and s.short in {n.rsplit(".", 1)[-1]
                                                                                      for n in names}})
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise ToolError(f"no definition named {names[0]} in the repository; rewrite one of the definitions shown")
        raise ToolError(f"{names[0]} is defined in {', '.join(hits[:5])}; add a first line '# file: PATH'")
