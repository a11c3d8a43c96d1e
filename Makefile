# Quick start: `make demo` runs the main job, `make test` runs the tests; both set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
comma := ,
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean fuzz soak porting

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `install EXTRAS`: the package and its extras, by uv (seconds; .ci/uv_sources.py points it where pip is configured
# to look), or by pip (minutes) if uv cannot do it.
define install
	($(BIN)/pip install -q uv==0.13.9 && $(BIN)/uv pip install --python $(BIN)/python -q \
		$$($(BIN)/python .ci/uv_sources.py) -e '.[$(1)]') || $(BIN)/pip install -q -e '.[$(1)]'
endef

$(VENV)/.installed-demo: pyproject.toml setup.py | $(BIN)/python
	$(call install,demo)
	touch $@

$(VENV)/.installed-dev: pyproject.toml setup.py | $(BIN)/python
	$(call install,dev)
	touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/parafeed demo

# Two pytest-xdist workers; the tests that share a Ray cluster, an S3 server or a TensorFlow job run on one of them
# together (tests/conftest.py). A plain `pytest` runs them all in one process.
test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n 2 --dist loadgroup

# The porting corpus (docs/porting.md): every real input function that ports, run under TensorFlow and renamed under
# parafeed (make test runs three of them).
porting: $(VENV)/.installed-dev
	PARAFEED_PORTING_ALL=1 $(BIN)/python -m pytest -n 2 tests/porting

# Reliability (docs/reliability.md): 100,000 fuzzed TFRecord files and tf.train.Examples (+10,000 cache files) and the
# property tests five times with new examples each time (make test runs them derandomized); a soak ten times the size
# of the one in `make test` (10M elements through the process pool, 15,000 iterators).
fuzz: $(VENV)/.installed-dev
	$(BIN)/python -m tests.reliability.fuzz --inputs 100000
	for run in 1 2 3 4 5; do HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -q -n 2 \
		$$(grep -rl "from hypothesis import" tests --include="test_*.py") || exit 1; done

soak: $(VENV)/.installed-dev
	PARAFEED_SOAK_ELEMENTS=10000000 PARAFEED_SOAK_ITERATORS=10000 $(BIN)/python -m pytest -q -s tests/reliability/test_soak.py

# The checks CI runs beside the tests: lint, format, the import layers (docs/design.md), types.
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks examples .ci
	$(BIN)/ruff format --check src tests benchmarks examples .ci
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

$(VENV)/.installed-bench: pyproject.toml setup.py | $(BIN)/python
	$(call install,dev$(comma)bench)
	$(BIN)/pip install -q --no-deps mosaicml-streaming==0.13.0
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed-demo

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/formats.py
	$(BIN)/python benchmarks/images.py
	$(BIN)/python benchmarks/python_fn.py
	$(BIN)/python benchmarks/headroom.py --offload
	$(BIN)/python benchmarks/scaling.py
	$(BIN)/python benchmarks/gpu_feed.py --batch 256
	$(BIN)/python benchmarks/gpu_feed.py --model gil --batch 64
	$(BIN)/python benchmarks/distribution.py
	$(BIN)/python benchmarks/remote.py
	$(BIN)/python benchmarks/remote_faults.py
	$(BIN)/python benchmarks/ray_offload.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis
