"""The Python API on a DataFrame whose columns are named by integers (a NumPy array made a
frame, ``pd.DataFrame(X)``): features are named by their text everywhere, so signals,
reasons and the report read alike, and the report is written (it raised a TypeError); and
on one with a date or time column, which is the window's time or ignored, never a feature."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch import Monitor
from driftwatch.bundled import bundled_path
from driftwatch.errors import DataFrameError

TEMPLATE = bundled_path("policies") / "template.yaml"  # persistence: 2 windows


def _frame(n: int, shift: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(0, 1, (n, 2)))  # columns 0 and 1
    df[0] += shift
    df[2] = rng.choice(["a", "b", "c"], n)
    df["score"] = rng.uniform(0, 1, n)
    return df


def test_integer_column_names_are_features_named_as_text(tmp_path: Path):
    mon = Monitor.from_reference(_frame(4000, 0.0, 1), policy=TEMPLATE)
    assert mon.features == ("0", "1", "2")
    for seed in (2, 3):
        verdict = mon.assess(_frame(1000, 2.0, seed))
    assert verdict.tier == "severe"
    assert {r.feature for r in verdict.reasons} == {"0"}
    assert set(verdict.signals.query("signal == 'psi'")["feature"]) == {"0", "1", "2"}
    out = mon.report(tmp_path / "report.html")
    assert out.stat().st_size > 0


def test_integer_names_given_as_arguments_match():
    ref = _frame(2000, 0.0, 1).rename(columns={"score": 7})
    mon = Monitor.from_reference(ref, score=7, ignore=[1])
    assert mon.features == ("0", "2")
    cur = _frame(500, 0.0, 2).rename(columns={"score": 7})
    assert mon.assess(cur).tier == "none"


def test_columns_that_read_alike_as_text_are_a_clear_error():
    df = _frame(100, 0.0, 1)
    df["0"] = 1.0
    with pytest.raises(DataFrameError, match="read alike as text: '0'"):
        Monitor.from_reference(df)


def test_a_datetime_column_is_no_feature_but_a_clear_error():
    """A DataFrame's application date was taken for a categorical feature, each timestamp
    a level: severe drift on every window of an unchanged population."""
    ref = _frame(1000, 0.0, 1)
    ref["applied_at"] = pd.Timestamp("2018-01-01", tz="UTC") + pd.to_timedelta(
        np.arange(1000), unit="min")
    with pytest.raises(DataFrameError, match=r"'applied_at' of the reference hold dates or "
                                             r"times.*pass time='applied_at'"):
        Monitor.from_reference(ref)
    mon = Monitor.from_reference(ref, time="applied_at")
    assert "applied_at" not in mon.features
    cur = _frame(500, 0.0, 2)
    cur["applied_at"] = pd.Timestamp("2018-06-01", tz="UTC") + pd.to_timedelta(
        np.arange(500), unit="min")
    assert mon.assess(cur).tier == "none"
    assert "applied_at" not in Monitor.from_reference(ref, ignore=["applied_at"]).features
