"""``codeagent config show``: the effective settings as YAML, or the settings reference."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from codeagent import options

app = typer.Typer(no_args_is_help=True, help="Show the effective settings or the settings reference.")


@app.command("show")
def show(
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    model: Optional[str] = options.MODEL,
    doc: bool = typer.Option(False, "--doc", help="Print the reference of every setting (Markdown) instead."),
) -> None:
    """Print the settings a command given the same --config/--set/--model would run with, as YAML."""
    import yaml

    from codeagent.runtime import settings_from
    from codeagent.settings_doc import effective, reference

    if doc:
        if config is not None or sets or model is not None:
            raise typer.BadParameter("--doc prints the reference of defaults; it takes no --config, --set or --model")
        typer.echo(reference(), nl=False)
        return
    settings = settings_from(config, sets, model)
    typer.echo("# effective settings: defaults < --config < --set < --model\n"
               + yaml.safe_dump(effective(settings), sort_keys=False, default_flow_style=False), nl=False)
