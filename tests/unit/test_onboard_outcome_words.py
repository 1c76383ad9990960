"""``init`` reads the loan statuses of the SBA (``MIS_Status``: ``CHGOFF`` / ``P I F``) and
Prosper (``LoanStatus``: ``Chargedoff``, ``Defaulted``, ``Completed``, and ``Current``,
``Past Due (1-15 days)`` ... with no outcome yet) without ``--label-bad``; a status with no
outcome yet is pending, never good, in the reference and in the streams alike."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import label_sides
from driftwatch.onboard.outcomewords import LOAN_STATES
from driftwatch.policy.reference import LabelColumn
from driftwatch.windows.conventions import TableConventions

from ._cli import run_cli as _cli

PROSPER = ["Chargedoff", "Defaulted", "Completed", "Current", "Past Due (1-15 days)",
           "Past Due (>120 days)", "FinalPaymentInProgress", "Cancelled"]


def test_sba_status_reads_without_label_bad() -> None:
    assert label_sides(["P I F", "CHGOFF", "P I F"], "sba.csv") == (["CHGOFF"], ["P I F"], [])


def test_prosper_status_reads_with_the_running_loans_pending() -> None:
    bad, good, pending = label_sides(PROSPER, "prosper.csv")
    assert bad == ["Chargedoff", "Defaulted"] and good == ["Completed"]
    assert sorted(pending) == sorted(["Current", "Past Due (1-15 days)",
                                      "Past Due (>120 days)", "FinalPaymentInProgress",
                                      "Cancelled"])


def test_label_bad_leaves_a_running_loan_pending_not_good() -> None:
    # before: every value not named bad was good, 'Current' too
    bad, good, pending = label_sides(["Charged Off", "Fully Paid", "Current",
                                      "Late (31-120 days)"], "lc.csv", ["Charged Off"])
    assert (bad, good) == (["Charged Off"], ["Fully Paid"])
    assert sorted(pending) == ["Current", "Late (31-120 days)"]


def test_current_beside_delinquent_alone_is_the_good_side() -> None:
    # a snapshot flag, not a loan status: no final good value to stand beside
    assert label_sides(["current", "delinquent"], "f.csv", ["delinquent"]) == (
        ["delinquent"], ["current"], [])


def test_a_status_with_a_word_init_does_not_know_still_asks() -> None:
    with pytest.raises(ConfigError, match="--label-bad"):
        label_sides(["Chargedoff", "Completed", "Restructured"], "p.csv")
    with pytest.raises(ConfigError, match="--label-bad"):  # no good outcome at all
        label_sides(["Chargedoff", "Current"], "p.csv")


def test_the_reference_reads_pending_rows_as_unlabelled() -> None:
    tc = TableConventions(score=None, label="s", bad=("Chargedoff",), good=("Completed",),
                          pending=("Current",))
    df = pd.DataFrame({"s": ["Chargedoff", "Completed", "Current"], "x": [1.0, 2.0, 3.0]})
    assert tc.label_values(df["s"]) == []
    assert tc.prepare(df)["s"].tolist()[:2] == [1.0, 0.0]
    assert np.isnan(tc.prepare(df)["s"].tolist()[2])


def test_a_pending_value_cannot_be_bad_or_good_too() -> None:
    with pytest.raises(ValueError, match="pending label value cannot also be bad or good"):
        LabelColumn.model_validate({"column": "s", "bad": ["Chargedoff"],
                                    "good": ["Completed"], "pending": ["completed"]})


#: Prosper's statuses of loans without an outcome: with its three final ones, twelve
_RUNNING = ["Current", "FinalPaymentInProgress", "Cancelled",
            *[f"Past Due ({d})" for d in ("1-15 days", "16-30 days", "31-60 days",
                                           "61-90 days", "91-120 days", ">120 days")]]


def _prosper(tmp: Path, n: int = 1500) -> None:
    rng = np.random.default_rng(11)

    def frame(start: int) -> pd.DataFrame:
        p = rng.uniform(0.02, 0.5, n)
        status = np.where(rng.uniform(size=n) < p, rng.choice(["Chargedoff", "Defaulted"], n),
                          "Completed")
        running = rng.uniform(size=n) < 0.3
        status = np.where(running, rng.choice(_RUNNING, n), status)
        return pd.DataFrame({"ListingKey": np.arange(start, start + n),
                             "BorrowerAPR": rng.uniform(0.05, 0.35, n).round(4),
                             "StatedMonthlyIncome": rng.lognormal(8, 0.5, n).round(2),
                             "EmploymentStatus": rng.choice(["Employed", "Retired",
                                                             "Self-employed"], n),
                             "LoanStatus": status})

    frame(0).to_csv(tmp / "ref.csv", index=False)
    live = frame(10**6)
    live.insert(1, "ListingCreationDate", 1.7e9 + np.arange(n) * 60.0)
    live.drop(columns=["LoanStatus"]).to_csv(tmp / "live.csv", index=False)
    live[["ListingKey", "LoanStatus"]].to_csv(tmp / "out.csv", index=False)


def test_prosper_onboards_and_replays_without_label_bad(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _prosper(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _cli(["init", "-r", "ref.csv", "-s", "live.csv", "--outcomes", "out.csv",
                           "-m", "p", "--connector-out", "c.yaml", "--policy-out", "p.yaml"],
                          capsys)
    assert code == 0, err
    label = yaml.safe_load(Path("c.yaml").read_text())[
        "source"]["streams"]["outcomes"]["fields"]["label"]
    assert sorted(label["bad"]) == ["Chargedoff", "Defaulted"], label
    assert label["good"] == ["Completed"], label
    # the running states seen, then the loan states the sample lacks (they come later)
    assert set(_RUNNING) <= set(label["pending"]), label
    assert set(label["pending"]) == set(_RUNNING) | set(LOAN_STATES), label
    ref = yaml.safe_load(Path("p.yaml").read_text())["reference"]["label"]
    assert ref["good"] == ["Completed"] and sorted(ref["pending"]) == sorted(_RUNNING)
    assert "pending = " in out, out
    code, _, err = _cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "-i", "live.csv",
                         "out.csv", "-o", "run"], capsys)
    assert code == 0, err
    summary = json.loads(Path("run/summary.json").read_text())
    statuses = pd.read_csv("out.csv")["LoanStatus"]
    running = int(statuses.isin(_RUNNING).sum())
    assert summary["labels"]["invalid_outcomes"] == running, summary["labels"]
    assert summary["labels"]["joined"] == len(statuses) - running, summary["labels"]


def test_a_loan_state_the_sample_lacks_is_pending_when_it_comes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The connector listed only the states init's sample held: a later 'Past Due (91-120
    days)' (or Lending Club's 'Late (31-120 days)') was a bad record (bad_label), and a
    burst of them could close the data-quality gate."""
    _prosper(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = pd.read_csv("out.csv")
    sample = out[~out["LoanStatus"].str.startswith("Past Due (9")]
    sample.to_csv("out-sample.csv", index=False)
    ref = pd.read_csv("ref.csv")  # nor does the training table hold them
    ref[~ref["LoanStatus"].str.startswith("Past Due (9")].to_csv("ref.csv", index=False)
    code, said, err = _cli(["init", "-r", "ref.csv", "-s", "live.csv", "--outcomes",
                            "out-sample.csv", "-m", "p", "--connector-out", "c.yaml",
                            "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "loan states the sample lacks ('Issued', 'In Grace Period'" in said, said
    code, _, err = _cli(["replay", "-q", "--no-report", "-c", "c.yaml", "-p", "p.yaml", "-i",
                         "predictions=live.csv", "outcomes=out.csv", "-o", "run"], capsys)
    assert code == 0, err
    summary = json.loads(Path("run/summary.json").read_text())
    later = int(out["LoanStatus"].str.startswith("Past Due (9").sum())
    assert later > 0 and summary["bad_records"] == 0, summary["bad_by_reason"]
    running = int(out["LoanStatus"].isin(_RUNNING).sum())
    assert summary["labels"]["invalid_outcomes"] == running, summary["labels"]
