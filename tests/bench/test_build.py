"""Task builder: deterministic, in range, probes answerable from an early part of the context."""

from __future__ import annotations

import json
import re

import pytest

from codeagent.bench import build
from codeagent.bench.build import FAMILIES, TOKEN_RANGES, TokenCounter, build_tasks
from codeagent.bench.tasks import load_tasks, render_chatml, task_spans
from codeagent.errors import InputError
from codeagent.kvcache.tags import SegmentKind

N = 2


@pytest.fixture(scope="module")
def built(tokenizer, stdlib):
    return build_tasks(0, N, tokenizer, roots=stdlib)


def test_deterministic_for_a_seed(tokenizer, built, stdlib):
    again = build_tasks(0, N, tokenizer, families=["next_line", "signature_recall"], roots=stdlib)
    first = {t.id: t for t in built}
    assert again and all(t.model_dump() == first[t.id].model_dump() for t in again)
    other = build_tasks(1, 1, tokenizer, families=["signature_recall"], roots=stdlib)
    assert other[0].segments != first["sigrecall-0-0000"].segments


def test_counts_ids_and_token_ranges(tokenizer, built):
    count = TokenCounter(tokenizer)
    assert [t.family for t in built] == [f for f in FAMILIES for _ in range(N)]
    assert len({t.id for t in built}) == len(built)
    for t in built:
        lo, hi = TOKEN_RANGES[t.family]
        assert lo <= t.n_context_tokens <= hi, (t.id, t.n_context_tokens)
        assert t.n_context_tokens == count(render_chatml(t.segments))
        assert t.meta["source"] and t.meta["path"]


def test_token_range_overrides_the_family_size(tokenizer, stdlib):
    """``--tokens``: a session short enough for a small model's window in every style, still a session."""
    short = build_tasks(0, 1, tokenizer, families=["session"], tokens=(3000, 4000), roots=stdlib)
    assert 3000 <= short[0].n_context_tokens <= 4000 < TOKEN_RANGES["session"][0]
    assert len(short[0].commits) >= 3 and short[0].probe.target
    assert build.parse_tokens(" 4000-5500") == (4000, 5500)
    for bad in ("4000", "5500-4000", "100-900", "a-b"):
        with pytest.raises(InputError, match="--tokens"):
            build.parse_tokens(bad)


@pytest.mark.parametrize("family", ["signature_recall", "session"])
def test_signature_is_recallable_from_the_first_half(built, family):
    for t in (t for t in built if t.family == family):
        context = render_chatml(t.segments)
        name = t.meta["function"]
        assert t.probe.prompt.endswith(f"def {name}(")
        header = f"def {name}({t.probe.target}"
        assert context.count(header) == 1, t.id
        assert context.index(header) < len(context) / 2
        assert len(re.findall(rf"\bdef {re.escape(name)}\(", context)) == 1  # no distractor defines it
        s1 = [s for s in t.segments if s.subtask == "s1" and header in s.text]
        assert s1 and t.commits[0] == "s1"
    if family == "session":
        assert all(len(t.commits) >= 3 for t in built if t.family == family)


def test_next_line_target_uses_an_early_identifier(built):
    for t in (t for t in built if t.family == "next_line"):
        context = render_chatml(t.segments)
        view = t.segments[-1].text.splitlines()
        ident, line = t.meta["identifier"], t.meta["line"]
        assert re.search(rf"\b{ident}\b", t.probe.target)
        assert t.meta["defined_line"] <= (line - 1) // 4
        assert len(view) == line - 1 and view[-1].startswith(f"{line - 1:>6}\t")
        assert not re.search(rf"\b{ident}\b", t.probe.prompt)
        assert t.probe.target.strip() not in context
        assert t.probe.prompt.startswith("Continuing") and t.probe.prompt.endswith("\n")


