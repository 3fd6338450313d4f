# reftable-lab: setup / test / bench / lab targets. The virtualenv lives in .venv/.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# pytest workers (2 cores here); override with `make test JOBS=1`
JOBS   ?= 2

.PHONY: setup dask git browser test test-browser test-fast test-compiled compiled-core test-cython \
        cython-core git-tests git-perf bench \
        speed lab notebooks clean

setup: $(STAMP)

$(STAMP): pyproject.toml core/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip setuptools wheel
	$(BIN)/pip install -q -e ./core -e '.[test,dev,dask]'
	touch $@

# Dask for bench --executor dask-local:N / dask://HOST:PORT (setup installs it too)
dask: setup
	$(BIN)/pip install -q -e '.[dask]'

# a git >= 2.45 with reftable support (system git, or built once into ~/.cache/reftable-lab)
git:
	@bash scripts/provision-git.sh

# Debian's chromium for the notebooks' browser test (tests/notebooks/test_browser.py);
# Playwright drives it (its Python package only: never `playwright install`). When apt
# cannot install it, the reason is kept in $(NO_CHROMIUM) and the browser test skips
# with it (and only then).
NO_CHROMIUM := $(VENV)/chromium-unavailable
browser: setup
	@rm -f $(NO_CHROMIUM)
	@test -x /usr/bin/chromium || { \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	    > $(VENV)/chromium-install.log 2>&1 || \
	  { echo "apt-get install chromium failed: $$(tail -n 3 $(VENV)/chromium-install.log)" \
	      > $(NO_CHROMIUM); cat $(NO_CHROMIUM); }; }

# everything: the unit tests and the notebooks under nbmake ($(JOBS) workers), then the
# notebooks in JupyterLab in headless chromium (one pytest process: one JupyterLab),
# then git's own ref tests with the lab in place (scripts/git-tests.sh; a failing git
# test fails make test), then the reftable, refs and odb tests against the core
# compiled by mypyc (test-compiled; the build is cached by the sources' hash), then the
# same against the core compiled by Cython (test-cython)
test: setup browser
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -n $(JOBS) -q -m 'not browser' --nbmake --nbmake-timeout=600 tests notebooks
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -q -m browser tests/notebooks
	bash scripts/git-tests.sh
	$(MAKE) --no-print-directory test-compiled
	$(MAKE) --no-print-directory test-cython

# the browser test alone
test-browser: setup browser
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -q -m browser tests/notebooks

test-fast: setup
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -q -x -m 'not slow and not browser' tests

# reftable_core compiled by mypyc, out of tree in ~/.cache/reftable-lab/compiled-core/<hash>/
# (reused while the sources are unchanged); prints the folder
compiled-core: setup
	@PYTHON=$(BIN)/python bash scripts/build-compiled-core.sh

# the reftable, refs and odb tests against the compiled core (tests/conftest.py:
# REFTABLE_LAB_CORE=compiled; the build is made first, once)
test-compiled: compiled-core
	REFTABLE_LAB_CORE=compiled REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -n $(JOBS) -q tests/reftable tests/refs tests/odb

# reftable_core compiled by Cython in pure Python mode (the same .py files, C types in the
# .pxd files beside them), out of tree in ~/.cache/reftable-lab/cython-core/<hash>/
# (reused while the .py and .pxd files are unchanged); prints the folder
cython-core: setup
	@PYTHON=$(BIN)/python bash scripts/build-cython-core.sh

# the reftable, refs and odb tests, the git-like commands' (tests/builtin) and the property
# test over flag combinations (tests/test_flags.py) against the Cython build
# (REFTABLE_LAB_CORE=cython)
test-cython: cython-core
	REFTABLE_LAB_CORE=cython REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/python -m pytest -n $(JOBS) -q tests/reftable tests/refs tests/odb tests/builtin tests/test_flags.py

# seventeen of git's own test scripts (t1400, t1403, t1404, t1416, t0600, t0601, t0602, t0613,
# t1401, t1410, t1430, t1450, t1460, t0610, t6300, t6301, t6302) with the lab in place of show-ref,
# update-ref, refs and for-each-ref; git's source is built once into the cache
git-tests: setup
	bash scripts/git-tests.sh

# git's own performance scripts for the commands the lab implements (t/perf p1400-update-ref,
# p6300-for-each-ref), through git's t/perf/run once with git and once with the lab in place
# (scripts/git-router.sh): aggregate.perl's table and git's time, the lab's and the ratio per
# test. Default: 1/10 of the scripts' sizes, 3 repeats (GIT_PERF_SCALE=1 runs them as git has
# them; scripts/git-perf.sh says what else it reads)
git-perf: setup
	bash scripts/git-perf.sh

# the lab's main job: generate the benchmark datasets and measure the scenarios.
# Default: the set `first` (one scenario per seed and upstream commit; BENCH_ARGS= with
# no names, or any options, measures every scenario) at the small scale: exact instruction counts under callgrind, the same on a busy
# machine; BENCH_ARGS="--measure time,instructions" adds wall time beside them, and
# BENCH_ARGS="SCENARIO --measure time --rounds 10" interleaves wall-time rounds (paired
# by round, cancelling the VM's drift). Scale: BENCH_ARGS="--scale full".
# CORE=compiled (or CORE=interpreted,compiled): the flags variants under reftable_core
# compiled by mypyc (bench --core). byte-compile first: start-up time is part of the
# whole-command peers (and PYTHONDONTWRITEBYTECODE may be set)
BENCH_ARGS ?= first
bench: setup
	$(BIN)/python -m compileall -q core/reftable_core lab data_gen
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/reftable-lab bench $(if $(CORE),--core $(CORE)) $(BENCH_ARGS)

# the speed of the model (issue 15): whole commands of the lab beside git's, counted by
# callgrind, CPU and output compared (lab/speed.py). E.g. SPEED_ARGS="--scale full --core
# interpreted,compiled --core-rev 07148d6 --history /path/to/a/real/repo.git"
SPEED_ARGS ?=
speed: setup
	REFTABLE_LAB_GIT="$$(bash scripts/provision-git.sh)" $(BIN)/reftable-lab speed $(SPEED_ARGS)

lab: setup
	$(BIN)/jupyter lab notebooks/

clean:
	rm -rf $(VENV) build *.egg-info core/*.egg-info
