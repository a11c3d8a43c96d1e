# Quick start: `make demo` runs the main job, `make test` runs the tests; both set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean fuzz soak

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[demo]"
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/parafeed demo

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest

# Reliability (docs/reliability.md): 100,000 fuzzed TFRecord files and tf.train.Examples (+10,000 cache files), and a
# soak ten times the size of the one in `make test` (10M elements through the process pool, 15,000 iterators).
fuzz: $(VENV)/.installed-dev
	$(BIN)/python -m tests.reliability.fuzz --inputs 100000

soak: $(VENV)/.installed-dev
	PARAFEED_SOAK_ELEMENTS=10000000 PARAFEED_SOAK_ITERATORS=10000 $(BIN)/python -m pytest -q -s tests/reliability/test_soak.py

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,bench]'
	$(BIN)/pip install -q --no-deps mosaicml-streaming==0.13.0
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-demo

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/formats.py
	$(BIN)/python benchmarks/images.py
	$(BIN)/python benchmarks/python_fn.py
	$(BIN)/python benchmarks/distribution.py
	$(BIN)/python benchmarks/remote.py
	$(BIN)/python benchmarks/remote_faults.py
	$(BIN)/python benchmarks/ray_offload.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .hypothesis
