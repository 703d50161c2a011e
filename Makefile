# `make html` and `make test` set everything up themselves: the first run
# creates .venv and installs the pinned requirements, later runs reuse it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready
SPHINXOPTS ?= -W --keep-going
BUILDDIR := _build

# `make check-torch`: every test against another torch, in its own venv. The tests that read
# committed measurements (tests/tools/test_bench.py, tests/tools/test_opinfo.py) check their layout and
# what the installed torch measures, not the pinned torch's numbers, so they run too, on one
# worker per core as `make test` does. The Compatibility page counts the docs tests
# (tests/docs/) apart from the backend's (the rest). The C++ twin is built apart too, in a folder
# per torch asked for: an extension built against one torch must not be loaded by another.
TORCH ?= torch==2.14.1
INDEX_URL ?=
CHECK_VENV := .venv-torch-check

.PHONY: setup html html-noplot test coverage bench check-torch clean

setup: $(READY)

$(READY): requirements/torch.txt requirements/tools.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements/torch.txt -r requirements/tools.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

# The executed site: every gallery script and notebook runs.
html: $(READY)
	$(BIN)/sphinx-build -c . source $(BUILDDIR)/html -b html $(SPHINXOPTS)

# Every page, without running the gallery or the notebooks: quick while writing.
html-noplot: $(READY)
	$(BIN)/sphinx-build -c . source $(BUILDDIR)/html -b html $(SPHINXOPTS) \
		-D plot_gallery=0 -D nb_execution_mode=off

# One pytest worker per core; tests/conftest.py keeps each module on one worker.
TEST_WORKERS ?= 2

# The house rules first (ruff, configured in pyproject.toml), then every test.
test: $(READY)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# Regenerate source/op_coverage.json: npy against CPU over PyTorch's OpInfo samples, and gradcheck on npy.
coverage: $(READY)
	$(BIN)/python tools/op_coverage.py
	$(BIN)/python tools/gradcheck_all.py --record

# Rewrite source/benchmarks.json: npy against CPU eager, NumPy and the dispatcher floor (minutes; the JSON records how many).
# Some machines set OPENBLAS_CORETYPE (and OPENBLAS_L2_SIZE) to pin NumPy's BLAS to an older
# kernel; the benchmark measures NumPy as it runs by default, and records which kernel that was.
bench: $(READY)
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python benchmarks/run.py

check-torch:
	rm -rf $(CHECK_VENV)
	$(PYTHON) -m venv $(CHECK_VENV)
	$(CHECK_VENV)/bin/python -m pip install --quiet $(if $(INDEX_URL),--pre --index-url $(INDEX_URL)) "$(TORCH)"
	$(CHECK_VENV)/bin/python -m pip install --quiet -r requirements/tools.txt
	$(CHECK_VENV)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
	MINIMAL_TWIN_BUILD_DIR=$(CURDIR)/$(BUILDDIR)/cpp_backend-$(subst =,,$(subst <,,$(subst >,,$(TORCH)))) \
		$(CHECK_VENV)/bin/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --junitxml=$(BUILDDIR)/check-torch.xml; \
		status=$$?; \
		$(CHECK_VENV)/bin/python tools/record_compatibility.py $(BUILDDIR)/check-torch.xml source/compatibility.csv; \
		exit $$status

clean:
	rm -rf $(BUILDDIR) source/auto_examples source/sg_execution_times.rst .pytest_cache .hypothesis
