# `make html` and `make test` set everything up themselves: the first run
# creates .venv and installs the pinned requirements, later runs reuse it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
READY := $(VENV)/.ready
SPHINXBUILD := $(BIN)/sphinx-build -c . source
SPHINXOPTS ?= -W --keep-going
BUILDDIR := _build

.PHONY: setup html html-noplot test clean

setup: $(READY)

$(READY): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $@

# The executed site: every gallery script and notebook runs.
html: $(READY)
	$(SPHINXBUILD) $(BUILDDIR)/html -b html $(SPHINXOPTS)

# Every page, without running the gallery or the notebooks: quick while writing.
html-noplot: $(READY)
	$(SPHINXBUILD) $(BUILDDIR)/html -b html $(SPHINXOPTS) -D plot_gallery=0 -D nb_execution_mode=off

test: $(READY)
	$(BIN)/python -m pytest

clean:
	rm -rf $(BUILDDIR) source/auto_examples source/sg_execution_times.rst .pytest_cache .hypothesis
