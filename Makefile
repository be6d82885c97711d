# Two commands on a fresh machine: `make demo` and `make test`. Both install what they need
# first (a virtual environment in .venv and the pinned npm tools in tests/node_modules).

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: deps system-deps test test-slow mutate simulate demo sandbox lint bench bench-quick capacity clean

$(VENV)/.installed: requirements.txt requirements-test.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

tests/node_modules/.installed: tests/package.json tests/package-lock.json
	npm ci --prefix tests --no-audit --no-fund --loglevel=error
	touch $@

deps: $(VENV)/.installed tests/node_modules/.installed

# faketime (clock-skew tests) comes from Debian; only the slow suite needs it.
system-deps:
	@command -v faketime >/dev/null || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq faketime >/dev/null; }

# Parallel workers (pytest-xdist): most integration tests wait on their subprocesses, so more
# workers than cores pay off (bench/test-times.md). TEST_WORKERS=0 runs in one process.
TEST_WORKERS ?= 4

test: deps
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal

test-slow: deps system-deps
	$(PY) -m pytest -q -m slow || [ $$? -eq 5 ]
	$(PY) scripts/mutate.py

# Mutation testing of core/ and config.py against the fast unit tests (scripts/mutate.py, ADR
# 0050): fails below 95 % of the non-equivalent mutants killed (bench/mutation-equivalent.txt
# lists the equivalent ones); the figures go to bench/mutation-score.json. JOBS=N runs N at once.
mutate: deps
	$(PY) scripts/mutate.py $${JOBS:+--jobs $$JOBS}

# The protocol model's search: fixed seeds plus one fresh seed, printed (SEED=N replays one,
# EPISODES=... per seed). A failure prints its seed and a shrunk trace.
simulate: deps
	$(PY) tests/model/simulate.py --episodes $${EPISODES:-250} $${SEED:+--seed $$SEED --no-random --no-scenarios}

demo: deps
	$(PY) demo/demo.py

# A local GitHub (the test rig's emulator and proxy) to try the CLI by hand; Ctrl-C stops it.
sandbox: deps
	$(PY) scripts/sandbox.py

lint: deps
	bash scripts/lint.sh

bench: deps
	$(PY) bench/capacity.py --docs
	$(PY) bench/bench.py

bench-quick: deps
	$(PY) bench/capacity.py --quick --out bench/capacity-quick.json --markdown bench/capacity-quick.md
	$(PY) bench/bench.py --quick --out bench/results-quick.json  # the committed results.json is a full run

# Capacity alone (bench/capacity.py, ADR 0045): an hour of virtual time on the in-memory GitHub
# with GitHub's limits enforced; writes bench/capacity.json, bench/capacity.md and the tables
# in README.md and docs/operations.md. About ten seconds.
capacity: deps
	$(PY) bench/capacity.py --docs

clean:
	rm -rf $(VENV) tests/node_modules .pytest_cache .hypothesis
