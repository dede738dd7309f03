# Two entry points, both self-contained: they create .venv with the project installed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-unit soak lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## set up, then run the demo tournament over real gRPC
	$(BIN)/callbreak-arena run --results results/demo --fresh

test: $(STAMP)  ## set up, then run the test suite (all but the long soak runs marked soak)
	$(BIN)/python -m pytest -q -n 2 -m "not soak"

test-fast: $(STAMP)  ## set up, then run the tests not marked slow (the long soak, load and end-to-end runs)
	$(BIN)/python -m pytest -q -n 2 -m "not slow and not soak"

# The pure tests: the rules core, the records, the standings and the plan. They start no process and open no
# socket (tests/helpers/pure.py fails a test that does), so they run in one process in under a minute.
UNIT_TESTS := tests/test_cards.py tests/test_dealing.py tests/test_rules.py tests/test_scoring.py tests/test_game.py \
	tests/test_one_rule.py tests/test_properties.py tests/test_ratings_basic.py tests/test_standings_status.py \
	tests/test_rank_ranges.py tests/test_sequential.py tests/test_stats.py tests/test_schedule.py tests/test_config.py

test-unit: $(STAMP)  ## set up, then run the pure tests (the rules core, the records, the standings, the plan) in one process
	$(BIN)/python -m pytest -q -p tests.helpers.pure -m "not soak" $(UNIT_TESTS)

soak: $(STAMP)  ## set up, then run the long soak and statistical runs that make test leaves out
	$(BIN)/python -m pytest -q -n 2 -m soak

lint: $(STAMP)  ## ruff and mypy (strict) on the package
	$(BIN)/ruff check arena tests benchmarks scripts sample_bots examples
	$(BIN)/mypy arena

bench: export PYTHONDONTWRITEBYTECODE = 1
bench: $(STAMP)  ## the benchmarks, printed; they write nothing into the repository
	$(BIN)/python benchmarks/engine.py
	$(BIN)/python benchmarks/cli_startup.py
	$(BIN)/python benchmarks/tournament.py
	$(BIN)/python benchmarks/plan_scale.py
	$(BIN)/python benchmarks/grpc_table.py
	$(BIN)/python benchmarks/transports.py
	$(BIN)/python benchmarks/duplicate_efficiency.py
	$(BIN)/python benchmarks/coverage.py
	$(BIN)/python benchmarks/sprt_calibration.py
	$(BIN)/python benchmarks/standings_memory.py --rounds 1000000
	$(BIN)/python benchmarks/strength.py
	$(BIN)/python benchmarks/many_tables.py
	$(BIN)/python benchmarks/fuzz_bots.py
	$(BIN)/python benchmarks/http_client.py
	$(BIN)/python benchmarks/live_page.py
	$(BIN)/python benchmarks/ladder.py
	$(BIN)/python benchmarks/ladder_fuzz.py
	$(BIN)/python benchmarks/env_speed.py
	$(BIN)/python benchmarks/zoo.py
	$(BIN)/python benchmarks/crn.py
	$(BIN)/python benchmarks/fresh_process.py
	$(BIN)/python benchmarks/memory_test.py
	$(BIN)/python benchmarks/rank_ranges.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
