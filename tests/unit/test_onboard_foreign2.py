"""``init`` on the shapes of four more public tables: Lending Club (a loan status with a
value that is no outcome yet, percent text, month-year dates), Home Credit (``SK_ID_CURR``),
PaySim (a rare fraud label, a destination id per row) and IEEE-CIS (a time counter in
the reference, null fields left out of JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.onboard.outcomewords import LOAN_STATES

from ._cli import run_cli as _cli

#: the sample's Lending Club outcomes, then those of its vocabulary it lacks
LC_BAD = ["Charged Off", "Default", "Does not meet the credit policy. Status:Charged Off"]
LC_GOOD = ["Fully Paid", "Does not meet the credit policy. Status:Fully Paid"]


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                 str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                 "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                 *extra], capsys)


def _loans(tmp: Path, n: int = 1500, fraud_rate: float = 0.2) -> None:
    rng = np.random.default_rng(5)

    def frame(k: int, start: int) -> pd.DataFrame:
        pd_ = rng.uniform(0.02, 0.6, k)
        return pd.DataFrame({
            "id": np.arange(start, start + k),
            "loan_amnt": rng.integers(1000, 35000, k).astype(float),
            "int_rate": [f"{x:.2f}%" for x in rng.uniform(6, 26, k)],
            "earliest_cr_line": [f"{m}-{y}" for m, y in zip(
                rng.choice(["Jan", "Jun", "Dec"], k), rng.integers(1980, 2010, k), strict=True)],
            "dest": [f"M{x}" for x in rng.integers(10**8, 10**9, k)],
            "score": pd_.round(4),
            "status": np.where(rng.uniform(size=k) < pd_ * fraud_rate / 0.31,
                               "Charged Off", "Fully Paid"),
        })

    frame(n, 0).to_csv(tmp / "ref.csv", index=False)
    live = frame(n, 10**6)
    live.insert(1, "ts", 1.7e9 + np.arange(n) * 60.0)
    live["status"] = live["status"].where(np.arange(n) % 4 != 0, "Current")
    live.drop(columns=["status"]).to_csv(tmp / "live.csv", index=False)
    live[["id", "status"]].to_csv(tmp / "out.csv", index=False)


def test_an_outcome_value_the_reference_label_lacks_is_not_counted_good(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Lending Club's 'Current' is a loan without an outcome yet, not a good one
    _loans(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == LC_BAD and label["good"] == LC_GOOD, label
    assert label["pending"] == ["Current", *LOAN_STATES[1:]], label  # no outcome yet, not bad
    assert "'Current'" in out and "written as `pending`" in out, out


def test_pending_outcomes_are_left_out_of_the_join_not_dead_lettered(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    _loans(tmp_path)
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off", "--ignore", "dest",
                         "--ignore", "earliest_cr_line")
    assert code == 0, err
    monkeypatch.chdir(tmp_path)
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "live.csv", "out.csv", "--out", "run"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    statuses = pd.read_csv(tmp_path / "out.csv")["status"]
    current = int((statuses == "Current").sum())
    assert current > 0 and summary["bad_by_reason"].get("bad_label", 0) == 0, summary
    labels = summary["labels"]
    assert labels["invalid_outcomes"] == current, labels
    assert labels["joined"] == len(statuses) - current, labels


def test_a_rare_bad_value_absent_from_the_outcomes_sample_stays_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # PaySim: 0.13% fraud, so the first records of the outcomes may hold no fraud at all;
    # the connector wrote `bad: []` and every fraud became a bad_label dead letter
    _loans(tmp_path, fraud_rate=0.2)
    out = pd.read_csv(tmp_path / "out.csv")
    out["status"] = "Fully Paid"
    out.to_csv(tmp_path / "out.csv", index=False)
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    label = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert label["bad"] == LC_BAD and label["good"] == LC_GOOD, label


def test_dates_and_per_row_ids_are_not_features_and_percent_text_is_a_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # as categories each gave a false alarm in every window: '13.56%' with thousands of
    # levels (an unseen one counts at the epsilon), 'Dec-2015' a new level every month,
    # PaySim's nameDest a new level every row; the rate is read as a number instead
    _loans(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    pol = yaml.safe_load((tmp_path / "p.yaml").read_text())
    assert pol["model"]["features"] == ["loan_amnt", "int_rate"], out
    assert {"earliest_cr_line", "dest"} <= set(pol["reference"]["ignore"])
    assert "int_rate" not in pol["reference"]["ignore"]
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    assert feats["int_rate"]["format"] == "percent"
    assert "percent text" in out and "format: percent" in out, out
    assert "dates ('" in out and "earliest_cr_line" in out, out
    assert "dest" in out and "distinct" in out, out


def test_a_feature_whose_sample_lies_outside_the_reference_is_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # IEEE-CIS: TransactionDT counts seconds from a start date, so a later stream lies
    # wholly above the training range and is out of range in every window
    _loans(tmp_path)
    for name, shift in (("ref.csv", 0), ("live.csv", 10**7)):
        t = pd.read_csv(tmp_path / name)
        t["TransactionDT"] = 86400 + shift + np.arange(len(t)) * 600
        t.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "warning: TransactionDT" in ln)
    assert "outside the reference's range" in line and "--ignore TransactionDT" in line


def test_an_id_with_id_inside_its_name_is_found(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Home Credit's SK_ID_CURR
    _loans(tmp_path)
    for name in ("ref.csv", "live.csv", "out.csv"):
        t = pd.read_csv(tmp_path / name).rename(columns={"id": "SK_ID_CURR"})
        t.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    assert "id: SK_ID_CURR" in out and "outcomes id: SK_ID_CURR" in out, out


def test_a_feature_that_counts_up_through_the_sample_is_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # PaySim's step (an hour index, 1..743) in the reference and the stream: within the
    # reference's range, yet each window holds a few hours of it, PSI 8 in every window
    _loans(tmp_path)
    for name in ("ref.csv", "live.csv"):
        t = pd.read_csv(tmp_path / name)
        t["step"] = np.sort(np.random.default_rng(2).integers(1, 744, len(t)))
        t.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if "warning: step" in ln)
    assert "never decrease" in line and "--ignore step" in line, line
