# Tandem: `make demo` and `make test` are all a newcomer needs.
# .venv is made with Python 3.11 or newer (pyproject's requires-python): the first of python3.11,
# python3.12, python3.13, python3 that runs and is one (each is run: a pyenv shim is on the PATH
# even for a version it cannot run); `make PYTHON=/path/to/python3.x` names another.
PY_OK := -c 'import sys; sys.exit(sys.version_info < (3, 11))'
PYTHON ?= $(firstword $(foreach p,python3.11 python3.12 python3.13 python3,$(shell $(p) $(PY_OK) >/dev/null 2>&1 && echo $(p))))
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: demo docs test test-fast lint bench judge-model names-model venv install install-test compile redis promtool chromium clients clean

$(BIN)/python:
	@py='$(PYTHON)'; \
	if [ -z "$$py" ]; then echo "make: Tandem needs Python 3.11 or newer, and none of python3.11, python3.12, python3.13, python3 on the PATH is one: install one, or name it with make PYTHON=/path/to/python3.x" >&2; exit 1; fi; \
	$$py $(PY_OK) 2>/dev/null || { echo "make: Tandem needs Python 3.11 or newer; PYTHON=$$py is not one (or does not run)" >&2; exit 1; }; \
	echo "$$py -m venv $(VENV)"; $$py -m venv $(VENV)

# Stamps make a second `make` skip the install; they are redone when the pins change.
$(VENV)/.installed: $(BIN)/python pyproject.toml constraints.txt
	$(PIP) -e '.[compile]'
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml constraints.txt
	$(PIP) -e '.[test,dev]'
	touch $@

venv: $(BIN)/python
install: $(VENV)/.installed compile
install-test: $(VENV)/.installed-test compile

# The compiled hot modules (router/native_build.py, mypyc) into build/compiled/, rebuilt only when
# a source they were built from changed; without a C compiler or Python's headers, one line says
# so and the pure-Python modules are used (TANDEM_PURE=1 forces them at run time).
compile: $(VENV)/.installed
	$(BIN)/python -m router.native_build --optional --if-stale

demo: install
	$(BIN)/tandem demo

# The docs site, served at http://127.0.0.1:8000 with live reload (mkdocs is not in the demo's install).
docs: $(VENV)/.installed
	@$(BIN)/python -c "import mkdocs, material" 2>/dev/null || $(PIP) mkdocs mkdocs-material
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

# The tests start their own redis-server processes; Debian's package provides the binary.
redis:
	@command -v redis-server >/dev/null || { apt-get update -qq && apt-get install -y -qq redis-server; }

# promtool (Debian's prometheus package) checks and unit-tests the alert rules and the exposition;
# the same package's prometheus server scrapes real gateways in tests/deploy/test_live_prometheus.py.
promtool:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || { apt-get update -qq && apt-get install -y -qq prometheus; }

# A real headless browser for the operator's view (tests/test_operator_view.py).
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium; }

# The real agent clients tests/clients/ drives: Codex CLI and Claude Code (npm, so Debian's
# nodejs/npm), the OpenHands SDK, harbor's Terminus-2, mini-swe-agent, Aider, smolagents and
# openai-agents (Python 3.12 virtualenvs; Terminus-2's terminal is a tmux session). Installed
# once into ~/.cache/tandem/clients (about 3.5 GB).
clients:
	@command -v npm >/dev/null || { apt-get update -qq && apt-get install -y -qq nodejs npm; }
	@command -v tmux >/dev/null || { apt-get update -qq && apt-get install -y -qq tmux; }
	deploy/clients/install.sh

# The whole suite in the installed mode (compiled where `make compile` could build), then the
# compiled modules' tests and a gateway end to end in the other mode (pure Python); skipped when
# nothing is compiled, as both runs would be the same.
NATIVE_TESTS := tests/test_native.py tests/judge/test_status.py tests/judge/test_features.py \
	tests/judge/test_signals.py tests/judge/test_actions.py tests/test_prefix_parse.py tests/test_prefix_edits.py tests/test_chat.py \
	tests/test_privacy_detectors.py tests/test_privacy_search_paths.py tests/test_privacy_iban.py tests/test_phone_lengths.py
test: install-test redis promtool chromium clients
	$(BIN)/python -m pytest -q
	if $(BIN)/python -c "import router.native as n, sys; sys.exit(not n.state().modules)"; then \
		TANDEM_PURE=1 $(BIN)/python -m pytest -q -p no:cacheprovider $(NATIVE_TESTS); fi

test-fast: install-test redis promtool chromium clients
	$(BIN)/python -m pytest -q -m "not vllm"

