# The two commands of the README:
#   make run    install, then run the main job on its embedded default
#   make test   install, then run the whole test suite (unit, integration, replay)
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint install system-deps clean demo-data bench

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

system-deps:
	bash scripts/system-deps.sh

run: $(STAMP)
	$(BIN)/driftwatch run

test: $(STAMP) system-deps
	bash scripts/test.sh

lint: $(STAMP)
	$(BIN)/ruff check driftwatch tests benchmarks scripts examples grafana

demo-data: $(STAMP)
	$(BIN)/python scripts/make_demo_data.py

bench: $(STAMP)
	$(BIN)/python benchmarks/replay_throughput.py

clean:
	rm -rf out state .pytest_cache
