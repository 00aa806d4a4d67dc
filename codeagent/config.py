"""Settings: every knob in one place, from defaults, a YAML file and CLI overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from codeagent.errors import InputError
from codeagent.kvcache.config import KVConfig, ModelConfig


class Settings(BaseModel):
    """All of codeagent's configuration."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: ModelConfig = Field(default_factory=ModelConfig)
    """The language model and how it runs."""
    kv: KVConfig = Field(default_factory=KVConfig)
    """The KV manager: policy, budget and compression knobs."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Sections owned by other parts (agent, sandbox), validated by their owners."""


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
            raise InputError(f"override {item!r} is not KEY=VALUE")
        key, raw = item.split("=", 1)
        node = out
        parts = key.strip().split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = yaml.safe_load(raw) if raw else None
    return out


def load_settings(path: Path | None = None, overrides: dict | None = None) -> Settings:
    """Defaults, then the YAML file (if any), then overrides; one-line errors for bad input."""
    data: dict = {}
    if path is not None:
        if not path.is_file():
            raise InputError(f"config file not found: {path}")
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise InputError(f"config file {path} is not valid YAML: {str(exc).splitlines()[0]}") from None
        if not isinstance(data, dict):
            raise InputError(f"config file {path} must hold a mapping")
    data = _merge(data, overrides or {})
    known = {k: v for k, v in data.items() if k in ("model", "kv", "extra")}
    known["extra"] = _merge(known.get("extra", {}), {k: v for k, v in data.items() if k not in ("model", "kv", "extra")})
    return validate(Settings, known)


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: dict, prefix: str = "") -> M:
    """``model`` validated from ``data``; the first problem as a one-line ``InputError``
    naming the setting (``prefix`` is the section's dotted path, e.g. ``"sandbox."``)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InputError(f"bad setting {prefix}{where}: {err['msg']}") from None
