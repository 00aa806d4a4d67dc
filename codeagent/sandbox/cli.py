"""``codeagent sandbox ...``: build the docker image commands run in."""

from __future__ import annotations

import typer

app = typer.Typer(help="Sandbox set-up.", no_args_is_help=True, add_completion=False)


@app.command()
def build(
    image: str = typer.Option("codeagent-sandbox:bookworm", help="Image name to create."),
    pull: bool = typer.Option(True, help="Try pulling python:3.11-slim before building locally."),
    force: bool = typer.Option(False, help="Rebuild even when the image exists."),
) -> None:
    """Pull or build the sandbox image (idempotent: skips when it exists)."""
    from codeagent.errors import CodeagentError
    from codeagent.sandbox.image import build_image

    try:
        build_image(image, pull=pull, force=force, log=lambda m: typer.echo(f"sandbox: {m}"))
    except CodeagentError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


@app.callback()
def _main() -> None:
    """Sandbox set-up."""


if __name__ == "__main__":
    app()
