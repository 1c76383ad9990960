"""A count of occurrences named with "time" (Give Me Some Credit's
``NumberOfTime30-59DaysPastDueNotWorse`` and ``NumberOfTimes90DaysLate``) is no event time:
``init`` used to stop on such a table, asking for its time field, where the table has none.
``--time-field none`` reads a file in record order whatever its names say."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.onboard.infer import name_rank
from driftwatch.onboard.roles import TIME

from ._cli import run_cli

GMSC = ["NumberOfTime30-59DaysPastDueNotWorse", "NumberOfTimes90DaysLate",
        "NumberOfTime60-89DaysPastDueNotWorse"]


@pytest.mark.parametrize("name", [*GMSC, "num_times_late", "times_delinquent",
                                  "login_time_count", "count_time_outs"])
def test_a_count_named_with_time_is_not_named_like_a_time(name: str) -> None:
    assert name_rank(name, *TIME) == 0


#: Counts of distinct values whose names also name a time (the Bank Account Fraud table's)
DISTINCT = ["date_of_birth_distinct_emails_4w", "device_distinct_emails_8w",
            "distinct_dates_seen", "n_unique_login_times", "nunique_time_zones"]


@pytest.mark.parametrize("name", DISTINCT)
def test_a_count_of_distinct_values_is_no_time_whatever_it_names(name: str) -> None:
    assert name_rank(name, *TIME) == 0


@pytest.mark.parametrize("name", ["timestamp", "event_timestamp", "decision_time",
                                  "EventTimestamps", "created_at", "time", "ts_ms",
                                  "application_date", "TransactionDT_time"])
def test_time_names_still_read_as_time_names(name: str) -> None:
    assert name_rank(name, *TIME) >= 2


@given(st.sampled_from(["NumberOf", "number_of_", "num_", "NumOf", "count_", "cnt_", "no_of_"]),
       st.sampled_from(["Time", "Times", "time", "times", "_time_"]),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", max_size=12))
def test_a_name_that_starts_as_a_count_is_never_a_time(prefix: str, word: str,
                                                      rest: str) -> None:
    assert name_rank(prefix + word + rest, *TIME) == 0


def _gmsc(tmp: Path, n: int = 400) -> None:
    rng = np.random.default_rng(5)

    def frame() -> pd.DataFrame:
        return pd.DataFrame({
            "RevolvingUtilizationOfUnsecuredLines": rng.beta(1.2, 3, n),
            "age": rng.integers(21, 80, n),
            "NumberOfTime30-59DaysPastDueNotWorse": rng.poisson(0.4, n),
            "MonthlyIncome": rng.lognormal(8.5, 0.6, n).round(),
            "NumberOfTimes90DaysLate": rng.poisson(0.3, n),
            "SeriousDlqin2yrs": rng.integers(0, 2, n)})

    frame().to_csv(tmp / "cs-training.csv", index=False)
    live = frame()
    live.insert(0, "Id", np.arange(1, n + 1))
    live["prob"] = rng.random(n).round(4)
    live.drop(columns=["SeriousDlqin2yrs"]).to_csv(tmp / "scored.csv", index=False)
    live[["Id", "SeriousDlqin2yrs"]].to_csv(tmp / "outcomes.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str
          ) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "cs-training.csv"), "--sample",
                    str(tmp / "scored.csv"), "--outcomes", str(tmp / "outcomes.csv"),
                    "--model", "gmsc", "--connector-out", str(tmp / "c.yaml"),
                    "--policy-out", str(tmp / "p.yaml"), *extra], capsys)


def test_give_me_some_credit_onboards_in_record_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _gmsc(tmp_path)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: record order (source: order)" in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    fields = c["source"]["streams"]["predictions"]["fields"]
    assert fields["event_time"] == {"source": "order"}
    assert {"NumberOfTime30-59DaysPastDueNotWorse", "NumberOfTimes90DaysLate"} <= set(
        fields["features"])


def test_time_field_none_reads_a_file_in_record_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ULB's ``Time`` counts seconds from a start: init asks, and ``none`` is an answer."""
    _gmsc(tmp_path)
    scored = pd.read_csv(tmp_path / "scored.csv")
    scored.insert(1, "Time", np.arange(len(scored)) * 3)
    scored.to_csv(tmp_path / "scored.csv", index=False)
    code, _, err = _init(tmp_path, capsys)
    assert code == 2 and "--time-field none" in err, err
    code, out, err = _init(tmp_path, capsys, "--time-field", "none")
    assert code == 0, err
    assert "event time: record order (source: order)" in out, out
    assert "--time-field none: each record is numbered" in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert c["source"]["streams"]["predictions"]["fields"]["event_time"] == {"source": "order"}


def test_a_table_whose_only_date_name_is_a_distinct_count_onboards_in_record_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The Bank Account Fraud table: ``date_of_birth_distinct_emails_4w`` (a small count)
    was taken for its time field, and init stopped, naming it as the field to pass."""
    _gmsc(tmp_path)
    rng = np.random.default_rng(9)
    for name in ("cs-training.csv", "scored.csv"):
        t = pd.read_csv(tmp_path / name)
        t["date_of_birth_distinct_emails_4w"] = rng.poisson(9, len(t))
        t.to_csv(tmp_path / name, index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: record order (source: order)" in out, out
    c = yaml.safe_load((tmp_path / "c.yaml").read_text())
    fields = c["source"]["streams"]["predictions"]["fields"]
    assert fields["features"]["date_of_birth_distinct_emails_4w"]["type"] == "numeric"
