"""``init`` and plain numbers sent as text: ISO-8601 reads ``'2188'`` as the year 2188, so a
JSON sample's amounts written as strings were taken as the event time (alone), or made the
event time ambiguous beside the real one. Such a column is a time only where its name says
year or nothing else reads as a time, in the years a date may fall in, and init says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.errors import ConfigError
from driftwatch.onboard.finding import find_role
from driftwatch.onboard.roles import TIME, time_check
from driftwatch.onboard.timefields import times_by_value
from driftwatch.onboard.times import time_reading

from ._cli import run_cli

#: Amounts of up to four digits, those ISO-8601 reads as years among them (a short column
#: of five digits may read as months, 61900 as June 1900: digitdates' rule, not this one)
AMOUNTS = st.lists(st.integers(0, 9_999), min_size=1, max_size=40)


def _event_time(columns: dict[str, list[Any]]) -> str | None:
    """The event time init chooses among ``columns`` (no id among them), or None."""
    names = list(columns)
    try:
        c = find_role("event time", TIME, names, time_check(columns.get), "--time-field",
                      None, "live.jsonl", required=True, values=columns.get,
                      by_values=times_by_value(names, columns.get))
    except ConfigError:
        return None
    return c.name if c else None


@settings(max_examples=200, deadline=None)
@given(AMOUNTS)
def test_amounts_as_text_never_beat_a_real_time(amounts: list[int]) -> None:
    times = [f"2024-05-01T{i % 24:02d}:00:00Z" for i in range(len(amounts))]
    cols = {"amount": [str(a) for a in amounts], "reported": times}
    assert _event_time(cols) == "reported"


@settings(max_examples=300, deadline=None)
@given(AMOUNTS)
def test_amounts_alone_are_never_a_time(amounts: list[int]) -> None:
    # without a time the table is read in record order: an amount that happens to fall
    # in the years of a date ("2001") is no better a time than one that does not
    cols = {"amount": [str(a) for a in amounts], "income": [float(a) for a in amounts]}
    assert _event_time(cols) is None
    years = all(1900 <= a <= 2100 for a in amounts)  # four digits ISO reads as a year
    named = {"issue_year": cols["amount"], "income": cols["income"]}
    assert _event_time(named) == ("issue_year" if years else None)


def test_a_field_named_year_beats_other_plain_numbers_and_loses_to_a_time() -> None:
    cols: dict[str, list[Any]] = {"amount": ["2001", "2010"], "issue_year": ["2015", "2016"]}
    assert _event_time(cols) == "issue_year"
    cols["reported"] = ["2024-05-01T00:00:00Z", "2024-05-01T01:00:00Z"]
    assert _event_time(cols) == "reported"


def test_the_reading_says_the_numbers_are_read_as_years() -> None:
    r = time_reading("ts", ["2015", "2016", None], "live.jsonl")
    assert r.unit == "iso"
    assert r.note == ("; its values are plain numbers ('2015', '2016'), read as ISO-8601 "
                      "years ('2015' is 2015-01-01T00:00:00Z, the start of the year): if ts "
                      "holds amounts or counts, not years, pass --time-field with the field "
                      "that holds the event time")
    assert "no zone" not in r.note


def _files(tmp: Path, amounts: list[str], reported: bool) -> None:
    rng = np.random.default_rng(3)
    pd.DataFrame({"income": rng.normal(5e4, 1e4, 200).round(0),
                  "default": rng.choice([0, 1], 200)}).to_csv(tmp / "ref.csv", index=False)
    with (tmp / "live.jsonl").open("w") as f:
        for i, a in enumerate(amounts):
            rec: dict[str, Any] = {"request_id": f"r{i}", "income": 50_000 + i, "amount": a}
            if reported:
                rec["reported"] = f"2024-05-01T{i % 24:02d}:00:00Z"
            f.write(json.dumps(rec) + "\n")


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.jsonl"), "--model", "m", "--connector-out",
                    str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml")], capsys)


def test_init_takes_the_real_time_beside_amounts_as_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, ["2188", "1500", "3200", "1999"] * 10, reported=True)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: reported " in out, out


@pytest.mark.parametrize("amounts", [["2001", "1999", "2050"], ["2188", "1500", "3200"]])
def test_init_reads_a_table_of_amounts_without_a_time_in_record_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], amounts: list[str]) -> None:
    _files(tmp_path, amounts * 10, reported=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("event time: "))
    assert line.startswith("event time: record order"), line
    assert "Traceback" not in err
