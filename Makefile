# The two commands of the README:
#   make demo   set up .venv/ and run `kenang demo`
#   make test   set up .venv/ and run the whole test suite (what CI runs)
# and for contributors:
#   make lint   the gates CI runs before the tests: ruff (lint + format check), mypy, deptry
#   make fmt    fix what ruff can fix by itself (formatting, import order, upgrades)
#   make docs   regenerate the --help listings in docs/ from the CLI (tools/helpdocs.py)
#   make test-fast  the tests without the ones marked integration or model (a few minutes)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kenang-installed

# llama-cpp-python compiles llama.cpp from source (about 10 minutes on 2 cores). It is
# built once into a wheel cache outside the clone and reused by every later setup,
# including CI's fresh clones. The build is portable (AVX2, no AVX-512/AMX): a
# -march=native build crashed in llama.cpp's AMX kernels on this project's machines.
LLAMA_VERSION    := 0.3.36
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
                    -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
                    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF
WHEELS ?= $(HOME)/.cache/kenang/wheels/llama-cpp-python-$(LLAMA_VERSION)-portable-1

.PHONY: setup demo test test-fast lint fmt docs bench notebooks clean llama-wheel

setup: $(STAMP)

llama-wheel: $(WHEELS)/.built

$(WHEELS)/.built:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kenang needs Python 3.11+ (found " + sys.version.split()[0] + "); run: make PYTHON=python3.11")'
	mkdir -p $(WHEELS)
	@echo "building llama-cpp-python $(LLAMA_VERSION) once into $(WHEELS) (about 10 minutes)..."
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PYTHON) -m pip wheel --quiet --disable-pip-version-check \
		--no-cache-dir --no-deps -w $(WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	touch $@

# Reinstall only when the declared dependencies change; a built venv is reused.
$(STAMP): pyproject.toml $(WHEELS)/.built
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --find-links $(WHEELS) -e '.[test,dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kenang demo

# JupyterLab on the notebooks, reading the demo home unless KENANG_HOME says otherwise.
notebooks: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[notebooks,test]' --find-links $(WHEELS)
	$(BIN)/jupyter lab notebooks/

# The whole suite on one pytest worker per core (pytest-xdist, `-n auto`), each with its own
# Prefect test server: on 2 cores it takes about two thirds of the time of one worker.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto

# Leaves out the tests marked integration (real servers, workers, runs in child processes)
# and model (the real bundled models); `make test` runs them all. One worker: starting a
# pool of processes for each test's night costs more than its few days of work
# (tests/test_pool.py asks for its workers itself). `-n auto` (pytest-xdist): the tests
# spread over one pytest process per core, each with its own Prefect test server.
test-fast: $(STAMP)
	KENANG_WORKERS=1 $(BIN)/python -m pytest -q -p no:cacheprovider -m "not integration and not model" -n auto

# The gates, in the order of their speed; each fails on its own and says what it found.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/deptry .
	$(BIN)/python .ci/commit_subjects.py

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Every `kenang ... --help` listing in docs/ is the CLI's own output; tests/test_docs.py fails when one drifts.
docs: $(STAMP)
	$(BIN)/python tools/helpdocs.py

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[bench,test]' --find-links $(WHEELS)
	$(BIN)/python benchmarks/spine.py
	$(BIN)/python benchmarks/incremental.py
	$(BIN)/python benchmarks/recall.py
	$(BIN)/python benchmarks/recall_eval.py
	$(BIN)/python benchmarks/analytics.py
	$(BIN)/python benchmarks/summary_quality.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
