#!/usr/bin/env bash
# GPU checks, for a machine with a CUDA device: the engine's exactness tests on the GPU (engine
# logits == transformers for llama and qwen2, chunked == single pass, gather of every slot changes
# nothing, statistics sum to the observed queries), then one speed row of the default model in bf16.
# Needs a CUDA build of torch in the venv (on x86_64: .venv/bin/pip install torch==2.14.1) and the
# models pulled (`codeagent models pull --all`). Without a CUDA device it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "gpu_check: no CUDA device visible to torch; nothing to check"
    exit 0
fi
"$PY" -c 'import torch; print("gpu_check:", torch.__version__, torch.cuda.get_device_name(0))'
CODEAGENT_TEST_DEVICE=cuda "$PY" -m pytest -q -p no:cacheprovider \
    tests/kvcache/test_engine.py tests/kvcache/test_slots.py tests/kvcache/test_attention.py \
    -k "logits or chunked or gather or statistics or merging or drop_then or snapshot or deferred"
"$PY" scripts/bench_models.py --device cuda --models qwen-coder-1.5b --weights bf16 --lengths 1024,8192 \
    --decode-tokens 64 --out "${OUT:-/tmp}/gpu_speed.json"
