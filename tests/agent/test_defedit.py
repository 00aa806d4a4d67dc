"""Structure-aware replacement of definitions, on real files parsed with tree-sitter."""

from __future__ import annotations

from pathlib import Path

import pytest

from codeagent.agent.defedit import EditError, definitions_in, replace_definitions, replace_in_source, rewrites_a_class

SHAPES = '''"""Shapes."""
import math


class Rect:
    def __init__(self, w, h):
        self.w, self.h = w, h

    @property
    def area(self):
        return self.w + self.h

    def scale(self, k):
        return Rect(self.w * k, self.h * k)


def total(shapes):
    return sum(s.area for s in shapes)
'''


@pytest.fixture
def shapes(tmp_path: Path) -> Path:
    (tmp_path / "shapes.py").write_text(SHAPES)
    return tmp_path


def test_a_method_written_flush_left_is_indented_and_keeps_its_decorator(shapes: Path) -> None:
    done = replace_definitions(shapes, "shapes.py", "def area(self):\n    return self.w * self.h\n")
    text = (shapes / "shapes.py").read_text()
    assert "    @property\n    def area(self):\n        return self.w * self.h\n" in text
    assert done.replaced == ["Rect.area"] and text.count("def area") == 1
    assert "def scale(self, k):" in text and "def total(shapes):" in text


def test_a_whole_class_replaces_the_class(shapes: Path) -> None:
    """A class with more than methods in its body (here a class attribute) is a new version of the class."""
    new = "class Rect:\n    sides = 4\n\n    def __init__(self, w, h):\n        self.w, self.h = w, h\n"
    done = replace_definitions(shapes, "shapes.py", new)
    text = (shapes / "shapes.py").read_text()
    assert done.replaced == ["Rect"] and "sides = 4" in text
    assert "def scale" not in text and "def total(shapes):" in text


def test_a_class_written_with_some_of_its_methods_replaces_only_those(shapes: Path) -> None:
    """Small models show a fixed method inside its class header: the class's other members stay."""
    new = ('class Rect:\n    """Docstring."""\n\n    @property\n    def area(self):\n        return self.w * self.h\n\n'
           "    def double(self):\n        return self.scale(2)\n")
    done = replace_definitions(shapes, "shapes.py", new)
    text = (shapes / "shapes.py").read_text()
    assert done.replaced == ["Rect.area"] and done.added == ["Rect.double"]
    assert "    def __init__(self, w, h):\n        self.w, self.h = w, h\n" in text
    assert "    @property\n    def area(self):\n        return self.w * self.h\n" in text
    assert "    def double(self):\n        return self.scale(2)\n" in text and "def scale(self, k):" in text
    assert text.count("class Rect") == 1 and '"""Docstring."""' not in text


def test_new_helper_is_inserted_and_missing_imports_added(shapes: Path) -> None:
    code = ("import functools\n\ndef _area(s):\n    return s.area\n\n\ndef total(shapes):\n"
            "    return functools.reduce(lambda a, s: a + _area(s), shapes, 0)\n")
    done = replace_definitions(shapes, "shapes.py", code)
    text = (shapes / "shapes.py").read_text()
    assert done.replaced == ["total"] and done.added == ["_area"]
    assert "import math\nimport functools\n" in text
    assert text.index("def _area") < text.index("def total")
    compile(text, "shapes.py", "exec")


def test_code_that_does_not_parse_or_names_nothing_known_changes_nothing(shapes: Path) -> None:
    with pytest.raises(EditError, match="does not parse"):
        replace_definitions(shapes, "shapes.py", "def total(shapes:\n    return 1\n")
    with pytest.raises(EditError, match="no definition named nothing_here"):
        replace_definitions(shapes, "shapes.py", "def nothing_here():\n    return 1\n")
    with pytest.raises(EditError, match="no complete function"):
        replace_definitions(shapes, "shapes.py", "x = 1\n")
    assert (shapes / "shapes.py").read_text() == SHAPES


def test_javascript_function_and_arrow_const(tmp_path: Path) -> None:
    (tmp_path / "m.js").write_text("function add(a, b) {\n  return a - b;\n}\n\nconst twice = (x) => x + x;\n"
                                   "module.exports = { add, twice };\n")
    replace_definitions(tmp_path, "m.js", "function add(a, b) {\n  return a + b;\n}")
    replace_definitions(tmp_path, "m.js", "const twice = (x) => 2 * x;")
    text = (tmp_path / "m.js").read_text()
    assert "return a + b;" in text and "const twice = (x) => 2 * x;" in text and "module.exports" in text
    assert definitions_in("function f() {}\nclass A { m() {} }", "javascript") == ["f", "A"]


def test_methods_only_changes_a_restated_class_s_methods_and_keeps_its_members(shapes: Path) -> None:
    new = "class Rect:\n    sides: Sides = 4\n\n    @property\n    def area(self):\n        return self.w * self.h\n"
    src = (shapes / "shapes.py").read_bytes()
    assert rewrites_a_class(src, "shapes.py", new)
    assert not rewrites_a_class(src, "shapes.py", "def total(shapes):\n    return 0\n")
    assert not rewrites_a_class(src, "shapes.py", "class Other:\n    def f(self):\n        return 1\n")
    whole, done = replace_in_source(src, "shapes.py", new)
    assert done.replaced == ["Rect"] and b"sides: Sides" in whole and b"def scale" not in whole
    out, done = replace_in_source(src, "shapes.py", new, methods_only=True)
    text = out.decode()
    assert done.replaced == ["Rect.area"] and "sides" not in text
    assert "    @property\n    def area(self):\n        return self.w * self.h\n" in text
    assert "def __init__(self, w, h):" in text and "def scale(self, k):" in text
