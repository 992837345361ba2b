# Every target creates and reuses .venv by itself: a fresh machine needs only python3.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test lint typecheck unit bench demo serve clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check rules protocol server clients tests bench
	$(BIN)/ruff format --check rules protocol server clients tests bench

typecheck: $(STAMP)
	$(BIN)/mypy rules protocol

unit: $(STAMP)
	$(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/python -m bench.rules_speed
	$(BIN)/python -m bench.qwirkle_moves
	$(BIN)/python -m bench.protocol_speed

demo: $(STAMP)
	$(BIN)/dicehall demo

serve: $(STAMP)
	$(BIN)/dicehall serve --host 127.0.0.1 --port 8000 --demo-rooms

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
