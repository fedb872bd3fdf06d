# Everything a fresh machine needs: `make demo` and `make test` create and reuse .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SHARED ?= ../shared

.PHONY: demo test lint typecheck conformance bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/dratwin validate -f examples/
	$(BIN)/dratwin allocate -f examples/ --node p5-node-1 --claim ml/vllm-gpu --claim ml/train-gpu-efa
	$(BIN)/dratwin allocate -f examples/ --node p4d-node-1 --claim ml/mig-1g
	@# This claim cannot fit (exit status 1): the output explains why.
	$(BIN)/dratwin allocate -f examples/ --node p5-node-1 --claim ml/llama-70b-fp16-gpu || test $$? -eq 1

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest
	$(BIN)/python $(SHARED)/conformance/run --cli $(BIN)/dratwin

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

conformance: $(STAMP)
	$(BIN)/python $(SHARED)/conformance/run --cli $(BIN)/dratwin

bench: $(STAMP)
	$(BIN)/dratwin bench

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
