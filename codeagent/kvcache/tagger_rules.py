"""Per-language tree-sitter node tables for the structure tagger.

Each table names the grammar node types that matter for structural tags: definitions (with the
field holding their body), wrappers around definitions, decorators, imports, comments, control
flow and anonymous functions. Node types a grammar version lacks are dropped when the query is
built, so a table may list names from several grammar versions.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable


@dataclass(frozen=True)
class LangRules:
    """What the tagger looks for in one language's syntax tree."""

    loader: Callable[[], object]
    functions: dict[str, str]  # node type -> body field name ("" when none)
    classes: dict[str, str]
    wrappers: frozenset[str] = frozenset()  # nodes whose whole range belongs to the definition inside
    named_values: dict[str, str] = field(default_factory=dict)  # holder type -> field with a function value
    function_values: frozenset[str] = frozenset()  # anonymous function node types
    decorators: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    bindings: frozenset[str] = frozenset()  # top-level nodes binding a name (constants, globals); the first line
    comments: frozenset[str] = frozenset()
    flow: frozenset[str] = frozenset()  # control-flow nodes: header, then a deeper body
    body_fields: tuple[str, ...] = ("body", "consequence", "alternative")
    flow_fields: dict[str, tuple[str, ...]] = field(default_factory=dict)  # per-node body fields
    block_types: frozenset[str] = frozenset()  # node types that are a braced/indented body
    attach: frozenset[str] = frozenset()  # top-level nodes attached to the item that follows
    require_call: bool = False  # JS/TS: `const x = require("y")` is an import
    python_docstrings: bool = False
    doc_comment_prefixes: tuple[str, ...] = ("/**",)
    go_doc_comments: bool = False  # a comment right above a declaration documents it


def _python() -> object:
    import tree_sitter_python

    return tree_sitter_python.language()


def _javascript() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _java() -> object:
    import tree_sitter_java

    return tree_sitter_java.language()


def _go() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


def _rust() -> object:
    import tree_sitter_rust

    return tree_sitter_rust.language()


PYTHON = LangRules(
    loader=_python,
    functions={"function_definition": "body"},
    classes={"class_definition": "body"},
    wrappers=frozenset({"decorated_definition"}),
    decorators=frozenset({"decorator"}),
    imports=frozenset({"import_statement", "import_from_statement", "future_import_statement"}),
    bindings=frozenset({"expression_statement"}),  # when it assigns to names (not `obj.attr = ...`)
    comments=frozenset({"comment"}),
    flow=frozenset({
        "if_statement", "elif_clause", "else_clause", "for_statement", "while_statement",
        "try_statement", "except_clause", "except_group_clause", "finally_clause", "with_statement",
        "match_statement", "case_clause",
    }),
    block_types=frozenset({"block"}),
    python_docstrings=True,
    doc_comment_prefixes=(),
)

_JS_FUNCTIONS = {
    "function_declaration": "body", "generator_function_declaration": "body",
    "method_definition": "body",
}
_JS_FLOW = frozenset({
    "if_statement", "else_clause", "for_statement", "for_in_statement", "for_of_statement",
    "while_statement", "do_statement", "try_statement", "catch_clause", "finally_clause",
    "switch_statement", "switch_case", "switch_default",
})
_JS_FUNCTION_VALUES = frozenset({
    "arrow_function", "function_expression", "function", "generator_function",
})
_JS_NAMED_VALUES = {
    "variable_declarator": "value", "pair": "value", "field_definition": "value",
    "public_field_definition": "value", "assignment_expression": "right",
}

JAVASCRIPT = LangRules(
    loader=_javascript,
    functions=dict(_JS_FUNCTIONS),
    classes={"class_declaration": "body", "class": "body"},
    wrappers=frozenset({"export_statement"}),
    named_values=dict(_JS_NAMED_VALUES),
    function_values=_JS_FUNCTION_VALUES,
    decorators=frozenset({"decorator"}),
    imports=frozenset({"import_statement"}),
    bindings=frozenset({"lexical_declaration", "variable_declaration"}),
    comments=frozenset({"comment"}),
    flow=_JS_FLOW,
    block_types=frozenset({"statement_block", "class_body", "switch_body"}),
    attach=frozenset({"decorator"}),
    require_call=True,
)

