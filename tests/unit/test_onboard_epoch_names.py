"""``init`` finds an epoch count named by its unit or as an epoch (``ts_ms``, ``created_us``,
``epoch``, ``event_epoch``, ``ts_ns``) as the event time, in the unit its values are; a
field named so whose values are no epoch (``latency_ms``) is not taken."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.onboard.infer import name_rank
from driftwatch.onboard.roles import TIME

from ._cli import replay_summary, run_cli

START = 1_704_067_200  # 2024-01-01T00:00:00Z
PER_SECOND = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


def _files(tmp: Path, columns: dict[str, Any], n: int = 300) -> None:
    rng = np.random.default_rng(2)

    def frame() -> pd.DataFrame:
        return pd.DataFrame({"income": rng.gamma(3, 15000, n).round(0),
                             "purpose": rng.choice(["car", "home", "edu"], n),
                             "target": rng.integers(0, 2, n)})

    frame().to_csv(tmp / "ref.csv", index=False)
    live = frame()
    live.insert(0, "id", np.arange(n))
    for name, values in columns.items():
        live[name] = values
    live.drop(columns=["target"]).to_json(tmp / "live.jsonl", orient="records", lines=True)
    live[["id", "target"]].to_csv(tmp / "out.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.jsonl"), "--outcomes", str(tmp / "out.csv"), "--model",
                    "m", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml")], capsys)


@pytest.mark.parametrize(("name", "unit"), [
    ("ts_ms", "ms"), ("created_us", "us"), ("epoch", "s"), ("event_epoch", "ms"),
    ("epoch_ms", "ms"), ("ts_ns", "ns"), ("epochSeconds", "s"),
])  # fmt: skip
def test_an_epoch_named_by_its_unit_is_the_event_time_in_that_unit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        name: str, unit: str) -> None:
    """Such fields were not looked at (no field named like an event time)."""
    times = (START + 60 * np.arange(300)) * PER_SECOND[unit]
    _files(tmp_path, {name: times, "latency_ms": np.arange(300) % 90 + 5})
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert f"event time: {name}" in out and f"reads as event time ({unit})" in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert c["source"]["streams"]["predictions"]["fields"]["event_time"] == {"path": name,
                                                                            "unit": unit}
    summary = replay_summary(tmp_path, capsys, monkeypatch)
    assert summary["bad_by_reason"] == {}, summary
    assert (summary["first_event"], summary["last_event"]) == ("2024-01-01T00:00:00Z",
                                                               "2024-01-01T04:59:00Z")


def test_an_exact_time_name_outranks_a_unit_suffix(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A change feed's ts_ms (when the row was captured) beside the record's created_at."""
    _files(tmp_path, {"created_at": START + 60 * np.arange(300),
                      "ts_ms": (START + 3600 + np.arange(300)) * 1000})
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: created_at" in out, out


def test_a_duration_named_in_ms_is_no_event_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, {"latency_ms": np.arange(300) % 90 + 5})
    code, _, err = _init(tmp_path, capsys)
    assert code != 0 and "cannot find the event time field" in err, err
    assert "latency_ms is named like one, but its values (5, 6, 7, ...) are not epoch" in err


@pytest.mark.parametrize("name", ["ts_ms", "created_us", "ts_ns", "epoch", "epoch_ms",
                                  "event_epoch", "payload.source.ts_ms", "EpochMillis"])
def test_epoch_names_are_time_names(name: str) -> None:
    assert name_rank(name, *TIME) == 2


@pytest.mark.parametrize("name", ["ms", "us", "income", "status", "terms", "mus"])
def test_other_names_are_not(name: str) -> None:
    assert name_rank(name, *TIME) == 0


@pytest.mark.parametrize("unit", ["s", "ms"])
def test_an_epoch_written_as_text_is_the_event_time_in_its_unit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        unit: str) -> None:
    """A Java service's ``long`` sent as a string ("1704067200123"): replay reads such text
    as its number, but init refused the field (not epoch ... times) or, named with
    --time-field, warned that replay would misread it."""
    times = [str(t) for t in (START + 60 * np.arange(300)) * PER_SECOND[unit]]
    _files(tmp_path, {"ts": times})
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert f"reads as event time ({unit}, written as text)" in out, out
    assert "warning: ts" not in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert c["source"]["streams"]["predictions"]["fields"]["event_time"] == {"path": "ts",
                                                                            "unit": unit}
    summary = replay_summary(tmp_path, capsys, monkeypatch)
    assert summary["bad_by_reason"] == {}, summary
    assert (summary["first_event"], summary["last_event"]) == ("2024-01-01T00:00:00Z",
                                                               "2024-01-01T04:59:00Z")

