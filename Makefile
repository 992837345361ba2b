# Every target creates and reuses .venv by itself: a fresh machine needs only python3.
# Python packages come from the lock files in requirements/ (hashed; `make lock` refreshes
# them from pyproject.toml), never resolved afresh.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# The suite in 4 pytest-xdist workers, a module's tests in one (its servers are module
# fixtures): most of a test's time is spent waiting on the processes and sockets it
# drives, so 4 workers on 2 cores finish in about a third of one's time.
PARALLEL := -n 4 --dist loadscope
OLDEST := .venv-oldest

.PHONY: test test-oldest test-compiled lock browsers redis nginx postgres js coverage-floors screenshots lint typecheck unit bench demo serve clean

# $(1): the venv, $(2): the lock file. The project itself goes in editable, without
# dependencies and without build isolation (setuptools is in the lock too).
define install_locked
	test -x $(1)/bin/python || $(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --require-hashes --no-deps -r $(2)
	$(1)/bin/python -m pip install --quiet --no-deps --no-build-isolation -e .
endef

$(STAMP): pyproject.toml requirements/dev.txt
	$(call install_locked,$(VENV),requirements/dev.txt)
	touch $(STAMP)

test: browsers redis nginx postgres js lint typecheck unit

# The suite against the declared minimum of every runtime dependency (requirements/oldest.txt).
test-oldest: browsers redis nginx postgres js
	$(call install_locked,$(OLDEST),requirements/oldest.txt)
	$(OLDEST)/bin/pytest -q $(PARALLEL)

# The suite against a compiled build (docs/operations.md, "A compiled build"): the modules
# server/compiled.py names, compiled by mypyc in a copy of the tracked files (an extension
# module beside its .py is what Python imports: never in this tree). The repository's own
# checks read git, which the copy has not, and are the same for both builds.
COMPILED := build/compiled
test-compiled: browsers redis nginx postgres js $(STAMP)
	rm -rf $(COMPILED) && mkdir -p $(COMPILED)
	git ls-files -z | xargs -0 cp -P --parents -t $(COMPILED)
	ln -s $(CURDIR)/node_modules $(COMPILED)/node_modules
	cd $(COMPILED) && DICEHALL_COMPILE=1 $(CURDIR)/$(BIN)/python setup.py -q build_ext --inplace
	cd $(COMPILED) && DICEHALL_EXPECT_COMPILED=1 $(CURDIR)/$(BIN)/pytest -q $(PARALLEL) \
		--ignore=tests/test_repository.py --ignore=tests/test_seams.py

lock: $(STAMP)
	$(BIN)/python requirements/lock.py

# The web client's tests drive Debian's chromium (never a downloaded browser build).
browsers:
	@test -x /usr/bin/chromium || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# The Redis backend's tests start real redis-server and redis-sentinel processes (never a
# fake), and make the certificates of their TLS tests with openssl.
redis:
	@test -x /usr/bin/redis-server -a -x /usr/bin/redis-sentinel -a -x /usr/bin/openssl || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			redis-server redis-sentinel openssl; }

# The JavaScript tools (package.json at the top, with the JS client's package clients/js as
# its workspace): the linters of every JavaScript file, the client's type checks and its
# Node example bot, which the tests run against a real server. They need Node.js and npm
# (Debian's packages when missing) and the packages of the lock file package-lock.json.
js: node_modules/.installed

node_modules/.installed: package.json package-lock.json clients/js/package.json
	@command -v node >/dev/null && command -v npm >/dev/null || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm; }
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The history store's tests start their own PostgreSQL cluster from Debian's server binaries
# (tests/support/postgres.py; as root its processes run as the package's `postgres` user).
postgres:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; }

# tests/e2e/test_nginx.py runs deploy/nginx.conf under Debian's nginx.
nginx:
	@test -x /usr/sbin/nginx || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; }

lint: $(STAMP) js
	$(BIN)/ruff check dicehall/__init__.py rules protocol server clients tests bench setup.py build_backend
	$(BIN)/ruff format --check dicehall/__init__.py rules protocol server clients tests bench setup.py build_backend
	node_modules/.bin/eslint .
	node_modules/.bin/prettier --check --log-level warn .

typecheck: $(STAMP)
	$(BIN)/mypy dicehall bench

# The suite under coverage.py (branch coverage, subprocesses included), then each
# package against its floor in pyproject.toml (docs/contributing.md, "Coverage").
unit: $(STAMP)
	rm -f .coverage .coverage.*
	$(BIN)/coverage run -m pytest -q $(PARALLEL)
	$(BIN)/coverage combine -q
	$(BIN)/python .ci/coverage_floors.py

# Raise the coverage floors to what the last `make test` measured (never lowers one).
coverage-floors: $(STAMP)
	$(BIN)/python .ci/coverage_floors.py --raise

bench: $(STAMP)
	$(BIN)/python -m bench.rules_speed
	$(BIN)/python -m bench.qwirkle_moves
	$(BIN)/python -m bench.protocol_speed

# Refresh docs/screenshots/ from the browser tests (they write nothing otherwise): the
# pages test_web.py plays through, and each game seated on a phone (360 x 800) and on a
# laptop (1280 x 720) from test_web_layout.py.
screenshots: $(STAMP) browsers
	DICEHALL_SCREENSHOTS=1 $(BIN)/pytest -q tests/e2e/test_web.py -k memory
	DICEHALL_SCREENSHOTS=1 $(BIN)/pytest -q tests/e2e/test_web_layout.py

demo: $(STAMP)
	$(BIN)/dicehall demo

serve: $(STAMP)
	$(BIN)/dicehall serve --host 127.0.0.1 --port 8000 --demo-rooms

clean:
	rm -rf $(VENV) $(OLDEST) .pytest_cache .mypy_cache .ruff_cache .hypothesis