lint: install-test
	$(BIN)/ruff check router judge sim tests benchmarks tools
	$(BIN)/ruff format --check router judge sim tests/docs tools
	$(BIN)/mypy --strict router judge sim tools
	# The layers (pyproject's [tool.importlinter]) and no import cycle at runtime.
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q -p no:cacheprovider tests/test_layers.py
	# The docs site (mkdocs.yml, docs/): a broken link, a missing page or one left out of the nav fails.
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site
	# The configuration reference is the settings models' own (python -m router.config_reference).
	$(BIN)/python -m router.config_reference | diff -u docs/configuration.md - || { echo "docs/configuration.md is stale: run python -m router.config_reference > docs/configuration.md"; exit 1; }

# benchmarks.wrk measures the tail under wrk beside the project's load generator; without wrk
# (apt-get install wrk) it says so and is skipped: `make test` does not need it.
bench: install-test redis
	$(BIN)/python -m benchmarks.overhead
	$(BIN)/python -m benchmarks.bookkeeping
	$(BIN)/python -m benchmarks.judge_latency
	$(BIN)/python -m benchmarks.privacy
	$(BIN)/python -m benchmarks.privacy.vault_writes
	$(BIN)/python -m benchmarks.metrics
	$(BIN)/python -m benchmarks.limits
	$(BIN)/python -m benchmarks.strategies
	$(BIN)/python -m benchmarks.translation
	$(BIN)/python -m benchmarks.memory
	$(BIN)/python -m benchmarks.wrk

# Rebuilds judge/models/ from the rows of real public agent runs checked in under judge/data/
# (made by `tandem judge import --no-text`; sources and licences in real-runs.sources.json).
# Fetches nothing; the same rows and seed give the same model.
# The judges' shape, chosen by leaving each family out in turn (docs/judge.md): fewer, slower
# trees, not given what differs by harness rather than by step (where the run is, its size, the
# task's shape).
JUDGE_TREES = --trees 60 --depth 3 --rate 0.05
JUDGE_HARNESS_SHAPE = step_log,step_frac64,context_chars_log,task_chars_log,task_has_code,task_mentions_test
# Sizes a harness sets (its outputs' formatting; how long its runs are): the state judge reads the
# output against the run's own recent outputs instead (judge/features.py's trend values).
JUDGE_STATE_SIZES = output_bytes_log,output_lines_log,last_text_log,run_labelled_log
judge-model: install-test
	$(BIN)/python -m judge train --data judge/data/real-runs.jsonl.gz --out judge/models/judge.onnx \
		--model gbdt --labels failed --cloud-share 0.4 $(JUDGE_TREES) --ignore $(JUDGE_HARNESS_SHAPE),$(JUDGE_STATE_SIZES) \
		--describe "real agent runs (judge/data/real-runs.sources.json), rows by tandem judge import --no-text; not given the step index, the run's size or the task's shape (they differ by harness), nor the output's own sizes (given against the run's recent ones) or how many steps are on record; label: the step's action failed (the harness-status label, judge/status.py)"
	$(BIN)/python -m judge train --data judge/data/real-runs.jsonl.gz --out judge/models/judge-draft.onnx \
		--model gbdt --labels failed --cloud-share 0.4 --sees draft $(JUDGE_TREES) \
		--ignore $(JUDGE_HARNESS_SHAPE),output_bytes_log,output_lines_log,last_text_log,draft_calls,draft_prose,draft_other,draft_plan,draft_invalid,draft_edit_incomplete,draft_creates_shown,draft_breaks_format,draft_misses_required \
		--describe "real agent runs (judge/data/real-runs.sources.json), rows by tandem judge import --no-text; sees the state and the action the run took (the edge's draft when serving), not the draft's shape (a call or prose: a format error in one harness, an answer in another) nor the sizes a harness sets (step index, run size, task shape, output sizes); a draft its harness will refuse (an editor call without what it needs, a reply out of the prompt's format, a call without an argument its tool requires) is scored by a floor, not the trees (judge/draft.py); label: that action failed"

# Rebuilds router/privacy/data/names_model.json (the opt-in person finder's prose model) from
# public corpora with person annotations, at the commits router/privacy/data/SOURCES.md names:
#   git clone https://github.com/amir-zeldes/gum build/corpora/gum   (and litbank, broad_twitter_corpus,
#   emerging_entities_17 the same way), then `make names-model`. Each may be a bare git directory.
CORPORA ?= build/corpora
names-model: install-test
	$(BIN)/python -m benchmarks.privacy.names_model train --gum $(CORPORA)/gum --litbank $(CORPORA)/litbank \
		--btc $(CORPORA)/broad_twitter_corpus --wnut17 $(CORPORA)/emerging_entities_17

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build/compiled