def test_transcripts_look_like_agent_sessions(built):
    for t in built:
        kinds = {s.kind for s in task_spans(t)}
        assert {SegmentKind.SYSTEM, SegmentKind.ISSUE, SegmentKind.PLAN, SegmentKind.FILE_VIEW} <= kinds
        if not t.family.startswith("next_line"):
            assert SegmentKind.TEST_LOG in kinds and "FAILURES" in render_chatml(t.segments)


def test_build_command_writes_a_loadable_file(tmp_path, tokenizer, stdlib, monkeypatch, capsys):
    monkeypatch.setattr(build, "load_default_tokenizer", lambda: tokenizer)
    monkeypatch.setattr(build, "source_roots", lambda: stdlib)  # site-packages change with PyPI's releases
    out = build.build_command(tmp_path / "t.jsonl", seed=0, n=1, families=["signature_recall"])
    tasks = load_tasks(out)
    assert [t.id for t in tasks] == ["sigrecall-0-0000"]
    assert "meta" in json.loads(out.read_text().splitlines()[0])
    assert capsys.readouterr().out.startswith(f"wrote 1 tasks to {out}: signature_recall 1 (")
    with pytest.raises(InputError, match="unknown task family 'poems'"):
        build.build_command(tmp_path / "x.jsonl", seed=0, n=1, families=["poems"])


def test_functions_found_in_a_small_file(tmp_path):
    src = tmp_path / "lib" / "mod.py"
    src.parent.mkdir()
    src.write_text(
        "def fetch_with_retry(url, retries=3, backoff=0.5):\n"
        "    '''Fetch.'''\n    n = 0\n    while n < retries:\n        n += 1\n    return url\n\n"
        "def tiny(a, b=1):\n    return a\n\n"
        "def no_defaults(a, b):\n    x = a\n    y = b\n    z = x\n    return z\n" + "# pad\n" * 600
    )
    sf = build.parse_source(src, "lib/mod.py")
    assert [f.name for f in sf.functions] == ["fetch_with_retry"]
    f = sf.functions[0]
    assert f.params == "url, retries=3, backoff=0.5):" and f.param_names == ("url", "retries", "backoff")
    assert f.defaults == {"retries": "3", "backoff": "0.5"} and f.stmt_lines == (3, 4, 5, 6)
    (tmp_path / "lib" / "broken.py").write_text("def (:\n" * 600)
    assert build.parse_source(tmp_path / "lib" / "broken.py", "lib/broken.py") is None
    assert [rel for _, rel in build.list_sources((tmp_path,))] == ["lib/broken.py", "lib/mod.py"]


def _module(tag: str, doc_lines: int) -> str:
    """A module of functions whose docstrings run ``doc_lines`` long lines before the first statement."""
    doc = "".join(f"    {tag} notes on the contract, line {i}: " + "x" * 100 + "\n" for i in range(doc_lines))
    funcs = [
        f"def {tag}_step_{i}(source, target, limit={i}, strict=False):\n"
        f'    """\n{doc}    """\n'
        f"    count = len(source) + {i}\n    if strict:\n        count += limit\n    return target, count\n"
        for i in range(6)
    ]
    return "\n\n".join(funcs) + "\n" + "# filler comment line\n" * 40


def test_tasks_whose_failing_run_cannot_fit_are_rejected(tmp_path, tokenizer):
    # half the files have functions whose traceback (docstring included) exceeds any step budget:
    # a task that draws one for its failing test must be rejected, never built without a failing run
    for i in range(24):
        path = tmp_path / "pkg" / f"mod{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(_module(f"m{i}", 90 if i % 2 else 2))
    tasks = build_tasks(0, 4, tokenizer, families=["signature_recall"], roots=[tmp_path])
    assert len(tasks) == 4
    for t in tasks:
        assert SegmentKind.TEST_LOG in {s.kind for s in task_spans(t)}
        assert "FAILURES" in render_chatml(t.segments), t.meta["files"]
