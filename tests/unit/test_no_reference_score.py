"""A reference table without the model's score (Kaggle's Give Me Some Credit, American
Express, Porto Seguro: public training tables never carry one) still gets score bins, on a
probability's own range: before, its "quantiles" were one edge at 0, every live score fell
in one bin, and replay reported AUC 0.5, Gini 0 and KS 0 on labelled outcomes whatever
the model did."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from driftwatch.detectors.performance import discrimination
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

from ._cli import run_cli

FINE_BINS = 200


def _reference(n: int = 800, seed: int = 1) -> pd.DataFrame:
    """A scoreless training table: two features and a 0/1 label."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"SeriousDlqin2yrs": (rng.random(n) < 0.15).astype(int),
                         "age": rng.integers(21, 90, n),
                         "DebtRatio": rng.lognormal(-1, 1, n).round(6)})


@functools.cache
def _profile() -> ReferenceProfile:
    return ReferenceProfile.build(_reference(), score=None, label="SeriousDlqin2yrs",
                                  decision=None, fine_bins=FINE_BINS)


@settings(max_examples=200, deadline=None)
@given(a=st.floats(0.0, 1.0), gap=st.floats(1.0 / FINE_BINS + 1e-9, 1.0))
def test_two_scores_a_fine_bin_apart_are_never_in_one_bin(a: float, gap: float) -> None:
    b = min(a + gap, 1.0)
    assume(b - a > 1.0 / FINE_BINS)
    counts, under, over = _profile().layout.score.count(np.array([[a], [b]]))
    assert counts.max() == 1 and under.sum() == 0 and over.sum() == 0, (a, b, counts)


def test_live_auc_is_measured_without_a_reference_score() -> None:
    rng = np.random.default_rng(7)
    bad = rng.random(3000) < 0.2
    score = np.clip(rng.beta(2, 5, 3000) + 0.2 * bad, 0, 1)
    sketch = Sketch.empty(_profile().layout)
    sketch.add_labelled(score, bad.astype(float))
    d = discrimination(sketch.lab_score[0], sketch.lab_score[1])
    exact = mannwhitneyu(score[bad], score[~bad]).statistic / (bad.sum() * (~bad).sum())
    assert exact > 0.7
    assert abs(d.auc - exact) <= d.auc_bound + 1e-12
    assert d.auc_bound < 0.01, d


def test_replay_reports_the_live_gini_of_a_scoreless_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    _reference().to_csv("cs-training.csv")  # pandas' blank-headed index, as Kaggle's
    rng = np.random.default_rng(2)
    n = 1500
    live = _reference(n, seed=3).drop(columns=["SeriousDlqin2yrs"])
    bad = rng.random(n) < 0.2
    live.insert(0, "loan_id", [f"L{i:05d}" for i in range(n)])
    live.insert(1, "ts", 1_735_689_600 + 60 * np.arange(n))
    live.insert(2, "score", np.clip(rng.beta(2, 5, n) + 0.25 * bad, 0, 1).round(6))
    live.to_csv("pred.csv", index=False)
    pd.DataFrame({"loan_id": live["loan_id"], "SeriousDlqin2yrs": bad.astype(int)}).to_csv(
        "out.csv", index=False)
    code, out, err = run_cli(["init", "--reference", "cs-training.csv", "--sample", "pred.csv",
                              "--outcomes", "out.csv", "--model", "m", "--connector-out",
                              "c.yaml", "--policy-out", "p.yaml", "--pane", "500"], capsys)
    assert code == 0, err
    assert "the reference has no score column" in out, out
    code, out, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                              "--input", "pred.csv", "out.csv", "--out", "run", "--quiet",
                              "--no-report"], capsys)
    assert code == 0, err
    windows = [json.loads(x) for x in Path("run/timeline.jsonl").read_text().splitlines()]
    assert len(windows) == 3
    for k, w in enumerate(windows):
        rows = slice(500 * k, 500 * (k + 1))
        s, b = live["score"].to_numpy()[rows], bad[rows]
        exact = mannwhitneyu(s[b], s[~b]).statistic / (b.sum() * (~b).sum())
        (gini,) = [x for x in w["signals"] if x["signal"] == "gini"]
        assert abs(gini["value"] - (2 * exact - 1)) <= gini["details"]["bound"] + 1e-9, gini
        assert gini["details"]["bound"] < 0.05 and gini["value"] > 0.3, gini
