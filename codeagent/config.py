"""Settings: every knob in one place, from defaults, a YAML file and CLI overrides.

Precedence: defaults < YAML file (``--config``) < ``--set`` < explicit flags (``--model``, ``--budget``).
Every section is validated when the settings load, before any model: an unknown section or key is an
error with a "did you mean", and so is a value its model rejects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codeagent.errors import InputError
from codeagent.kvcache.config import KVConfig, ModelConfig
from codeagent.suggest import did_you_mean


class Settings(BaseModel):
    """All of codeagent's configuration."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: ModelConfig = Field(default_factory=ModelConfig)
    """The language model and how it runs."""
    kv: KVConfig = Field(default_factory=KVConfig)
    """The KV manager: policy, budget and compression knobs."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Sections owned by other parts (agent, sandbox), validated by their owners."""


def sections() -> dict[str, type[BaseModel]]:
    """Every settings section by name and the pydantic model that validates it."""
    from codeagent.agent.config import AgentConfig
    from codeagent.sandbox.config import SandboxConfig

    return {"model": ModelConfig, "kv": KVConfig, "agent": AgentConfig, "sandbox": SandboxConfig}


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def parse_overrides(items: list[str]) -> dict:
    """``["kv.policy=window", "kv.budget_tokens=512"]`` -> nested dict (values parsed as YAML)."""
    out: dict = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"--set {item!r} is not KEY=VALUE (e.g. kv.policy=window)")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(p.strip() for p in parts):
            raise InputError(f"--set {item!r}: {key.strip()!r} is not a dotted setting name (e.g. kv.policy)")
        try:
            value = yaml.safe_load(raw) if raw else None
        except yaml.YAMLError as exc:
            raise InputError(f"--set {item!r}: the value is not valid YAML ({str(exc).splitlines()[0]})") from None
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise InputError(f"--set {item!r} conflicts with another --set of {p}")
        node[parts[-1]] = value
    return out


def _read_yaml(path: Path) -> dict:
    if not path.is_file():
        raise InputError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except UnicodeDecodeError:
        raise InputError(f"config file {path} is not text") from None
    except yaml.YAMLError as exc:
        raise InputError(f"config file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise InputError(f"config file {path} must hold a mapping of sections ({', '.join(sections())})")
    return data


def load_settings(path: Path | None = None, overrides: dict | None = None) -> Settings:
    """Defaults, then the YAML file (if any), then overrides; every section validated, one-line errors."""
    data = _merge(_read_yaml(Path(path)) if path is not None else {}, overrides or {})
    known = sections()
    checked: dict[str, BaseModel] = {}
    for name, value in data.items():
        if name not in known:
            raise InputError(f"unknown settings section {name!r}{did_you_mean(str(name), known)} "
                             f"(sections: {', '.join(known)})")
        if value is not None and not isinstance(value, dict):
            raise InputError(f"settings section {name} must be a mapping of keys, not {value!r}")
        checked[name] = validate(known[name], value or {}, f"{name}.")
    check_values(checked.get("kv") or KVConfig())
    extra = {k: v or {} for k, v in data.items() if k not in ("model", "kv")}
    return Settings(model=checked.get("model") or ModelConfig(), kv=checked.get("kv") or KVConfig(), extra=extra)


def check_values(kv: KVConfig) -> None:
    """What the KV section's types cannot say: the policy exists and an explicit budget is positive."""
    from codeagent.kvcache.registry import POLICIES, load_policies

    budget = getattr(kv, "budget_tokens", None)
    if budget is not None and budget < 1:
        raise InputError(f"bad setting kv.budget_tokens: must be at least 1 slot (or null for none), not {budget}")
    load_policies()
    try:
        POLICIES.get(kv.policy)
    except InputError as exc:  # names the known policies, with a "did you mean"
        raise InputError(f"bad setting kv.policy: {exc}") from None


M = TypeVar("M", bound=BaseModel)


def _fields_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """Field names of the (nested) pydantic model reached from ``model`` by ``loc``; [] where there is none."""
    for part in loc:
        field = model.model_fields.get(str(part))
        ann = getattr(field, "annotation", None)
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return list(model.model_fields)


def validate(model: type[M], data: dict, prefix: str = "") -> M:
    """``model`` validated from ``data``; the first problem as a one-line ``InputError`` naming the
    setting (``prefix`` is the section's dotted path, e.g. ``"sandbox."``); an unknown key gets a
    "did you mean" from the fields of the model it was given to."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            parent = err["loc"][:-1]
            path = prefix + "".join(f"{p}." for p in parent)
            raise InputError(f"unknown setting {prefix}{where}"
                             f"{did_you_mean(str(err['loc'][-1]), _fields_at(model, parent), path)}") from None
        raise InputError(f"bad setting {prefix}{where}: {err['msg']}") from None
