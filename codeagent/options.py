"""Options shared by several commands, declared once."""

from __future__ import annotations

from pathlib import Path

import typer

MODEL_HELP = ("Embedded name (default qwen-coder-1.5b; `codeagent models list`), a converted model's name, "
              "an HF model dir, a .gguf file or an HF id. Overrides model.model from --config/--set.")
SANDBOX_HELP = ("Where commands run: auto (docker when a daemon answers), docker or local "
                "(default sandbox.kind from the settings, auto).")

MODEL = typer.Option(None, "--model", "-m", help=MODEL_HELP)
CONFIG = typer.Option(None, "--config", "-c", help="YAML settings file (`codeagent config show --doc` lists every key).")
SETS = typer.Option([], "--set", "-s", help="Override a setting, e.g. kv.policy=window (repeatable).")
SANDBOX = typer.Option(None, "--sandbox", help=SANDBOX_HELP)
BUDGET = typer.Option(None, "--budget", min=16, help="KV budget in slots (default agent.kv_budget_tokens, 3072).")
REPO = typer.Option(Path("."), "--repo", "-r", help="Repository (or plain folder) to work on.")
ENGINE = typer.Option(None, "--engine", hidden=True, help="Test engine: scripted:PATH.")
