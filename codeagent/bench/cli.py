"""``codeagent bench ...``: build task sets, run the policy x budget grid, measure speed, report.

Heavy modules (torch, the model, kvpress) are imported inside each command.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

import typer

from codeagent import options

app = typer.Typer(help="Benchmark KV policies and kvpress presses on agent tasks.", no_args_is_help=True,
                  add_completion=False)

ALL_PEERS = "streaming_llm,snapkv,tova,knorm,expected_attention,observed_attention"


def _names(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _policies(value: str) -> list[str]:
    """``all`` = every registered policy (``full`` first); otherwise the comma-separated names."""
    if value.strip() == "all":
        from codeagent.kvcache.registry import policy_names

        return policy_names()
    return _names(value)


def _floats(value: str, what: str) -> list[float]:
    from codeagent.errors import InputError

    try:
        return [float(v) for v in _names(value)]
    except ValueError:
        raise InputError(f"{what} must be comma-separated numbers, got {value!r}") from None


def _ints(value: str, what: str) -> list[int]:
    from codeagent.errors import InputError

    try:
        return [int(v) for v in _names(value)]
    except ValueError:
        raise InputError(f"{what} must be comma-separated integers, got {value!r}") from None


def _bench_model(model: str | None, config: Path | None, sets: list[str]) -> str:
    """The ``--model`` flag, else ``model.model`` named by ``--set`` or the YAML file, else smollm2 (the bench's
    fast default): the usual precedence, with the bench's own default."""
    import yaml

    from codeagent.config import parse_overrides
    from codeagent.kvcache.catalog import TEST_MODEL

    if model:
        return model
    layers = [parse_overrides(sets)]
    if config is not None and config.is_file():
        try:
            layers.append(yaml.safe_load(config.read_text()) or {})
        except yaml.YAMLError:
            pass  # load_settings reports it in one line
    for data in layers:
        section = data.get("model") if isinstance(data, dict) else None
        if isinstance(section, dict) and section.get("model"):
            return str(section["model"])
    return TEST_MODEL


def _command(*parts: object) -> str:
    """A shell-quoted command line for the reports."""
    return " ".join(shlex.quote(str(p)) for p in parts if p is not None and p != "")


@app.command()
def run(
    tasks: Path = typer.Option(..., "--tasks", help="Task file (JSONL; format in docs/formats.md, written by `codeagent bench build`)."),
    out: Path = typer.Option(..., "--out", help="Output directory (rows are resumed from it)."),
    policies: str = typer.Option("all", "--policies", help="Comma-separated policies, or all (every registered one)."),
    budgets: str = typer.Option("0.5,0.25,0.125", "--budgets", help="Fractions of the context kept."),
    peers: str = typer.Option("", "--peers", help=f"kvpress presses, e.g. {ALL_PEERS} (needs codeagent[peers])."),
    limit: Optional[int] = typer.Option(None, "--limit", min=1, help="At most N tasks per family."),
    families: str = typer.Option("", "--families", help="Comma-separated task families (default: all)."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Embedded name, HF model dir, .gguf file or HF id "
                                        "(default: model.model from --config/--set, else smollm2)."),
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    retry_errors: bool = typer.Option(False, "--retry-errors", help="Run again the cells that failed before."),
) -> None:
    """Every task under every policy and press at every budget; resumable; writes every report."""
    from codeagent.bench.runner import GridSpec, run_command

    spec = GridSpec(tuple(_policies(policies)), tuple(_floats(budgets, "--budgets")), tuple(_names(peers)))
    model = _bench_model(model, config, sets)
    cmd = _command("codeagent", "bench", "run", "--tasks", tasks, "--policies", policies, "--budgets", budgets,
                   *(("--peers", peers) if peers else ()), *(("--limit", limit) if limit else ()),
                   *(("--families", families) if families else ()), *(("--model", model) if model != "smollm2" else ()),
                   *(("--config", config) if config else ()), *(a for s in sets for a in ("--set", s)), "--out", out)
    run_command(tasks, spec, out, families=_names(families) or None, limit=limit, model=model, config=config,
                sets=sets, retry_errors=retry_errors, command=cmd)