TYPESCRIPT = LangRules(
    loader=_typescript,
    functions={
        **_JS_FUNCTIONS, "function_signature": "", "method_signature": "",
        "abstract_method_signature": "",
    },
    classes={
        "class_declaration": "body", "abstract_class_declaration": "body", "class": "body",
        "interface_declaration": "body", "enum_declaration": "body",
        "type_alias_declaration": "value", "internal_module": "body", "module": "body",
    },
    wrappers=frozenset({"export_statement", "ambient_declaration"}),
    named_values=dict(_JS_NAMED_VALUES),
    function_values=_JS_FUNCTION_VALUES,
    decorators=frozenset({"decorator"}),
    imports=frozenset({"import_statement", "import_alias"}),
    bindings=frozenset({"lexical_declaration", "variable_declaration"}),
    comments=frozenset({"comment"}),
    flow=_JS_FLOW,
    block_types=frozenset({"statement_block", "class_body", "switch_body", "interface_body", "enum_body"}),
    attach=frozenset({"decorator"}),
    require_call=True,
)

TSX = replace(TYPESCRIPT, loader=_tsx)

JAVA = LangRules(
    loader=_java,
    functions={
        "method_declaration": "body", "constructor_declaration": "body",
        "compact_constructor_declaration": "body",
    },
    classes={
        "class_declaration": "body", "interface_declaration": "body", "enum_declaration": "body",
        "record_declaration": "body", "annotation_type_declaration": "body",
    },
    function_values=frozenset({"lambda_expression"}),
    decorators=frozenset({"annotation", "marker_annotation"}),
    imports=frozenset({"import_declaration", "package_declaration"}),
    comments=frozenset({"line_comment", "block_comment"}),
    flow=frozenset({
        "if_statement", "for_statement", "enhanced_for_statement", "while_statement", "do_statement",
        "try_statement", "try_with_resources_statement", "catch_clause", "finally_clause",
        "switch_expression", "switch_block_statement_group", "switch_rule", "synchronized_statement",
    }),
    block_types=frozenset({"block", "class_body", "switch_block", "constructor_body"}),
)

GO = LangRules(
    loader=_go,
    functions={"function_declaration": "body", "method_declaration": "body"},
    classes={"type_declaration": ""},
    function_values=frozenset({"func_literal"}),
    imports=frozenset({"import_declaration", "package_clause"}),
    bindings=frozenset({"const_declaration", "var_declaration"}),
    comments=frozenset({"comment"}),
    flow=frozenset({
        "if_statement", "for_statement", "expression_switch_statement", "type_switch_statement",
        "select_statement", "expression_case", "type_case", "default_case", "communication_case",
    }),
    block_types=frozenset({"block"}),
    go_doc_comments=True,
    doc_comment_prefixes=(),
)

RUST = LangRules(
    loader=_rust,
    functions={"function_item": "body", "function_signature_item": ""},
    classes={
        "struct_item": "body", "enum_item": "body", "union_item": "body", "trait_item": "body",
        "impl_item": "body", "mod_item": "body",
    },
    function_values=frozenset({"closure_expression"}),
    decorators=frozenset({"attribute_item"}),
    imports=frozenset({"use_declaration", "extern_crate_declaration"}),
    bindings=frozenset({"const_item", "static_item"}),
    comments=frozenset({"line_comment", "block_comment"}),
    flow=frozenset({
        "if_expression", "else_clause", "for_expression", "while_expression", "loop_expression",
        "match_expression", "match_arm",
    }),
    flow_fields={"match_arm": ("value",)},
    block_types=frozenset({"block", "declaration_list", "match_block"}),
    attach=frozenset({"attribute_item"}),
    doc_comment_prefixes=("///", "//!", "/**", "/*!"),
)

RULES: dict[str, LangRules] = {
    "python": PYTHON,
    "javascript": JAVASCRIPT,
    "typescript": TYPESCRIPT,
    "tsx": TSX,
    "java": JAVA,
    "go": GO,
    "rust": RUST,
}
