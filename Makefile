# Tandem: `make demo` and `make test` are all a newcomer needs.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: demo test test-fast lint bench judge-model venv install install-test redis promtool clients clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Stamps make a second `make` skip the install; they are redone when the pins change.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml constraints.txt
	$(PIP) -e '.[test,dev]'
	touch $@

venv: $(BIN)/python
install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: install
	$(BIN)/tandem demo

# The tests start their own redis-server processes; Debian's package provides the binary.
redis:
	@command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }

# promtool (Debian's prometheus package) checks and unit-tests the alert rules and the exposition.
promtool:
	@command -v promtool >/dev/null || { apt-get update -qq && apt-get install -y -qq prometheus; }

# The real agent clients tests/clients/ drives: Codex CLI and Claude Code (npm, so Debian's
# nodejs/npm), the OpenHands SDK and harbor's Terminus-2 (Python 3.12 virtualenvs; Terminus-2's
# terminal is a tmux session). Installed once into ~/.cache/tandem/clients (about 1.9 GB).
clients:
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	@command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux; }
	deploy/clients/install.sh

test: install-test redis promtool clients
	$(BIN)/python -m pytest -q

test-fast: install-test redis promtool
	$(BIN)/python -m pytest -q -m "not vllm"

lint: install-test
	$(BIN)/ruff check router judge tests benchmarks
	$(BIN)/ruff format --check router judge
	$(BIN)/mypy --strict router judge

bench: install-test redis
	$(BIN)/python -m benchmarks.overhead
	$(BIN)/python -m benchmarks.bookkeeping
	$(BIN)/python -m benchmarks.judge_latency
	$(BIN)/python -m benchmarks.privacy
	$(BIN)/python -m benchmarks.metrics
	$(BIN)/python -m benchmarks.strategies
	$(BIN)/python -m benchmarks.translation

# Rebuilds judge/models/ from the demo's simulated trajectories (reproducible: fixed seeds).
judge-model: install-test
	$(BIN)/python -m router.demo.dataset build-model

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
