#!/usr/bin/env bash
# The whole suite: lint, unit + doctests, replay regression tests, integration tests
# (real Kafka broker, MLflow store, Prometheus server, Ray head, headless Chromium).
# Tests run in DRIFTWATCH_TEST_WORKERS processes (default 2; 0 runs them in this one),
# a test file at a time per process so a file's fixtures are started once.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
$BIN/ruff check driftwatch tests benchmarks scripts examples grafana
$BIN/lint-imports --no-cache   # the layer contract in pyproject.toml
WORKERS="${DRIFTWATCH_TEST_WORKERS:-2}"
if [ "$WORKERS" = "0" ]; then
  exec $BIN/python -m pytest -p no:cacheprovider "$@"
fi
exec $BIN/python -m pytest -p no:cacheprovider -n "$WORKERS" --dist loadfile "$@"
