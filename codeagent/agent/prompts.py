"""Rendering the Jinja2 templates in ``codeagent/prompts`` (one per phase, plus the action-format spec)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import jinja2

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=False, trim_blocks=True, autoescape=False)


def render(name: str, **values: object) -> str:
    """Template ``prompts/<name>.j2`` filled with ``values`` (a missing value is an error), stripped."""
    return _env().get_template(f"{name}.j2").render(**values).strip()
