"""Definitions ranked by use: the names headers bind, how often the session uses them, and the pinned
cap releasing the least-used definitions first."""

from __future__ import annotations

import json
import random
import zlib

import torch

from codeagent.kvcache.policies.codecomp import CodeComp
from codeagent.kvcache.policies.lifecycle import Lifecycle
from codeagent.kvcache.tagger import StructureTagger
from codeagent.kvcache.tags import BlockType, SegmentKind, SpanInfo, State
from codeagent.kvcache.uses import (bindings, count, defined_names, definitions, import_names, line_keys,
                                  module_calls, spelled)


def test_import_names_in_several_languages():
    cases = {
        "from m import a, b as c": ["a", "c"], "import a.b": ["a"], "import a.b as c, d": ["c", "d"],
        "from x import (\n    alpha,\n    beta as gamma,\n)": ["alpha", "gamma"],
        'import x, {y as z} from "m";': ["x", "z"], "use std::fs;": ["fs"], "use a::b::{c, d};": ["c", "d"],
        'import "fmt"': ["fmt"], 'import (\n\tf "fmt"\n\t"net/http"\n)': ["f", "http"],
        "from m import *": [], "x = 1": [],
    }
    for statement, names in cases.items():
        assert import_names(statement) == names, statement


def test_count_reads_a_file_inside_a_json_string_as_the_file():
    text = json.dumps({"content": "import os\nKEY = 1\n\tuse(KEY)\n"})
    uses = count(text)
    assert uses["KEY"] == 2 and uses["os"] == 1
    assert "nKEY" not in uses and "tuse" not in uses


def _chars(text: str) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(len(text))]


