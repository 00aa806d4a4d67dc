# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test install model bench-speed clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# torch first, pinned to the CPU build on this machine's disk, so nothing pulls a CUDA build.
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

model: install
	$(BIN)/codeagent models pull qwen-coder-1.5b

demo: model
	$(BIN)/codeagent solve examples/calc/issue.md --repo examples/calc

# the suite uses all three: smollm2 (fast tests), qwen-coder-0.5b (qwen2 exactness), the default (chat, solve)
test: install
	$(BIN)/codeagent models pull --all
	$(BIN)/python -m pytest -q -ra

bench-speed: model
	$(BIN)/python scripts/bench_engine.py --out docs/engine_speed.json

clean:
	rm -rf $(VENV) .pytest_cache
