"""Definitions the issue names: found in the issue's text, kept past the pinned cap."""

from __future__ import annotations

import textwrap
from pathlib import Path

from codeagent.kvcache.named import defined_name, issue_names
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo, State


def test_issue_names_are_code_not_words_or_files():
    text = ("Callers of `create` in `gitdb/pack.py` need a variant; `pkg.mod.mru_cache()` and safe_repr fail, "
            "getDOMImplementation(name) too. The `README.md` says to create a file.")
    assert issue_names(text) == {"create", "mru_cache", "safe_repr", "getDOMImplementation"}
    # a path's parts are not names, ticked or not: `fontTools/misc/__init__.py` does not name __init__
    assert issue_names("Help me continue writing `fontTools/misc/__init__.py` from where it stops.") == set()
    assert issue_names("See src/my_pkg/load_data.py and my_helper.py; call parse_args(argv).") == {"parse_args"}
    # a word before a parenthesis in prose is not a call
    assert issue_names("Make the suite pass again (a failure shows up) and fix parse_args (argv).") == {"parse_args"}


def test_defined_name_in_several_languages():
    cases = {"def create(cls, object_iter, base_dir": "create", "    async def go(x):": "go",
             "class Foo(Bar):": "Foo", "class Foo:": "Foo", "function formatPrice(value, c) {": "formatPrice",
             "func (s *Store) Get(key string) int {": "Get", "pub fn get(&self, key: &str)": "get",
             "public int lookup(String key) {": "lookup", "@classmethod\n    def create(cls": "create"}
    for header, name in cases.items():
        assert defined_name(header) == name, header


def _session(eng, issue: str, view: str) -> None:
    eng.append_message("system", "You are a coding agent.", SpanInfo(kind=SegmentKind.SYSTEM))
    eng.append_message("user", issue, SpanInfo(kind=SegmentKind.ISSUE))
    eng.append_message("user", view, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))


def _pinned_text(eng) -> str:
    t = eng.table
    return eng.tok.decode(t["token"][t["state"] == int(State.PINNED)].tolist())


def test_the_named_definition_outlives_the_pinned_cap(make_engine):
    """Past the pinned cap whole pinned lines are released, lowest score first; the header of the definition the
    issue names is never among them, whichever definition it is, and without the knob it can be."""
    source = Path(textwrap.__file__).read_text()
    view = source[source.index("    def _munge_whitespace("):source.index("    def _handle_long_word(") + 400]
    names = ["_munge_whitespace", "_handle_long_word"]
    assert all(f"def {n}(" in view for n in names)
    lost = 0
    for name in names:
        for on in (True, False):
            eng = make_engine(policy="default", min_tokens=0, pinned_cap=0.25, pin_named=on, sink_tokens=2,
                              recent_tokens=8)
            _session(eng, f"`{name}` returns the wrong thing for tabs.", view)
            pinned = int((eng.table["state"] == int(State.PINNED)).sum())
            eng.manager.enforce(eng.state, budget=pinned)  # the cap (a quarter of it) must release most pins
            assert eng.state.counters.pinned_overflow > 0
            kept = f"def {name}(" in _pinned_text(eng)
            if on:
                assert kept, name
                assert eng.state.named >= {name}
            else:
                lost += not kept
    assert lost > 0  # the cap does release named definitions when nothing protects them


def test_a_named_module_constant_is_protected(make_engine):
    """A constant the issue names is a definition like a function: its line is protected, past the pinned cap."""
    consts = "".join(f"LIMIT_{i} = {i}\n" for i in range(30))
    for on in (True, False):
        eng = make_engine(policy="default", min_tokens=0, pinned_cap=0.1, pin_named=on, sink_tokens=2, recent_tokens=8)
        _session(eng, "`LIMIT_3` should be 4.", "import os\n" + consts + "\ndef f():\n    return LIMIT_3\n")
        protected = eng.tok.decode(eng.table["token"][eng.table["named"]].tolist())
        assert ("LIMIT_3 = 3" in protected) is on and "LIMIT_4 = 4" not in protected
        eng.manager.enforce(eng.state, budget=int((eng.table["state"] == int(State.PINNED)).sum()))
        if on:
            assert "LIMIT_3 = 3" in _pinned_text(eng)


_ESCAPE = ('def escape(pattern, special_only=True, literal_spaces=False):\n'
           '    """Escape a string for use as a literal in a pattern. If special_only is\n'
           '    True, escape only special characters."""\n'
           '    if isinstance(pattern, bytes):\n        p = pattern.decode("latin-1")\n    return p\n\n'
           'def purge():\n    """Clear the regular expression cache."""\n    _cache.clear()\n')


def _numbered(code: str) -> str:
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(code.splitlines(), 388))


