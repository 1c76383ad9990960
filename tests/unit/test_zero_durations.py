"""A duration that 0s turns into a failure later (a retraining job with no time, a shadow
discarded at once, predictions that never wait, a scheduler interval) is refused where the
file is read, at its ``file:line:col``; durations where 0 means something (cooldown,
allowed lateness, shutdown grace) still take it."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.errors import ConfigError, PolicyError
from driftwatch.policy.loader import load_policy_text
from driftwatch.service.config import parse_service_config

DEMO = (Path(__file__).resolve().parents[2] / "policies" / "credit-risk-demo.yaml").read_text()
LINES = DEMO.splitlines()


def _line_of(text: str) -> int:
    return next(i for i, ln in enumerate(LINES, 1) if ln.strip() == text)


@pytest.mark.parametrize("key, value", [("time_limit", "2h"), ("max_duration", "21d")])
def test_a_zero_action_duration_is_refused_at_its_line(key: str, value: str) -> None:
    line = _line_of(f"{key}: {value}")
    col = LINES[line - 1].index(value) + 1
    with pytest.raises(PolicyError) as err:
        load_policy_text(DEMO.replace(f"{key}: {value}", f"{key}: 0s"), file="p.yaml")
    text = str(err.value)
    assert f"p.yaml:{line}:{col}: " in text and "a duration above 0s" in text, text
    assert "0s leaves no time at all" in text


def test_zero_label_ttl_is_refused_and_zero_cooldown_still_loads() -> None:
    text = DEMO + "labels:\n  ttl: 0s\n"
    with pytest.raises(PolicyError) as err:
        load_policy_text(text, file="p.yaml")
    assert f"p.yaml:{len(LINES) + 2}:8: " in str(err.value), str(err.value)
    policy = load_policy_text(DEMO + "labels:\n  ttl: 1s\n", file="p.yaml")
    assert policy.labels.ttl == 1.0
    zero = load_policy_text(DEMO.replace("cooldown: 1h", "cooldown: 0s"), file="p.yaml")
    assert zero.data_quality.cooldown == 0.0


MINIMAL = "models:\n  - connector: c.yaml\n    policy: p.yaml\n"


@pytest.mark.parametrize("section, key", [
    ("checkpoint", "interval"), ("checkpoint", "max_age"), ("staleness", "after"),
    ("scheduler", "policy_reload"), ("scheduler", "misfire_grace_time"),
    ("report", "rolling"),
])
def test_a_zero_service_interval_is_refused_at_its_line(section: str, key: str) -> None:
    text = MINIMAL + f"{section}:\n  {key}: 0s\n"
    with pytest.raises(ConfigError) as err:
        parse_service_config(text, file="d.yaml")
    assert f"d.yaml:5:{len(key) + 5}: expected a positive duration (above 0s)" in str(
        err.value), str(err.value)


def test_zero_where_it_means_none_still_loads() -> None:
    cfg = parse_service_config(MINIMAL + "actions:\n  shutdown_grace: 0s\n"
                               "report:\n  rolling: null\n", file="d.yaml")
    assert cfg.mlflow.shutdown_grace_s == 0.0 and cfg.reports.rolling_s is None