@app.command()
def build(
    out: Path = typer.Option(..., "--out", help="Task file to write (JSONL)."),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same machine, same tasks)."),
    n: int = typer.Option(8, "--n", min=1, help="Tasks per family."),
    families: str = typer.Option("signature_recall,next_line,session", "--families",
                                 help="Comma-separated families (signature_recall, next_line, session, next_line_raw)."),
    styles: str = typer.Option("own", "--styles",
                               help="Comma-separated renderings of every task: own, raw, minisweagent, json, aider, "
                                    "openhands, sweagent, claude, cline, codex."),
    tokens: str = typer.Option("", "--tokens", help="Context size LO-HI in tokens for every family (default: each "
                               "family's own range; e.g. 4000-5500 so sessions fit a small model in every style)."),
) -> None:
    """Build tasks from real code on this machine (stdlib and installed packages)."""
    from codeagent.bench.build import build_command, parse_tokens

    build_command(out, seed, n, _names(families), _names(styles), parse_tokens(tokens) if tokens else None)


@app.command()
def speed(
    out: Path = typer.Option(..., "--out", help="Output directory for speed.json, speed.csv, speed.png."),
    lengths: str = typer.Option("1024,2048,4096,8192", "--lengths", help="Context lengths in tokens."),
    policies: str = typer.Option("full,default", "--policies", help="Comma-separated policies."),
    budget: int = typer.Option(1024, "--budget", min=16, help="Slot budget of every policy but full."),
    decode_tokens: int = typer.Option(64, "--decode-tokens", min=1, help="Tokens decoded per measurement."),
    model: str = typer.Option("smollm2", "--model", "-m", help="Model to measure."),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="torch threads (default: torch's choice)."),
) -> None:
    """Prefill and decode tokens/s, KV bytes, peak RSS and compression share against context length."""
    from codeagent.bench.speed import speed_command

    cmd = _command("codeagent", "bench", "speed", "--lengths", lengths, "--policies", policies, "--budget", budget,
                   "--decode-tokens", decode_tokens, *(("--model", model) if model != "smollm2" else ()),
                   *(("--threads", threads) if threads else ()), "--out", out)
    speed_command(out, _ints(lengths, "--lengths"), _names(policies), budget, decode_tokens, model, threads,
                  command=cmd)


@app.command()
def report(
    out: Path = typer.Option(..., "--out", help="A directory written by `codeagent bench run`."),
) -> None:
    """Rewrite the reports of a run directory from its rows (and speed.json when present)."""
    from codeagent.bench.runner import report_command

    report_command(out)


@app.command("agent")
def agent(
    tasks: Path = typer.Option(Path("examples"), "--tasks", help="Folder of task folders (issue.md, hidden/) or JSONL "
                               "of {id, repo}."),
    out: Path = typer.Option(Path("bench-out/agent"), "--out", help="Output directory (rows, summary, report, plot)."),
    policies: str = typer.Option("full", "--policies", help="Comma-separated KV policies, e.g. full,default."),
    budgets: str = typer.Option("1", "--budgets", help="Fractions of the full run's KV peak (1 = no budget)."),
    only: str = typer.Option("", "--only", help="Comma-separated task ids (default: all)."),
    model: Optional[str] = options.MODEL,
    config: Optional[Path] = options.CONFIG,
    sets: list[str] = options.SETS,
    engine: Optional[str] = options.ENGINE,
) -> None:
    """Solve each task in a fresh copy per policy and budget; held-back tests decide; solve rate, time, tokens."""
    from rich.console import Console

    from codeagent.bench.agent_bench import bench_agent, load_agent_tasks
    from codeagent.errors import InputError

    task_list = load_agent_tasks(tasks)
    if only:
        wanted = set(_names(only))
        unknown = wanted - {t.id for t in task_list}
        if unknown:
            raise InputError(f"unknown task id(s): {', '.join(sorted(unknown))}")
        task_list = [t for t in task_list if t.id in wanted]
    cmd = _command("codeagent", "bench", "agent", "--tasks", tasks, "--policies", policies, "--budgets", budgets,
                   *(("--only", only) if only else ()), *(("--model", model) if model else ()),
                   *(("--config", config) if config else ()), *(a for s in sets for a in ("--set", s)), "--out", out)
    con = Console(stderr=True)
    bench_agent(task_list, _names(policies), _floats(budgets, "--budgets"), out, model=model, config=config,
                sets=list(sets), engine_spec=engine, command=cmd, progress=lambda m: con.print(m, highlight=False))
    con.print(f"reports in {out}: report.md, summary.json, rows.csv, solve_rate.png")


@app.callback()
def _main() -> None:
    """Benchmark KV policies and kvpress presses on agent tasks."""


if __name__ == "__main__":
    app()
