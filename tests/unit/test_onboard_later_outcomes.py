"""A loan status's final outcomes a sample lacks, and Freddie Mac's unknown code.

Lending Club's final ``Default`` is rare (a few dozen loans in millions), so a sample of
first rows lacks it: ``init`` wrote only the sample's values, and each ``Default`` in
replay was a bad record (``bad_label``) instead of a bad outcome. Freddie Mac's
delinquency status ``XX`` (unknown) was read as good under ``--label-bad 3 4 6 RA``
("every other value is then good")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.infer import label_sides
from driftwatch.onboard.outcomewords import (
    LENDING_CLUB,
    LOAN_STATES,
    PROSPER,
    later_values,
    word_side,
)

from ._cli import run_cli

#: Lending Club's loan_status as its downloads write it (``Default`` the rarest)
LC = ["Fully Paid", "Charged Off", "Default", "Current", "In Grace Period",
      "Late (16-30 days)", "Late (31-120 days)",
      "Does not meet the credit policy. Status:Fully Paid",
      "Does not meet the credit policy. Status:Charged Off"]
LC_BAD = {"Charged Off", "Default", "Does not meet the credit policy. Status:Charged Off"}
LC_GOOD = {"Fully Paid", "Does not meet the credit policy. Status:Fully Paid"}
LC_PENDING = {"Current", "In Grace Period", "Late (16-30 days)", "Late (31-120 days)"}


def _lending_club(tmp: Path, statuses: list[str], n: int = 400) -> None:
    """A reference and a predictions sample carrying ``loan_status`` (the outcome in the
    prediction's record), written as CSV."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame({"loan_amnt": rng.integers(1000, 30000, n),
                          "grade": rng.choice(list("ABCDE"), n),
                          "loan_status": rng.choice(statuses, n)})
    frame.to_csv(tmp / "ref.csv", index=False)
    live = frame.copy()
    live.insert(0, "id", range(n))
    live.insert(1, "ts", 1.7e9 + np.arange(n) * 3600.0)
    live["score"] = rng.uniform(size=n).round(4)
    live.to_csv(tmp / "live.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[dict, str]:
    code, out, err = run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                              str(tmp / "live.csv"), "--model", "m", "--connector-out",
                              str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                              "--force", *flags], capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp / "c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]
    return fields["label"], out


@pytest.mark.parametrize("with_default", [True, False])
def test_lending_club_statuses_read_on_their_sides(
        with_default: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _lending_club(tmp_path, LC if with_default else [s for s in LC if s != "Default"])
    label, out = _init(tmp_path, capsys)
    assert set(label["bad"]) == LC_BAD, label
    assert set(label["good"]) == LC_GOOD, label
    assert set(label["pending"]) >= LC_PENDING, label  # a loan still running: no outcome
    assert not {"Chargedoff", "Defaulted", "Completed"} & {*label["bad"], *label["good"]}
    # the policy's reference label holds what the reference holds, nothing guessed
    ref = yaml.safe_load((tmp_path / "p.yaml").read_text())["reference"]["label"]
    assert ("Default" in ref["bad"]) is with_default, ref
    said = [ln for ln in out.splitlines() if ln.lstrip().startswith("later outcomes:")]
    if with_default:
        assert not said, out
    else:
        assert len(said) == 1 and "'Default' (bad)" in said[0], out
        assert "Lending Club's loan_status" in said[0], said


def test_a_default_the_sample_lacked_replays_as_a_bad_outcome_not_a_bad_record(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _lending_club(tmp_path, [s for s in LC if s != "Default"])
    _init(tmp_path, capsys)
    live = pd.read_csv(tmp_path / "live.csv")
    live.loc[::7, "loan_status"] = "Default"
    live.to_csv(tmp_path / "later.csv", index=False)
    code, _, err = run_cli(["replay", "-q", "--no-report", "-c", str(tmp_path / "c.yaml"),
                            "-p", str(tmp_path / "p.yaml"), "-i",
                            f"predictions={tmp_path / 'later.csv'}", "-o",
                            str(tmp_path / "run")], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_records"] == 0, summary["bad_by_reason"]
    running = int(live["loan_status"].isin(LC_PENDING).sum())
    assert summary["labels"]["joined"] == len(live) - running, summary["labels"]


def test_prosper_gets_its_own_outcomes_not_lending_clubs() -> None:
    later = later_values(["Chargedoff", "Completed", "Current"])
    assert later.bad == ["Defaulted"] and later.good == [] and later.told == [PROSPER.name]


def test_a_label_of_no_known_status_gets_nothing_added() -> None:
    for values in (["0", "1"], [True, False], ["bad", "good"], ["default", "paid"],
                   ["yes", "no"]):
        assert later_values(values) == later_values([]), values


#: Lending Club's values that tell its status apart (not 'Current' nor 'Default', which
#: every lender writes)
_TELLING = sorted(set(LC) - {"Current", "Default"})


@given(st.sets(st.sampled_from(LC), min_size=1).filter(lambda s: bool(s & set(_TELLING))))
def test_any_lending_club_sample_completes_its_vocabulary_on_the_words_sides(
        seen: set[str]) -> None:
    later = later_values(sorted(seen))
    assert not set(later.bad) & seen and not set(later.good) & seen
    assert set(later.bad) | (seen & LC_BAD) == LC_BAD
    assert set(later.good) | (seen & LC_GOOD) == LC_GOOD
    assert set(later.pending) | seen >= set(LOAN_STATES)
    assert all(word_side(v) == "bad" for v in later.bad)
    assert all(word_side(v) == "good" for v in later.good)
    assert all(word_side(v) == "pending" for v in later.pending)
    assert later.told == [LENDING_CLUB.name]


# -- Freddie Mac's delinquency status: months delinquent, RA (REO acquisition), XX unknown

FM_BAD = ["3", "4", "6", "RA"]


def test_freddie_macs_unknown_status_is_pending_not_good() -> None:
    bad, good, pending = label_sides(["0", "1", "2", "3", "4", "6", "RA", "XX"], "fm.csv",
                                     FM_BAD)
    assert (bad, good, pending) == (["3", "4", "6", "RA"], ["0", "1", "2"], ["XX"])
    # without RA in the sample, the user's RA still tells the codes
    assert label_sides(["0", "1", "3", "XX"], "fm.csv", FM_BAD)[2] == ["XX"]
    # an XX among other words is no delinquency code: the user's rule holds
    assert label_sides(["late", "paid", "XX"], "x.csv", ["late"])[1] == ["XX", "paid"]


@pytest.mark.parametrize("codes", [["0", "1", "2", "3", "4", "6", "RA", "XX"],
                                   ["0", "1", "2", "3", "4", "6", "RA"]])
def test_init_writes_freddie_macs_xx_pending(codes: list[str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(3)
    n = 300
    frame = pd.DataFrame({"upb": rng.integers(50_000, 300_000, n),
                          "delinquency_status": rng.choice(codes, n)})
    frame.to_csv(tmp_path / "ref.csv", index=False)
    frame.insert(0, "loan_id", range(n))
    frame.insert(1, "ts", 1.7e9 + np.arange(n) * 3600.0)
    frame.to_csv(tmp_path / "live.csv", index=False)
    flags = ["--label-field", "delinquency_status"]
    for b in FM_BAD:
        flags += ["--label-bad", b]
    label, out = _init(tmp_path, capsys, *flags)
    assert label["bad"] == FM_BAD and label["good"] == ["0", "1", "2"], label
    assert label["pending"] == ["XX"], label
    if "XX" not in codes:
        assert "the unknown status code the sample lacks ('XX')" in out, out
