"""The policy ``init`` writes paces its actions: a lasting drift acts a few times, not on
every window (an alert, or a retraining once a tier is edited to ``retrain``), and the
first action comes as early as it did without cooldowns."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.cli import main
from driftwatch.onboard.pace import MAX_COOLDOWN_S, PRECISION, choose_pace, round_up, window_seconds
from driftwatch.onboard.plandata import StreamPlan
from driftwatch.onboard.sample import Sample
from driftwatch.policy import load_policy
from driftwatch.policy.durations import parse_duration

from ._cli import run_cli as _cli

PANE = 500
STEP_S = 60  # one event a minute: a window of 500 events spans 30 000 s (8h20m)
CLEAN, SHIFTED = 10, 20  # windows of N(0, 1), then of N(1.5, 1)


def _shift(tmp: Path) -> None:
    """A reference of N(0, 1) features and a score; a stream of the same for 10 windows,
    then features of N(1.5, 1) for 20 windows (a lasting drift from window 10 on)."""
    rng = np.random.default_rng(31)
    ref = pd.DataFrame({f"x{i}": rng.normal(0, 1, 4000).round(4) for i in range(3)})
    ref["score"] = rng.uniform(0, 1, 4000).round(4)
    ref.to_csv(tmp / "ref.csv", index=False)
    n = (CLEAN + SHIFTED) * PANE
    shift = np.where(np.arange(n) >= CLEAN * PANE, 1.5, 0.0)
    live = pd.DataFrame({"id": [f"e{i}" for i in range(n)],
                         "ts": 1_700_000_000 + STEP_S * np.arange(n)})
    for i in range(3):
        live[f"x{i}"] = (rng.normal(0, 1, n) + shift).round(4)
    live["score"] = rng.uniform(0, 1, n).round(4)
    live.to_csv(tmp / "live.csv", index=False)


@pytest.fixture(scope="module")
def inited(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pace")
    _shift(tmp)
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                     str(tmp / "live.csv"), "--pane", str(PANE), "--model", "m",
                     "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                     str(tmp / "p.yaml")])
    assert code == 0
    return tmp


def _replay(tmp: Path, policy: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    out = tmp / f"run-{policy.stem}"
    code, _, err = _cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy", str(policy),
                         "--input", str(tmp / "live.csv"), "--out", str(out), "--no-report",
                         "-q"], capsys)
    assert code == 0, err
    return [json.loads(line) for line in (out / "timeline.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("severe", ["alert", "retrain"])
def test_a_lasting_drift_acts_a_few_times_not_on_every_window(
        inited: Path, severe: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Without cooldowns every severe window alerted (24 alerts in a row on NannyML's car
    loans), and a tier edited to retrain queued a retraining per window."""
    policy = inited / "p.yaml"
    if severe == "retrain":  # what a user does next: the severe tier retrains
        data = yaml.safe_load(policy.read_text())
        data["actions"]["severe"] = {"type": "retrain", "argv": ["python", "train.py"]}
        policy = inited / "p-retrain.yaml"
        policy.write_text(yaml.safe_dump(data))
    records = _replay(inited, policy, capsys)
    assert len(records) == CLEAN + SHIFTED
    decisions = [r["decision"] for r in records]
    # persistence 2: the first shifted window is seen, the second acts
    first = CLEAN + 1
    assert [d["tier"] for d in decisions[first:]] == ["severe"] * (SHIFTED - 1)
    acted = [r["window_id"] for r, d in zip(records, decisions, strict=True) if d["action"]]
    assert {d["action"] for d in decisions if d["action"]} == {severe}
    assert acted[0] == first
    assert 1 <= len(acted) <= 3
    # every other severe window would have acted: the cooldown is what holds it
    held = [d["suppressed_by"] for d in decisions[first:] if not d["action"]]
    assert len(held) == SHIFTED - 1 - len(acted)
    assert all("cooldown" in s for s in held)


def test_the_written_cooldowns_span_windows_of_the_samples_pace(inited: Path) -> None:
    p = load_policy(inited / "p.yaml")
    window = PANE * STEP_S
    assert p.cooldown.severe >= 10 * window and p.cooldown.mild >= 2 * window
    assert p.cooldown.mild < p.cooldown.moderate < p.cooldown.severe
    assert p.data_quality.cooldown >= 2 * window
    assert p.limits.max_actions_per_day.severe == 1
    assert "max_concurrent_retrains" in p.limits.model_fields_set
    text = (inited / "p.yaml").read_text()
    assert "a window of 500 events spans about 8h20m in the sample" in text


