"""``live.speed`` paces a file source only: written for a Kafka model it was parsed and
never acted on (the daemon read the topics as they came). It is now refused at its line;
``run --speed`` still paces the file models and leaves a Kafka model as it is."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from driftwatch.bundled import bundled_path
from driftwatch.connectors.config import load_connector
from driftwatch.errors import ConfigError
from driftwatch.service.commands import _overrides
from driftwatch.service.config import parse_service_config
from driftwatch.service.model import check_pacing, model_connector

KAFKA = bundled_path("connectors") / "demo-kafka.yaml"
FILE = bundled_path("connectors") / "demo-file.yaml"


def _config(connector: Path, live: str) -> str:
    return (f"models:\n  - connector: {connector}\n    policy: p.yaml\n{live}")


def test_a_written_speed_for_a_kafka_model_is_refused_at_its_line() -> None:
    text = _config(KAFKA, "    live:\n      speed: 86400\n")
    cfg = parse_service_config(text, file="svc.yaml")
    with pytest.raises(ConfigError) as info:
        model_connector(cfg.models[0])
    err = info.value
    assert (err.file, err.line, err.col) == ("svc.yaml", 5, 14)
    assert err.message.startswith("live.speed paces a file source; connector "
                                  "'credit-demo-kafka' reads Kafka topics")
    assert err.found == "86400"
    assert err.hint == "remove live.speed from this model (or write 0)"
    assert err.path == "models[0].live.speed"


@pytest.mark.parametrize("live", ["", "    live: {speed: 0}\n"])
def test_a_kafka_model_without_pacing_loads(live: str) -> None:
    cfg = parse_service_config(_config(KAFKA, live), file="svc.yaml")
    assert model_connector(cfg.models[0]).kind == "kafka"


def test_a_file_model_keeps_its_speed() -> None:
    cfg = parse_service_config(_config(FILE, "    live: {speed: 86400}\n"), file="svc.yaml")
    assert model_connector(cfg.models[0]).kind == "file"
    assert cfg.models[0].live_speed == 86400.0


def test_run_speed_paces_file_models_and_leaves_a_kafka_model_alone() -> None:
    text = (f"models:\n  - connector: {FILE}\n    policy: p.yaml\n"
            f"  - name: k\n    connector: {KAFKA}\n    policy: q.yaml\n"
            "    live: {speed: 10}\n")
    cfg = parse_service_config(text, file="svc.yaml")
    args = argparse.Namespace(host=None, port=None, speed=3600.0, state_dir=None)
    over = _overrides(cfg, args)
    assert [m.live_speed for m in over.models] == [3600.0, 3600.0]
    for m in over.models:  # the help says "every file model's": a Kafka model is not refused
        check_pacing(m, load_connector(m.connector))