def test_defined_names_mark_headers_and_imported_names_raw_and_in_json():
    code = "import os\nfrom pkg.mod import helper, Thing as T\n\nLIMIT = 3\n\n\ndef run(x):\n    return helper(x)\n"
    for text in (code, json.dumps({"path": "a.py", "content": code})):
        offsets = _chars(text)
        tags = StructureTagger().tag(text, offsets, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        names = defined_names(text, offsets, tags)
        at = {name: "".join(text[i] for i, n in enumerate(names) if n == name) for name in set(names) - {None}}
        assert set(at) == {"os", "helper", "T", "LIMIT", "run"}, text
        assert at["os"] == "os" and at["T"] == "T"  # an import marks the names it binds, not the module path
        assert "def run(x):" in at["run"] and "LIMIT = 3" in at["LIMIT"]
        assert all(n is None for i, n in enumerate(names) if text.startswith("return", i))  # a body binds nothing
        assert definitions(names, tags) == {"os": 1, "helper": 1, "T": 1, "LIMIT": 1, "run": 1}
        # the tokens spelling each name: the name itself, not the keyword or the value before or after it
        assert "".join(c for c, on in zip(text, spelled(text, offsets, names)) if on) == "oshelperTLIMITrun"
        assert bindings(text, offsets, tags) == (names, definitions(names, tags), spelled(text, offsets, names))
    # a tokenizer may join an escape's ``n`` with the name after it (``\\n`` + ``LIMIT`` as ``\\`` and ``nL``)
    text = json.dumps({"path": "a.py", "content": code})
    starts = [i for i in range(len(text)) if text[i - 2:i] != "\\n"]  # the char after an escape joins its n
    offsets = list(zip(starts, starts[1:] + [len(text)]))
    tags = StructureTagger().tag(text, offsets, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    names = defined_names(text, offsets, tags)
    marked = spelled(text, offsets, names)
    assert "".join(text[a:b] for (a, b), on in zip(offsets, marked) if on) == "oshelperTnLIMITrun"


def test_a_header_over_several_numbered_lines_counts_one_definition():
    """In a ``cat -n`` view the line numbers split a header written over several lines into one run of tokens per
    line; it is still one definition, else its uses besides the definitions would count none."""
    code = "import collections\n\n\ndef run(\n    x,\n    y,\n) -> None:\n    collections.deque(x)\n"
    text = "".join(f"{i:>6}\t{line}\n" for i, line in enumerate(code.splitlines(), 1))
    offsets = _chars(text)
    tags = StructureTagger().tag(text, offsets, SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    names = defined_names(text, offsets, tags)
    runs = sum(1 for i, n in enumerate(names) if n == "run" and names[i - 1] != n)
    assert runs > 1  # the case this guards: the numbers break the header's tokens apart
    assert definitions(names, tags) == {"collections": 1, "run": 1}


def test_module_calls_are_the_lines_opening_a_module_level_call_raw_and_in_json():
    """A registration opens a module-level statement with a call; a call inside a function, an attribute assigned,
    the rows of a module-level docstring that read like calls and a call's continuation line do not."""
    code = ("def f(x):\n    register(x)\n\n\nregistry.add(str,\n    f)\natexit.register(close)\nf.__doc__ = \"\"\"\n"
            "f(1)\n\"\"\"\nLIMIT = make(3)\n")
    for text in (code, json.dumps({"path": "a.py", "content": code})):
        offsets = _chars(text)
        tags = StructureTagger().tag(text, offsets, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        keys, _, _ = line_keys(text, offsets)
        found = module_calls(text, offsets, keys, tags)
        assert found == {zlib.crc32(b"registry.add(str,"), zlib.crc32(b"atexit.register(close)")}, text


def test_a_name_defined_twice_is_referenced_only_by_its_other_uses(make_engine):
    """Two classes each define ``__init__``: neither counts the other's header as a reference."""
    eng = make_engine(policy="default")
    code = "class A:\n    def __init__(self):\n        pass\n\n\nclass B:\n    def __init__(self):\n        A()\n"
    eng.append_message("user", code, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    assert eng.state.defs["__init__"] == 2 and eng.state.defs["A"] == 1
    refs = eng.state.name_refs()
    assert int(refs[eng.state.names["__init__"]]) == 0 and int(refs[eng.state.names["A"]]) == 1


def test_a_numbered_view_counts_the_one_use_of_a_header_written_over_several_lines(make_engine):
    """A ``cat -n`` view of a binding written over three lines and read once: one definition, one reference (the
    line numbers split the header into three runs, which once counted three definitions and no reference)."""
    eng = make_engine(policy="default")
    code = "QUEUE: list[\n    int\n] = []\n\n\ndef push(x):\n    QUEUE.append(x)\n"
    view = "".join(f"{i:>6}\t{line}\n" for i, line in enumerate(code.splitlines(), 1))
    eng.append_message("tool", view, SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    assert eng.state.defs["QUEUE"] == 1
    assert int(eng.state.name_refs()[eng.state.names["QUEUE"]]) == 1


VIEW = """import os
import sys

LIMIT_KEY = make_key()
OTHER_KEY = make_key()


def alpha(value):
    return value + 1


def beta(value):
    return value * 2


def gamma(value):
    return value - 3
"""


def _read_view(make_engine, issue: str, after: str, **knobs):
    """A default-policy engine (pinned cap 0.6) that read ``issue``, ``VIEW`` and ``after`` as a tool output; the
    calls in ``after`` are not pinned as uses (``pin_module_calls`` off), and released lines keep no name
    (``release_keeps_names`` none): the release order alone is measured."""
    knobs.setdefault("pin_module_calls", False)
    knobs.setdefault("release_keeps_names", "none")
    knobs.setdefault("pinned_cap", 0.6)
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8, **knobs)
    eng.append_message("user", issue, SpanInfo(kind=SegmentKind.ISSUE))
    eng.append_message("user", VIEW, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    eng.append_message("user", after, SpanInfo(kind=SegmentKind.TOOL_OUTPUT))
    return eng


def _pinned_past_the_cap(eng) -> str:
    """Enforce a budget of as many slots as are pinned (60% of the pins may stay, the issue among them): the
    pinned lines that stay."""
    pinned = int((eng.table["state"] == int(State.PINNED)).sum())
    eng.manager.enforce(eng.state, budget=pinned)
    assert eng.state.counters.pinned_overflow > 0
    t = eng.table
    return eng.tok.decode(t["token"][t["state"] == int(State.PINNED)].tolist())


def test_past_the_pinned_cap_the_least_used_definitions_are_released_first(make_engine):
    """``LIMIT_KEY`` is used four times after the view, nothing else is. By a structure-led score (0.5 structural,
    0.3 attention) its line (a module binding, weight 0.8) goes before the signatures (1.0); by use it outlives
    them, and so does ``OTHER_KEY``, a constant nothing uses yet (code not shown yet will), while the unused
    functions (``release_waiting`` globals) and imports go. With their one-line bodies pinned too
    (``pin_short_bodies``), the bodies, which bind no name, go before any header."""
    kept = {}
    for release_by, short in (("score", 0), ("uses", 0), ("bodies", 2)):
        weights = {"structural_weight": 0.5, "semantic_weight": 0.3} if release_by == "score" else {}
        eng = _read_view(make_engine, "Fix the stash lookup.", "stash[LIMIT_KEY] = 1\nstash.get(LIMIT_KEY)\n"
                         "del stash[LIMIT_KEY]\nassert LIMIT_KEY not in stash\n", pin_short_bodies=short,
                         release_by="uses" if release_by == "bodies" else release_by, release_waiting="globals",
                         **weights)
        assert eng.state.uses["LIMIT_KEY"] == 5 and eng.state.uses["alpha"] == 1
        refs = dict(zip(eng.table["name"].tolist(), eng.state.refs().tolist()))
        assert refs[eng.state.names["LIMIT_KEY"]] == 4 and refs[eng.state.names["alpha"]] == 0
        kept[release_by] = _pinned_past_the_cap(eng)
    assert "LIMIT_KEY = make_key()" in kept["uses"] and "OTHER_KEY = make_key()" in kept["uses"]
    assert "def alpha" not in kept["uses"] and "import os" not in kept["uses"]
    assert "LIMIT_KEY" not in kept["score"]
    assert "return value" not in kept["bodies"] and "LIMIT_KEY = make_key()" in kept["bodies"]
    assert "def alpha(value)" in kept["bodies"]  # the headers outlive the bodies released first


def test_release_waiting_definitions_keeps_functions_nothing_calls_yet_like_constants(make_engine):
    """``alpha`` is called once after the view, ``beta`` and ``gamma`` not at all. With ``release_waiting`` globals
    the two uncalled functions count 0 uses and go before alpha; with ``definitions`` they wait for the code being
    written next, like the constants, and alpha (1 use) and the imports go first."""
    kept = {}
    for waiting in ("globals", "definitions"):
        eng = _read_view(make_engine, "Fix the stash lookup.", "alpha(stash)\n", release_waiting=waiting)
        kept[waiting] = _pinned_past_the_cap(eng)
    assert "def alpha(value)" in kept["globals"] and "def beta" not in kept["globals"]
    assert "def beta(value)" in kept["definitions"] and "def gamma(value)" in kept["definitions"]
    assert "def alpha" not in kept["definitions"] and "import os" not in kept["definitions"]
    assert "LIMIT_KEY = make_key()" in kept["definitions"] and "OTHER_KEY = make_key()" in kept["definitions"]


def test_release_few_uses_ranks_a_definition_used_once_with_one_used_twice(make_engine):
    """``LIMIT_KEY`` is used once after the view, ``alpha`` twice, ``os`` once. The pinned cap's count: with
    ``release_few_uses`` 1 the constant (1) goes before the function (2); with 2 both count 2 and the score orders
    them; the import, not a definition, keeps its 1 and goes first either way; unused definitions wait (3)."""
    counted = {}
    for few in (1, 2):
        eng = _read_view(make_engine, "Fix the stash lookup.", "stash[LIMIT_KEY] = alpha(1)\nalpha(os.sep)\n",
                         release_few_uses=few)
        uses = eng.manager.policy._uses(eng.state).tolist()
        first = {}  # name -> the count on its definition's first slot
        for i, n in enumerate(eng.table["name"].tolist()):
            first.setdefault(n, uses[i])
        counted[few] = {name: first[i] for name, i in eng.state.names.items() if i in first}
    assert counted[1]["LIMIT_KEY"] == 1 and counted[1]["alpha"] == 2 and counted[1]["os"] == 1
    assert counted[2]["LIMIT_KEY"] == 2 and counted[2]["alpha"] == 2 and counted[2]["os"] == 1
    assert counted[1]["OTHER_KEY"] == counted[2]["OTHER_KEY"] == 3 and counted[2]["beta"] == 3


def test_uses_bodies_keeps_a_used_definitions_short_body_with_its_header(make_engine):
    """``alpha`` is called three times after the view. With ``release_by="uses"`` its one-line body binds no name and
    goes before every header; with ``uses_bodies`` it counts alpha's uses, so it stays with its header while the
    unused functions' bodies go (``release_waiting`` globals: an unused function counts 0 uses)."""
    kept = {}
    for release_by in ("uses", "uses_bodies"):
        eng = _read_view(make_engine, "Fix alpha.", "alpha(1)\nalpha(2)\nalpha(3)\n", release_by=release_by,
                         pin_short_bodies=2, release_waiting="globals")
        kept[release_by] = _pinned_past_the_cap(eng)
    assert "return value + 1" not in kept["uses"] and "def alpha(value)" in kept["uses"]
    assert "def alpha(value):" in kept["uses_bodies"] and "return value + 1" in kept["uses_bodies"]
    assert "return value * 2" not in kept["uses_bodies"] and "return value - 3" not in kept["uses_bodies"]


def test_generated_text_counts_and_a_snapshot_keeps_the_counts(make_engine):
    eng = make_engine(policy="default")
    eng.append_message("user", "def lookup(key):\n    return key\n", SpanInfo(kind=SegmentKind.FILE_VIEW,
                                                                              language="python"))
    before = eng.state.uses["lookup"]
    snap = eng.snapshot()
    eng.append_message("user", "Write one line calling lookup.", SpanInfo(kind=SegmentKind.TEXT))
    eng.start_assistant()
    gen = eng.generate(12)
    assert eng.state.uses["lookup"] == before + 1 + count(gen.text)["lookup"]
    eng.restore(snap)
    assert eng.state.uses["lookup"] == before
    assert int((eng.table["name"] == eng.state.names["lookup"]).sum()) > 0


def test_line_keys_give_one_key_per_line_text_raw_and_in_json():
    code = "def f(a):\n    return Settings(a)\n\n        return Settings(a)\n)\n"
    for text in (code, json.dumps({"content": code})):
        offsets = _chars(text)
        keys, counts, words = line_keys(text, offsets)
        at = {text[i]: k for i, k in enumerate(keys) if text[i] in "dS)"}  # the first char of a line, or its `)`
        repeated = [k for k, n in counts.items() if n == 2]
        assert len(repeated) == 1 and words[repeated[0]] == {"return", "Settings", "a"}, text
        assert at["S"] == repeated[0] and at["d"] != repeated[0]  # indentation aside, the same text
        assert keys[text.rindex(")")] == -1  # a line without an identifier has no key
        assert sum(counts.values()) == 3
    numbered = "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(code.splitlines(), 1))
    keys, counts, _ = line_keys(numbered, _chars(numbered))
    assert counts[repeated[0]] == 2 and keys[numbered.index("Settings")] == repeated[0]  # the numbers aside


SETTINGS = """from collections import namedtuple

Settings = namedtuple("Settings", ["timeout", "method"])


def from_marker(marker):
    timeout = marker.kwargs.get("timeout")
    method = marker.kwargs.get("method")
    return Settings(timeout, method)


def from_config(config):
    timeout = config.getvalue("timeout")
    method = config.getvalue("method")
    return Settings(timeout, method)


def report(item, when):
    message = "timed out after %s seconds" % item.timeout
    stream = item.config.get_terminal_writer()
    stream.line(message.center(80, "+"))
    stream.line("while running %s at %s" % (item.nodeid, when))
    stream.flush()
"""


def _settings_read(make_engine, issue: str | None = None, **knobs):
    """A default-policy engine that read ``issue`` (if any) and ``SETTINGS`` as a file view."""
    eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8, **knobs)
    if issue:
        eng.append_message("user", issue, SpanInfo(kind=SegmentKind.ISSUE))
    eng.append_message("user", SETTINGS, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
    return eng


def _pinned_under(eng, name: str) -> str:
    """The cached text of the slots pinned under ``name`` (its definition and the lines pinned with it)."""
    t = eng.table
    return eng.tok.decode(t["token"][t["name"] == eng.state.names[name]].tolist())


def test_the_newest_repeated_use_of_a_definition_is_pinned_with_it(make_engine):
    """``return Settings(timeout, method)`` is written twice: with ``pin_repeated_uses`` the newer copy is pinned
    under ``Settings`` and outlives a budget that evicts the body lines around it; without it, both copies go.
    ``report``'s lines are written once and stay unpinned either way."""
    kept, pinned = {}, {}
    for on in (True, False):
        eng = _settings_read(make_engine, "Make the timeout settings configurable.", pin_repeated_uses=on)
        eng.manager.enforce(eng.state, budget=len(eng.table) // 2)
        kept[on] = eng.tok.decode(eng.table["token"].tolist())
        pinned[on] = _pinned_under(eng, "Settings")
    assert kept[True].count("return Settings(timeout, method)") == 1
    assert pinned[True].count("return Settings(timeout, method)") == 1
    assert "return Settings(timeout, method)" not in kept[False]
    assert "Settings = namedtuple(" in kept[True] and "Settings = namedtuple(" in kept[False]
    assert "stream.flush()" not in pinned[True]
    eng = _settings_read(make_engine)
    for _ in range(2):  # a third copy later, enforced again: the text already has its pinned line
        eng.manager.enforce(eng.state, budget=len(eng.table) // 2)
        eng.append_message("user", "    return Settings(timeout, method)\n", SpanInfo(kind=SegmentKind.FILE_VIEW,
                                                                                     language="python"))
    assert _pinned_under(eng, "Settings").count("return Settings(timeout, method)") == 1


REGISTRY = '''\
class Registry:
    """Handlers by the type of the value they render."""

    def __init__(self):
        self.handlers = {}

    def add_handler(self, key, handler):
        self.handlers[key] = handler


registry = Registry()


def text_handler(value):
    return str(value).strip()


registry.add_handler(str, text_handler)


def bytes_handler(value):
    # bytes come from the wire: decode them, replacing what is not ASCII
    return bytes(value).decode("ascii", "replace")


registry.add_handler(bytes, bytes_handler)


def report(item, when):
    message = "timed out after %s seconds" % item.timeout
    stream = item.config.get_terminal_writer()
    stream.line(message.center(80, "+"))
    stream.line("while running %s at %s" % (item.nodeid, when))
    stream.line(text_handler(item))
    stream.flush()
'''


def test_a_module_level_call_is_pinned_as_the_use_its_name_repeats(make_engine):
    """``registry.add_handler(bytes, bytes_handler)`` is written once, at module level: a registration the next
    one copies. With ``pin_module_calls`` the newest such line of each name is pinned (under the most used of the
    names it is newest for) and outlives a budget of half the cache; without it, it goes. A call inside a function
    body (``stream.line(text_handler(item))``) stays unpinned."""
    kept, pinned = {}, {}
    for on in (True, False):
        eng = make_engine(policy="default", min_tokens=0, sink_tokens=2, recent_tokens=8, pin_module_calls=on,
                          lift_rare_uses=0)  # the pin alone: a call of a name used once would rank as its rare use
        eng.append_message("user", REGISTRY, SpanInfo(kind=SegmentKind.FILE_VIEW, language="python"))
        eng.manager.enforce(eng.state, budget=len(eng.table) // 2)
        t = eng.table
        kept[on] = eng.tok.decode(t["token"].tolist())
        pinned[on] = eng.tok.decode(t["token"][t["state"] == int(State.PINNED)].tolist())
        if on:  # pinned under the most used of its names: registry or add_handler (two uses each), not bytes_handler
            key = zlib.crc32(b"registry.add_handler(bytes, bytes_handler)")
            under = set(t["name"][t["line"] == key].tolist())
            assert under and under <= {eng.state.names["registry"], eng.state.names["add_handler"]}
    assert "registry.add_handler(bytes, bytes_handler)" in pinned[True]
    assert "registry.add_handler(bytes, bytes_handler)" in kept[True]
    assert "registry.add_handler(bytes, bytes_handler)" not in kept[False]
    assert "registry.add_handler(" not in pinned[False]
    assert "def text_handler(value):" in pinned[True] and "stream.line(text_handler" not in pinned[True]


def test_past_the_pinned_cap_lines_repeating_a_better_one_go_first():
    """``release_repeats``: a pinned line whose tokens mostly repeat a better scoring line of the same use count (a
    table of ``is_x = check('X', 'is_x')`` bindings) is marked to go first; the best of the table, a unique line,
    however low its score, and a line of another use count are not. ``globals`` marks module bindings only."""
    glob, sig = int(BlockType.GLOBAL), int(BlockType.FUNCTION_SIGNATURE)
    lines = [([10, 11, 12, 13], glob), ([1, 2, 3, 4, 5], glob), ([1, 2, 3, 4, 6], glob), ([1, 2, 3, 4, 7], sig),
             ([1, 2, 3, 4, 8], glob), ([1, 2, 3, 9], glob)]
    table = {"token": torch.tensor([t for toks, _b in lines for t in toks]),
             "block_type": torch.tensor([b for toks, b in lines for _t in toks])}
    units, pos = [], 0
    for toks, _b in lines:
        units.append(list(range(pos, pos + len(toks))))
        pos += len(toks)
    uses, mean = [3, 3, 3, 3, 1, 3], [0.1, 0.9, 0.5, 0.3, 0.2, 0.4]
    marks = {mode: Lifecycle(base=CodeComp(), release_repeats=mode)._repeats(table, units, uses, mean)
             for mode in ("none", "globals", "all")}
    assert marks["none"] == [False] * 6
    assert marks["all"] == [False, False, True, True, False, True]  # line 5 shares 3 of 6 tokens with 1: 0.5 counts
    assert marks["globals"] == [False, False, True, False, False, True]


def _repeats_by_pairs(table, units, uses, mean, mode):
    """Reference for ``_repeats``: every line against every better scoring eligible line of its use count."""
    tokens, bt = table["token"].tolist(), table["block_type"].tolist()
    sets = [set(tokens[i] for i in u) for u in units]
    eligible = [mode == "all" or any(bt[i] == int(BlockType.GLOBAL) for i in u) for u in units]
    order = sorted(range(len(units)), key=lambda k: -mean[k])
    rank = {k: r for r, k in enumerate(order)}
    return [mode != "none" and eligible[k] and any(
        eligible[j] and uses[j] == uses[k] and rank[j] < rank[k]
        and len(sets[k] & sets[j]) >= 0.5 * len(sets[k] | sets[j]) for j in range(len(units)))
        for k in range(len(units))]


def test_repeated_lines_are_marked_as_comparing_every_pair_would():
    """The all-pairs product marks exactly the lines a pair-by-pair comparison marks (random tables, ties in
    score and use count, repeated tokens within a line)."""
    rng = random.Random(7)
    kinds = [int(BlockType.GLOBAL), int(BlockType.FUNCTION_SIGNATURE)]
    for _ in range(200):
        n = rng.randint(1, 30)
        lengths = [rng.randint(1, 8) for _ in range(n)]
        units = [list(range(sum(lengths[:k]), sum(lengths[:k + 1]))) for k in range(n)]
        table = {"token": torch.tensor([rng.randint(0, 12) for _ in range(sum(lengths))]),
                 "block_type": torch.tensor([rng.choice(kinds) for _ in range(sum(lengths))])}
        uses = [rng.randint(0, 2) for _ in range(n)]
        mean = [rng.choice([0.1, 0.2, rng.random()]) for _ in range(n)]
        for mode in ("none", "globals", "all"):
            got = Lifecycle(base=CodeComp(), release_repeats=mode)._repeats(table, units, uses, mean)
            assert got == _repeats_by_pairs(table, units, uses, mean, mode)


def test_a_released_binding_keeps_its_name_until_the_rest_of_the_lines_go(make_engine):
    """``OTHER_KEY`` is used once after the view, the functions three times each, ``LIMIT_KEY`` not yet (it waits);
    the imports are unused. Past the pinned cap the imports go, then ``OTHER_KEY``'s line: with ``release_keeps_names``
    bindings its name and ``=`` stay (the next line can still write ``OTHER_KEY``), with none nothing of it does.
    A second cap (a long session enforces again and again) releases the rest of the other lines before that name."""
    after = "stash[OTHER_KEY] = 1\n" + "alpha(beta(gamma(1)))\n" * 3
    kept, marked, again = {}, {}, ""
    for keeps in ("none", "bindings"):
        eng = _read_view(make_engine, "Fix the stash lookup.", after, release_keeps_names=keeps, pinned_cap=0.75)
        t = eng.table
        marked[keeps] = eng.tok.decode(t["token"][t["spells"]].tolist())
        kept[keeps] = _pinned_past_the_cap(eng)
        if keeps == "bindings":
            again = _pinned_past_the_cap(eng)
    assert marked["none"] == marked["bindings"] == " os sysLIMIT_KEYOTHER_KEY alpha beta gamma"
    assert "OTHER_KEY" not in kept["none"] and "import os" not in kept["none"]
    assert "OTHER_KEY =" in kept["bindings"] and "OTHER_KEY = make_key()" not in kept["bindings"]
    assert "LIMIT_KEY = make_key()" in kept["bindings"] and "def alpha(value):" in kept["bindings"]
    assert "OTHER_KEY =" in again and "def alpha" not in again  # the headers went, the name stayed