def test_explain_says_what_the_written_cooldowns_do(inited: Path) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["policy", "explain", str(inited / "p.yaml")]) == 0
    lines = {line.split(":")[0].strip("# "): line
             for line in out.getvalue().split("# What happens, tier by tier:\n")[1]
             .splitlines()}
    # 12 windows of 30 000 s: 100 hours
    assert "then no action at severe or below for 4d4h of event time" in lines["severe"]
    assert "at most 1 per day" in lines["severe"]
    # mild does nothing, so its cooldown never runs
    assert "its cooldown (1d1h) never starts" in lines["mild"]
    # 4 windows of 30 000 s, exactly (rounded up to whole hours before: 1d10h)
    assert "at most one alert per 1d9h20m" in lines["data quality"]


def _plan(times: list[Any], source: str = "payload") -> StreamPlan:
    rows = [{"id": i, "t": t} for i, t in enumerate(times)]
    return StreamPlan("predictions", Sample(rows, "s.jsonl"), "id", "t",
                      time_source=source)


def test_the_window_span_comes_from_the_samples_times() -> None:
    epoch = [1_700_000_000 + 30 * i for i in range(4)]
    assert window_seconds(_plan(epoch), 100) == 3000.0
    assert window_seconds(_plan(list(reversed(epoch))), 100) == 3000.0
    assert window_seconds(_plan([epoch[0]] * 4), 100) is None
    assert window_seconds(_plan(epoch, "kafka_timestamp"), 100) is None


def test_without_a_rate_a_window_is_taken_as_an_hour() -> None:
    assert choose_pace(None).cooldown == {"mild": "3h", "moderate": "6h", "severe": "12h"}
    assert round_up(3 * 3600) == "3h"


WEEK = 7 * 86400


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1.0, max_value=5 * WEEK, allow_nan=False))
def test_a_written_cooldown_reads_back_within_its_precision(seconds: float) -> None:
    """A 68-minute cooldown was written as 2h (whole hours under a week, whole days
    beyond: up to 76% over); now the text the policy parses runs at most 2% past the span
    (or a second, as whole seconds must), never short of it, and at most 30 days."""
    back = parse_duration(round_up(seconds))
    if seconds >= MAX_COOLDOWN_S:
        assert back == MAX_COOLDOWN_S
    else:
        assert seconds * (1 - 1e-6) <= back <= seconds + max(PRECISION * seconds, 1.0)


@given(st.sampled_from([86400, 3600, 60, 1]), st.integers(min_value=1, max_value=59))
def test_a_cooldown_of_whole_units_is_written_exactly(unit: int, k: int) -> None:
    assert parse_duration(round_up(float(k * unit))) == min(k * unit, MAX_COOLDOWN_S)


def test_init_writes_a_68_minute_cooldown_as_such(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """100 events 13.6 s apart: a window spans 22m40s, 3 of them 68 minutes (was ``2h``)."""
    rng = np.random.default_rng(3)
    pd.DataFrame({"x0": rng.normal(0, 1, 500).round(4),
                  "score": rng.uniform(0, 1, 500).round(4)}).to_csv(tmp_path / "ref.csv",
                                                                    index=False)
    n = 400
    live = pd.DataFrame({"id": [f"e{i}" for i in range(n)],
                         "ts": 1_700_000_000 + 13.6 * np.arange(n),
                         "x0": rng.normal(0, 1, n).round(4),
                         "score": rng.uniform(0, 1, n).round(4)})
    live.to_csv(tmp_path / "live.csv", index=False)
    c, p = tmp_path / "c.yaml", tmp_path / "p.yaml"
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.csv"), "--pane", "100", "--model", "m",
                           "--connector-out", str(c), "--policy-out", str(p)], capsys)
    assert code == 0, err
    assert "cooldowns: 1h8m, 2h16m, 4h32m" in out, out
    pol = load_policy(p)
    window = 100 * 13.6
    assert (pol.cooldown.mild, pol.cooldown.moderate, pol.cooldown.severe) == \
        pytest.approx((3 * window, 6 * window, 12 * window))
    assert pol.data_quality.cooldown == pytest.approx(4 * window)  # 1h30m40s, exactly
    code, _, err = _cli(["policy", "check", "--connector", str(c), str(p)], capsys)
    assert code == 0, err
