# The README's two commands: `make figures` (set-up + main job) and `make test` (set-up + tests);
# `make docs` builds the documentation site.
# Both create .venv when missing and (re)install the project when pyproject.toml changes.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
FIGURE_ARGS ?= --quick

.PHONY: figures test test-mindeps docs bench lint clean clean-cache

$(STAMP): pyproject.toml scripts/install-system-deps.sh
	bash scripts/install-system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[bench,dev,dynamics,plot,docs,dask]"
	$(BIN)/python -c "import sksparse.cholmod, qdldl" || \
		{ echo "error: the CHOLMOD / QDLDL peers did not install (see above)"; exit 1; }
	$(BIN)/python -c "import pinocchio, mujoco" || \
		{ echo "error: the Pinocchio / MuJoCo oracles did not install (see above)"; exit 1; }
	@touch $(STAMP)

# Main job: the default benchmark suite (CSV + JSON + plots + tables), then the figures.
figures: $(STAMP)
	$(BIN)/python -m comparisons run --suite default --out results/default.csv
	$(BIN)/python -m comparisons plot results/default.csv --out paper_figures/out
	$(BIN)/python -m comparisons batch --out results/batch.csv
	$(BIN)/python -m paper_figures $(FIGURE_ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest

# Minimum dependencies: a separate venv, .venv-mindeps, with the lower bounds of pyproject.toml's
# [project].dependencies pinned (.ci/min-constraints.txt, which tests/test_min_constraints.py
# checks against pyproject.toml) and no extras, runs graphsolve's tests and doctests (MIN_TESTS:
# tests/graphsolve and graphsolve; not dynamics, comparisons or paper_figures, whose tests use
# the extras; without scikit-sparse, ordering="amd" is graphsolve's fallback). The pins are
# wheels for CPython 3.11 (Debian 12's python3) and 3.10; nothing is compiled. Its numba keeps
# its cache in .venv-mindeps/numba-cache, apart from .venv's: from scratch about 25 s of
# installation and 10 min of tests (mostly cold compilation) on 2 cores. .ci/run runs it last.
MINVENV   := .venv-mindeps
MIN_TESTS ?= tests/graphsolve graphsolve
$(MINVENV)/.installed: pyproject.toml .ci/min-constraints.txt
	@test -x $(MINVENV)/bin/python || $(PYTHON) -m venv $(MINVENV)
	$(MINVENV)/bin/python -m pip install --quiet --upgrade pip
	$(MINVENV)/bin/python -m pip install --quiet -c .ci/min-constraints.txt \
		--only-binary numpy,scipy,numba,llvmlite,pymetis -e . "pytest>=7.4" "hypothesis>=6.80"
	$(MINVENV)/bin/python -m pip check
	@touch $@

test-mindeps: $(MINVENV)/.installed
	NUMBA_CACHE_DIR=$(MINVENV)/numba-cache $(MINVENV)/bin/python -m pytest $(MIN_TESTS)

# The documentation site (docs/): API reference, user guide, architecture, example gallery (the
# gallery's scripts run during the build), the papers' reproduction report. Warnings are errors.
# Output: docs/_build/html. The report page runs `python -m paper_figures --quick` into
# docs/_build/paper_figures (2-3 min, again only after a source change; docs/_ext/paper_report.py);
# DOCS_FIGURES=paper_figures/out shows an existing (e.g. full-size) run instead.
DOCS_FIGURES ?=
docs: $(STAMP)
	GRAPHSOLVE_DOCS_FIGURES=$(DOCS_FIGURES) \
		$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html

# Regression benchmarks (asv; benchmarks/ and asv.conf.json): a quick run (each benchmark called
# once after an untimed warm-up in its setup) of the working tree as installed in .venv, with the
# results printed, not saved; two to four minutes on two cores. Installs the `asv` extra on first
# use. BENCH_ARGS adds asv options: `make bench BENCH_ARGS="-b bench_dynamics"` runs a subset,
# `make bench BENCH_ARGS="--set-commit-hash=$(git rev-parse HEAD)"` saves the results under
# .asv/results (as that commit's: only right on a clean tree) for `asv compare`.
# Commit against commit: .venv/bin/asv continuous main HEAD (builds each into .asv/env).
BENCH_ARGS ?=
bench: $(STAMP)
	@$(BIN)/python -c "import asv" 2>/dev/null || $(BIN)/python -m pip install --quiet -e ".[asv]"
	$(BIN)/asv machine --yes >/dev/null
	$(BIN)/asv run --python=same --quick --show-stderr $(BENCH_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

clean: clean-cache
	rm -rf $(VENV) $(MINVENV) paper_figures/out .pytest_cache .hypothesis docs/_build docs/auto_examples docs/generated

# numba's on-disk cache is keyed on each kernel's own source file: after editing a file of
# graphsolve/kernels/ (factor_kernels.py, solve_kernels.py, blocks.py, simd.py, ...), kernels in
# other files that call them would keep the old code. This forces every kernel to recompile on
# first use.
clean-cache:
	find graphsolve dynamics comparisons -name '*.nbi' -delete -o -name '*.nbc' -delete
