"""Settings through the real entry point: validation before any model loads (with "did you mean"),
`config show` (effective settings as YAML) and `config show --doc` (the reference in docs/settings.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.test_cli import _one_error, codeagent

DOCS = Path(__file__).resolve().parents[1] / "docs" / "settings.md"


@pytest.mark.parametrize("sets,expect", [
    (["nosuch.key=1"], "unknown settings section 'nosuch'"),
    (["sandbx.kind=local"], "unknown settings section 'sandbx' (did you mean sandbox?)"),
    (["kv.polcy=window"], "unknown setting kv.polcy (did you mean kv.policy?)"),
    (["agent.candidats=2"], "unknown setting agent.candidats (did you mean agent.candidates?)"),
    (["sandbox.imag=x"], "unknown setting sandbox.imag (did you mean sandbox.image?)"),
    (["kv.policy=windw"], "bad setting kv.policy: unknown policy 'windw' (did you mean window?)"),
    (["kv.budget_tokens=-1"], "bad setting kv.budget_tokens: must be at least 1"),
    (["kv.policy=[1,2"], "the value is not valid YAML"),
    (["kv"], "is not KEY=VALUE"),
    (["model=3"], "settings section model must be a mapping"),
    (["sandbox.kind=vm"], "bad setting sandbox.kind"),
])
def test_bad_settings_fail_in_one_line_before_the_model_loads(sets, expect):
    """A model name that cannot load is given too: the setting's error must come first."""
    args = [a for s in sets for a in ("--set", s)]
    assert expect in _one_error(codeagent("chat", "hi", "--model", "no-such-model-xyz", *args))


def test_misspelt_yaml_section_is_named_with_a_suggestion(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("sandbx:\n  kind: local\n")
    assert "unknown settings section 'sandbx' (did you mean sandbox?)" in _one_error(
        codeagent("config", "show", "--config", str(cfg)))
    cfg.write_text("kv: [1, 2\n")
    assert "is not valid YAML" in _one_error(codeagent("config", "show", "--config", str(cfg)))


def test_config_show_prints_the_effective_settings(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("kv:\n  policy: window\n  recent_tokens: 32\nsandbox:\n  kind: local\n")
    r = codeagent("config", "show", "--config", str(cfg), "--set", "kv.recent_tokens=16", "--set",
                  "agent.candidates=2", "--model", "smollm2")
    assert r.returncode == 0, r.stderr
    data = yaml.safe_load(r.stdout)
    assert list(data) == ["model", "kv", "agent", "sandbox"]
    assert data["kv"]["policy"] == "window" and data["kv"]["recent_tokens"] == 16  # --set beats the file
    assert data["agent"]["candidates"] == 2 and data["agent"]["max_debug_rounds"] == 1  # defaults filled in
    assert data["sandbox"]["kind"] == "local" and data["model"]["model"] == "smollm2"


def test_config_show_doc_is_the_docs_page_and_names_every_key():
    r = codeagent("config", "show", "--doc")
    assert r.returncode == 0, r.stderr
    from codeagent.config import sections

    for name, cls in sections().items():
        for key in cls.model_fields:
            assert f"- `{name}.{key}` (" in r.stdout, f"{name}.{key} missing from the reference"
    assert "`kv.policy` (`str`, default `\"default\"`): Policy name" in r.stdout  # from the field docstring
    assert "`agent.candidates` (`int`, >= 1, default `4`)" in r.stdout
    assert DOCS.read_text() == r.stdout, "docs/settings.md is stale: run `codeagent config show --doc > docs/settings.md`"
