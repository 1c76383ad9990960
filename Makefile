# The two commands of the README:
#   make run    install, then run the main job on its embedded default
#               (make run ARGS="--exit-when-done" passes options to driftwatch run,
#                make run PORT=9200 serves HTTP on another port)
#   make test   install, then run the whole test suite (unit, integration, replay);
#               ARGS="..." goes to pytest
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
TEST_STAMP := $(VENV)/.installed-test
ARGS ?=
PORT ?=
# pip prints nothing (--quiet); setuptools' generic note about editable installs is muted
PIP := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet \
	--disable-pip-version-check

.PHONY: run test lint install system-deps clean demo-data bench

$(BIN)/python:
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	  { echo "driftwatch needs Python 3.11 or newer ($(PY) is older); try make PY=python3.11"; exit 1; }
	@echo "creating $(VENV) with $$($(PY) --version)"
	@$(PY) -m venv $(VENV)

# the daemon on its embedded default: the core and the MLflow store, nothing for tests
$(RUN_STAMP): pyproject.toml setup.py | $(BIN)/python
	@echo "installing driftwatch with what the daemon needs into $(VENV) (first time: a minute or two)"
	@$(PIP) -e '.[mlflow]'
	@touch $@

# everything the suite talks to: Kafka client, Ray, browser driver, pytest, hypothesis, ruff
$(TEST_STAMP): pyproject.toml setup.py $(RUN_STAMP)
	@echo "installing the test tools and integrations into $(VENV)"
	@$(PIP) -e '.[dev]'
	@touch $@

install: $(TEST_STAMP)

system-deps:
	bash scripts/system-deps.sh

run: $(RUN_STAMP)
	$(BIN)/driftwatch run $(if $(PORT),--port $(PORT)) $(ARGS)

test: $(TEST_STAMP) system-deps
	bash scripts/test.sh $(ARGS)

lint: $(TEST_STAMP)
	$(BIN)/ruff check driftwatch tests benchmarks scripts examples grafana

demo-data: $(RUN_STAMP)
	$(BIN)/python scripts/make_demo_data.py

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/replay_throughput.py

clean:
	rm -rf out state .pytest_cache
