#!/usr/bin/env bash
# The whole suite: lint, unit + doctests, replay regression tests, integration tests
# (real Kafka broker, MLflow store, Prometheus server, Ray head, headless Chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
$BIN/ruff check driftwatch tests benchmarks scripts examples grafana
$BIN/lint-imports --no-cache   # the layer contract in pyproject.toml
$BIN/python -m pytest -p no:cacheprovider "$@"
