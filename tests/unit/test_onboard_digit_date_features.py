"""A reference column of dates written in digits that is not the stream's time (Freddie
Mac's ``MATURITY_DATE``, ``204907``; Home Credit-like ``application_date``, ``20240131``,
beside ``ts``) is left out of the features, as dates written as text are: as a feature each
later period is one the reference never saw, and an unchanged stream drifted in every
window. Checked end to end on Freddie Mac-shaped loan-level data written pipe-delimited
with a header (credit score 9999 and DTI 999 for missing, first payment date ``yyyymm`` as
the event time)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.onboard.digitdates import digit_dates

from ._cli import run_cli


def freddie(n: int, seed: int, months: list[int], shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    score = rng.normal(740 - shift, 45, n).clip(300, 850).round().astype(int)
    score[rng.random(n) < 0.02] = 9999
    dti = rng.normal(35, 9, n).clip(1, 65).round().astype(int)
    dti[rng.random(n) < 0.03] = 999
    first = np.sort(rng.choice(months, n))
    return pd.DataFrame({
        "CREDIT_SCORE": score, "FIRST_PAYMENT_DATE": first, "MATURITY_DATE": first + 3000,
        "OCCUPANCY_STATUS": rng.choice(["P", "I", "S"], n, p=[0.88, 0.08, 0.04]),
        "ORIGINAL_DTI": dti, "ORIGINAL_UPB": (rng.lognormal(12.4, 0.5, n) // 1000 * 1000),
        "ORIGINAL_INTEREST_RATE": rng.normal(4.6, 0.4, n).round(3),
        "score": rng.random(n).round(4), "DEFAULT_FLAG": (rng.random(n) < 0.1).astype(int)})


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _replay(name: str, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    code, _, err = run_cli(["replay", "-q", "-c", "c.yaml", "-p", "p.yaml", "--out",
                            f"o-{name}", "-i", f"predictions={name}/pred.txt",
                            f"outcomes={name}/out.txt", "--no-levels-cache"], capsys)
    assert code == 0, err
    return [w for x in Path(f"o-{name}/timeline.jsonl").read_text().splitlines()
            if (w := orjson.loads(x))["n_events"]]


def test_freddie_mac_pipe_file_end_to_end_leaves_maturity_date_out(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    months = [y * 100 + m for y in (2019, 2020) for m in range(1, 13)]
    freddie(3000, 0, months[:6]).drop(columns="FIRST_PAYMENT_DATE").to_csv(
        "ref.txt", sep="|", index=False)
    for name, seed, shift in (("same", 1, 0.0), ("shift", 2, 40.0)):
        Path(name).mkdir()
        live = freddie(6000, seed, months[6:], shift)
        live.insert(0, "LOAN_SEQUENCE_NUMBER", [f"F19Q1{i:07d}" for i in range(len(live))])
        live.drop(columns="DEFAULT_FLAG").to_csv(f"{name}/pred.txt", sep="|", index=False)
        live[["LOAN_SEQUENCE_NUMBER", "DEFAULT_FLAG"]].to_csv(f"{name}/out.txt", sep="|",
                                                              index=False)
    code, out, err = run_cli(["init", "--reference", "ref.txt", "--sample", "same/pred.txt",
                              "--outcomes", "same/out.txt", "--model", "fm",
                              "--connector-out", "c.yaml", "--policy-out", "p.yaml",
                              "--pane", "500", "--time-field", "FIRST_PAYMENT_DATE"], capsys)
    assert code == 0, err
    assert "format: %Y%m" in out
    assert "ignore: MATURITY_DATE              dates written in digits (204901" in out
    stream = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"]["predictions"]
    assert stream["csv"] == {"delimiter": "|"}
    assert stream["fields"]["event_time"] == {"path": "FIRST_PAYMENT_DATE", "format": "%Y%m"}
    assert "MATURITY_DATE" not in stream["fields"]["features"]
    assert stream["fields"]["missing_values_by_feature"] == {"CREDIT_SCORE": [9999],
                                                             "ORIGINAL_DTI": [999]}
    code, checked, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"],
                                 capsys)
    assert code == 0 and checked.endswith("ok p.yaml\n"), err
    same = _replay("same", capsys)
    assert [w["n_bad"] for w in same] == [0] * len(same)
    assert {w["tier"] for w in same} == {"none"}
    assert [w["start"][:7] for w in same][:2] == ["2019-07", "2019-08"]  # yyyymm windows
    raised = {(r["signal"], r.get("feature")) for w in _replay("shift", capsys)
              for r in w["decision"]["reasons"]}
    assert raised == {("psi", "CREDIT_SCORE")}


def test_a_yyyymmdd_column_beside_the_time_is_no_feature(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(5)
    days = pd.date_range("2018-01-01", "2018-06-30").strftime("%Y%m%d").astype(int)

    def frame(n: int) -> pd.DataFrame:
        return pd.DataFrame({"application_date": rng.choice(days, n),
                             "AMT_CREDIT": rng.gamma(3, 2e5, n).round(1),
                             "TARGET": rng.integers(0, 2, n)})

    frame(2000).to_csv("ref.csv", index=False)
    live = frame(1000)
    live.insert(0, "SK_ID_CURR", np.arange(100_000, 101_000))
    live.insert(1, "ts", 1_720_000_000 + 60 * np.arange(1000))
    live.drop(columns="TARGET").to_csv("pred.csv", index=False)
    live[["SK_ID_CURR", "TARGET"]].to_csv("out.csv", index=False)
    code, out, err = run_cli(["init", "--reference", "ref.csv", "--sample", "pred.csv",
                              "--outcomes", "out.csv", "--connector-out", "c.yaml",
                              "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    assert "event time: ts" in out
    assert "ignore: application_date" in out and "%Y%m%d" in out
    features = yaml.safe_load(Path("c.yaml").read_text())["source"]["streams"][
        "predictions"]["fields"]["features"]
    assert list(features) == ["AMT_CREDIT"]


@settings(max_examples=100, deadline=None)
@given(days=st.lists(st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)), min_size=1,
                     max_size=50),
       fmt=st.sampled_from(["%Y%m%d", "%Y%m"]))
def test_any_dates_written_in_digits_are_said(days: list[dt.date], fmt: str) -> None:
    why = digit_dates([int(d.strftime(fmt)) for d in days])
    assert why is not None and fmt in why


@settings(max_examples=100, deadline=None)
@given(amounts=st.lists(st.integers(1, 10**9), min_size=1, max_size=50),
       unit=st.sampled_from([100, 1000]))
def test_amounts_in_whole_hundreds_never_pass_for_dates(amounts: list[int], unit: int) -> None:
    """A day or month 00 is no date, and a column whose every month-first period falls in
    1900, 2000 or 2100 is one of round amounts: whatever their size, they are features."""
    assert digit_dates([a * unit for a in amounts]) is None


def test_round_hundreds_read_month_first_are_amounts() -> None:
    """61900 reads as June 1900 under %m%Y, 121900 as December 1900: amounts, not dates."""
    assert digit_dates([61900, 121900, 31900]) is None
    assert digit_dates([61999, 122001]) is not None  # periods of 1999 and 2001 stay dates