def test_a_named_definition_keeps_its_docstring(make_engine):
    """The docstring opening a named definition (its contract: what the parameters mean) is protected with the
    header, in a raw view and behind a view's line numbers; another definition's docstring is not, nor (with
    ``pin_named_body=0``) the body under it."""
    for view in (_ESCAPE, _numbered(_ESCAPE)):
        eng = make_engine(policy="default", min_tokens=0, pin_named_body=0)
        _session(eng, "`escape` is hard to mock; add a wrapper with the same signature.", view)
        protected = eng.tok.decode(eng.table["token"][eng.table["named"]].tolist())
        assert "def escape(pattern, special_only=True, literal_spaces=False):" in protected
        assert "If special_only is" in protected and "escape only special characters" in protected
        assert "isinstance" not in protected and "latin" not in protected
        assert "Clear the regular expression cache" not in protected and "purge" not in protected


def test_a_named_definition_keeps_the_start_of_its_body(make_engine):
    """The first code of a named definition's body (how a wrapper or a fix sees the parameters used) is protected
    up to ``pin_named_body`` tokens, in a raw view and behind line numbers; the body ends where the next
    definition at its level starts."""
    for view in (_ESCAPE, _numbered(_ESCAPE)):
        for body in (128, 6):
            eng = make_engine(policy="default", min_tokens=0, pin_named_body=body)
            _session(eng, "`escape` is hard to mock; add a wrapper with the same signature.", view)
            protected = eng.tok.decode(eng.table["token"][eng.table["named"]].tolist())
            assert "def escape(" in protected and "If special_only is" in protected
            assert "if isinstance(pattern" in protected
            assert ('p = pattern.decode("latin-1")' in protected) is (body == 128)
            assert ("return p" in protected) is (body == 128)
            assert "_cache.clear()" not in protected and "purge" not in protected
            assert "388" not in protected  # a view's line numbers are not the body


def test_named_definitions_give_way_first_past_their_share_of_the_budget(make_engine):
    """An issue naming long definitions: past the pinned cap, their pinned lines beyond ``named_cap`` of the budget
    are released before any other pin, the lines deepest into each body first, so every named header stays and
    the other pins keep their room; with the share at 1 the other pins give way instead."""
    source = Path(textwrap.__file__).read_text()
    view = source[source.index("    def _munge_whitespace("):source.index("def dedent(")]
    names = ["_split", "_handle_long_word", "_wrap_chunks"]
    lost: dict[float, tuple[int, int]] = {}
    for share in (0.2, 1.0):
        eng = make_engine(policy="default", min_tokens=0, named_cap=share, sink_tokens=2, recent_tokens=8)
        _session(eng, "These fail on tabs: " + ", ".join(f"`{n}`" for n in names) + ".", view)
        t = eng.table
        pinned = t["state"] == int(State.PINNED)
        named, others = int((pinned & t["named"]).sum()), int((pinned & ~t["named"]).sum())
        budget = int((named + others) / 0.85)  # the pins are past the pinned cap (0.75 of it)
        excess = named + others - int(0.75 * budget)
        assert named - 0.2 * budget > excess > 0 and others > excess
        eng.manager.enforce(eng.state, budget=budget)
        t = eng.table
        pinned = t["state"] == int(State.PINNED)
        lost[share] = (named - int((pinned & t["named"]).sum()), others - int((pinned & ~t["named"]).sum()))
        assert all(f"def {n}(" in _pinned_text(eng) for n in names)
    assert lost[0.2][0] > 0 and lost[0.2][1] == 0
    assert lost[1.0][0] == 0 and lost[1.0][1] > 0


def test_a_budget_under_the_protected_set_keeps_the_named_header_first(make_engine):
    """When what must stay (the issue, the named definition's header, docstring and first body lines, the recent
    window) is past the budget itself, the named lines give way as past the pinned cap: deepest into the body
    first, the header last; not the newest first, which cut the header and kept its body (a small context at
    12.5%)."""
    source = Path(textwrap.__file__).read_text()
    view = source[source.index("    def _split(self, text):"):source.index("    def _fix_sentence_endings(")]
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8)
    issue = ("`_split` is hard to mock in our tests; add a wrapper with the same signature that we can patch. "
             "The wrapper should log its arguments and the time it took, and the whole test suite must pass again "
             "afterwards, including the slow tests that exercise long paragraphs with hyphenated words.")
    _session(eng, issue, view)
    t = eng.table
    issue_slots, named = int((t["kind"] == int(SegmentKind.ISSUE)).sum()), int(t["named"].sum())
    assert named > 60 and issue_slots > 50
    eng.manager.enforce(eng.state, budget=issue_slots + 40)  # the issue and half the budget for names: over it
    kept = eng.tok.decode(eng.table["token"].tolist())
    assert "def _split(self, text):" in kept
    assert "wordsep_simple_re" not in kept  # the body, below the docstring, went first
