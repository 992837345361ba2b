# Every target creates and reuses .venv by itself: a fresh machine needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test browsers redis nginx screenshots lint typecheck unit bench demo serve clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: browsers redis nginx lint typecheck unit

# The web client's tests drive Debian's chromium (never a downloaded browser build).
browsers:
	@test -x /usr/bin/chromium || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# The Redis backend's tests start real redis-server processes (never a fake).
redis:
	@test -x /usr/bin/redis-server || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server; }

# tests/e2e/test_nginx.py runs deploy/nginx.conf under Debian's nginx.
nginx:
	@test -x /usr/sbin/nginx || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		$$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx; }

lint: $(STAMP)
	$(BIN)/ruff check rules protocol server clients tests bench
	$(BIN)/ruff format --check rules protocol server clients tests bench

typecheck: $(STAMP)
	$(BIN)/mypy rules protocol server clients bench

unit: $(STAMP)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench.rules_speed
	$(BIN)/python -m bench.qwirkle_moves
	$(BIN)/python -m bench.protocol_speed

# Refresh docs/screenshots/ from the browser tests (they write nothing otherwise).
screenshots: $(STAMP) browsers
	DICEHALL_SCREENSHOTS=1 $(BIN)/pytest -q tests/e2e/test_web.py -k memory

demo: $(STAMP)
	$(BIN)/dicehall demo

serve: $(STAMP)
	$(BIN)/dicehall serve --host 127.0.0.1 --port 8000 --demo-rooms

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
