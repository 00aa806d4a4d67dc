"""Building the pieces a command needs from settings: the engine (model + managed cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional


def settings_from(config: Optional[Path], sets: list[str], model: str | None = None):
    """Settings from a YAML file, ``--set`` overrides and the ``--model`` option."""
    from codeagent.config import load_settings, parse_overrides

    over = parse_overrides(sets)
    if model is not None:
        over.setdefault("model", {})["model"] = model
    return load_settings(config, over)


def build_engine(settings, progress: Callable[[str], None] | None = None):
    """Load the model named in ``settings`` (pulling the embedded one on first use) in an engine."""
    from codeagent.kvcache import models
    from codeagent.kvcache.engine import Engine

    spec = settings.model.model
    if spec in models.EMBEDDED:
        models.pull(spec, progress=progress)  # no-op when already converted
    loaded = models.load(spec, settings.model.dtype, settings.model.device)
    return Engine(loaded, settings.model, settings.kv)
