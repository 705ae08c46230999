# The two commands: `make compile` and `make test`. Each sets up .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: compile test check lint bench clean

$(STAMP): pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -c requirements.lock -e '.[dev]'
	touch $(STAMP)

compile: $(STAMP)
	$(BIN)/gpufleet compile --policies policies --out out
	$(BIN)/gpufleet schema > docs/policy.schema.json

check: $(STAMP)
	$(BIN)/gpufleet check --policies policies

lint: $(STAMP)
	$(BIN)/ruff check compiler tests benchmarks
	$(BIN)/ruff format --check compiler tests benchmarks
	$(BIN)/mypy

test: $(STAMP) lint
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
