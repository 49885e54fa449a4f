# The two commands of the README:
#   make demo   set up .venv/ and run `kenang demo`
#   make test   set up .venv/ and run the whole test suite (what CI runs)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kenang-installed

.PHONY: setup demo test bench clean

setup: $(STAMP)

# Reinstall only when the declared dependencies change; a built venv is reused.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kenang needs Python 3.11+ (found " + sys.version.split()[0] + "); run: make PYTHON=python3.11")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kenang demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/spine.py
	$(BIN)/python benchmarks/incremental.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
