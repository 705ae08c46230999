# The two commands: `make compile` and `make test`. Each sets up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: compile test e2e check lint bench clean fuzz wheelhouse coverage

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $(STAMP)

compile: $(STAMP)
	$(BIN)/gpufleet compile --policies policies --out out
	$(BIN)/gpufleet schema > docs/policy.schema.json
	$(BIN)/gpufleet schema --diagnostics > docs/diagnostics.schema.json

check: $(STAMP)
	$(BIN)/gpufleet check --policies policies

lint: $(STAMP)
	$(BIN)/ruff check compiler tests benchmarks scripts
	$(BIN)/ruff format --check compiler tests benchmarks scripts
	$(BIN)/mypy

# Wheels of gpufleet's runtime dependencies and build backend, pinned by requirements.lock, made
# with PyPI once per lock in ~/.cache/gpufleet/wheels/ (tests/wheelhouse.py): the test that
# installs a tag with pipx (tests/test_install.py) installs from them with no index.
wheelhouse: $(STAMP)
	PYTHONPATH=scripts $(BIN)/python -m tests.wheelhouse

# GPUFLEET_WHEELHOUSE=required: a test that needs the wheelhouse fails rather than skips.
# `-n auto`: one pytest worker per CPU (pytest-xdist); the suite is about 7 minutes on one core.
test: $(STAMP) lint wheelhouse
	GPUFLEET_WHEELHOUSE=required $(BIN)/python -m pytest -n auto

# Branch coverage of compiler/ over the suite, gpufleet child processes included (the settings
# are [tool.coverage.*] in pyproject.toml); the total is the last line.
coverage: $(STAMP)
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest -p no:cacheprovider -q
	$(BIN)/coverage combine --quiet
	$(BIN)/coverage report

# The long fuzz profile (docs/fuzzing.md): FUZZ_CASES mutated fleets through `gpufleet
# compile`, FUZZ_JOBS at a time, from case FUZZ_FIRST of seed FUZZ_SEED (default: today);
# failing cases are saved under gpufleet-fuzz/ in $TMPDIR (or /tmp) to replay. `make test`
# runs the CI profile (tests/fuzz/test_fuzz_pipeline.py).
FUZZ_CASES ?= 10000
FUZZ_SEED ?= $(shell date -u +%Y-%m-%d)
FUZZ_FIRST ?= 0
FUZZ_JOBS ?= 1
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz run --cases $(FUZZ_CASES) --seed '$(FUZZ_SEED)' \
	  --first $(FUZZ_FIRST) --jobs $(FUZZ_JOBS)

# The real-cluster suite (docs/cluster-test.md): builds kube-apiserver,
# kube-controller-manager and kubectl of each version the example fleet targets and the Kueue
# manager of each supported minor (once, cached in ~/.cache/gpufleet/), then applies every
# cluster's tree to a real control plane and runs Kueue on it.
# Without Go the tests skip with one line of reason.
e2e: $(STAMP)
	@if command -v go >/dev/null; then \
	  for version in $$($(BIN)/python -m tests.e2e.versions); do \
	    scripts/kube-local build --version $$version || exit 1; \
	  done; \
	  for version in $$($(BIN)/python -m tests.e2e.versions --kueue); do \
	    scripts/kube-local kueue-build --version $$version || exit 1; \
	  done; \
	fi
	GPUFLEET_E2E=1 $(BIN)/python -m pytest -p no:cacheprovider -rs tests/e2e

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
