"""``init`` on a table laid out as scikit-learn writes a model's outputs (NannyML's car-loan
example): ``y_pred_proba`` is the score, ``y_pred`` the predicted class, and the label
``repaid`` is 1 for the good outcome."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.onboard.infer import good_when_true, label_values

from ._cli import run_cli as _cli


def _car_loans(tmp: Path, n: int = 1500, *, label: str = "repaid") -> None:
    """Reference with outcomes; a live sample without them; outcomes by id, no time."""
    rng = np.random.default_rng(11)

    def frame(k: int, start: int) -> pd.DataFrame:
        p_repay = rng.uniform(0.05, 0.95, k)
        return pd.DataFrame({
            "id": np.arange(start, start + k),
            "car_value": rng.integers(8000, 60000, k).astype(float),
            "salary_range": rng.choice(["0 - 20K €", "20K - 40K €", "40K - 60K €"], k),
            "debt_to_income_ratio": rng.uniform(0, 1, k),
            label: (rng.uniform(size=k) < p_repay).astype(float),
            "timestamp": pd.date_range("2018-01-01", periods=k, freq="9min").astype(str),
            "y_pred_proba": p_repay.round(2),
            "y_pred": (p_repay > 0.5).astype(int),
        })

    frame(n, 0).to_csv(tmp / "ref.csv", index=False)
    live = frame(n, 10**6)
    live.drop(columns=[label]).to_csv(tmp / "live.csv", index=False)
    live[["id", label]].to_csv(tmp / "out.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                 str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                 "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                 *extra], capsys)


def _fields(tmp: Path, stream: str) -> dict[str, Any]:
    """The fields ``init`` wrote for ``stream`` in the connector."""
    return yaml.safe_load((tmp / "c.yaml").read_text())["source"]["streams"][stream]["fields"]


def test_y_pred_proba_is_the_score_and_y_pred_no_feature(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _car_loans(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    fields = _fields(tmp_path, "predictions")
    assert fields["score"] == "y_pred_proba", fields
    assert set(fields["features"]) == {"car_value", "salary_range", "debt_to_income_ratio"}
    assert "ignore: y_pred " in out and "predicted class" in out, out
    # P(repaid) against a label whose bad value is 0: read as P(good)
    assert "score: y_pred_proba" in out and "P(good)" in out, out
    policy = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert policy["reference"]["score_is"] == "p_good", policy["reference"]


def test_a_label_named_repaid_is_bad_when_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _car_loans(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    label = _fields(tmp_path, "outcomes")["label"]
    assert label["bad"] == [0.0] and label["good"] == [1.0], label
    assert "the name says 1.0 is the good outcome" in out, out


def test_label_bad_still_decides(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _car_loans(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "1")
    assert code == 0, err
    label = _fields(tmp_path, "outcomes")["label"]
    assert label["bad"] == [1.0] and label["good"] == [0.0], label
    assert "the name says" not in out, out


def test_a_label_named_like_a_default_keeps_1_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _car_loans(tmp_path, label="defaulted")
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    label = _fields(tmp_path, "outcomes")["label"]
    assert label["bad"] == [1.0] and label["good"] == [0.0], label
    assert "the name says" not in out, out


@pytest.mark.parametrize(("name", "good"), [
    ("repaid", True), ("Repaid", True), ("loan_repaid", True), ("paid_off", True),
    ("is_good", True), ("GoodCredit", True), ("non_default", True), ("performing", True),
    ("not_repaid", False), ("unpaid", False), ("no_repayment", False), ("default", False),
    ("SeriousDlqin2yrs", False), ("Class", False), ("bad", False), ("is_fraud", False),
])
def test_which_label_names_say_true_is_good(name: str, good: bool) -> None:
    assert good_when_true(name) is good
    bad, ok = label_values([0, 1, 1, 0], "f.csv", name=name)
    assert (bad, ok) == (([0], [1]) if good else ([1], [0]))


def test_text_labels_are_read_by_their_words_whatever_the_name() -> None:
    assert label_values(["Charged Off", "Fully Paid"], "f.csv", ("Charged Off",),
                        name="repaid") == (["Charged Off"], ["Fully Paid"])
    assert label_values(["bad", "good"], "f.csv", name="repaid") == (["bad"], ["good"])


def test_a_bookkeeping_column_with_no_shared_level_is_warned_about_as_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # NannyML's synthetic_sample: 'period' is 'reference' in one file, 'analysis' in the other
    _car_loans(tmp_path)
    for name, value in (("ref.csv", "reference"), ("live.csv", "analysis")):
        df = pd.read_csv(tmp_path / name)
        df["period"] = value
        df.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "period: categorical              text with one value only (a constant)" in out, out
    warning = next(ln for ln in out.splitlines() if "warning: period" in ln)
    assert "names the file, period or batch" in warning and "--ignore period" in warning
    assert "counter" not in warning, warning


def test_a_scorecards_points_are_a_feature_and_init_says_why(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _car_loans(tmp_path)
    for name in ("ref.csv", "live.csv"):
        df = pd.read_csv(tmp_path / name).drop(columns=["y_pred_proba"])
        df["score"] = np.random.default_rng(3).integers(300, 851, len(df))
        df.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("score: none"))
    assert "'score' is named like a score but holds 300 to 850" in line, line
    fields = _fields(tmp_path, "predictions")
    assert "score" not in fields and fields["features"]["score"]["type"] == "numeric"
