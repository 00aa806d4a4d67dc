"""Building the pieces a command needs from settings: the engine (model + managed cache)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional


def settings_from(config: Optional[Path], sets: list[str], model: str | None = None):
    """Settings from a YAML file, ``--set`` overrides and the ``--model`` option."""
    from codeagent.config import load_settings, parse_overrides

    over = parse_overrides(sets)
    section = over.get("model")
    if model is not None and (section is None or isinstance(section, dict)):  # anything else: load_settings says why
        over["model"] = {**(section or {}), "model": model}
    return load_settings(config, over)


def pull_progress():
    """Rich progress bars on stderr for ``models.pull`` (bytes, rate and ETA; tensors converted)."""
    from codeagent.kvcache.pull_display import RichProgress

    return RichProgress()


def build_engine(settings, progress: Callable[[str], None] | None = None):
    """Load the model named in ``settings`` (pulling the embedded one on first use) in an engine."""
    from codeagent.kvcache import models
    from codeagent.kvcache.engine import Engine

    from codeagent.kvcache.catalog import MODELS

    m = settings.model
    if m.model in MODELS and not models.is_ready(m.model):
        if progress:
            progress(f"model {m.model} is not pulled yet: pulling it (once)")
        with pull_progress() as bars:
            models.pull(m.model, progress=bars)
    loaded = models.load(m.model, m.weights, m.device, m.max_memory)
    return Engine(loaded, settings.model, settings.kv)
