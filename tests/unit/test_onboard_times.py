"""``init`` on event times the connector reads only with ``format:`` or ``origin:``: Lending
Club's month-year ``issue_d`` (``Dec-2015``), day/month text that could be month/day, and
ULB's ``Time`` (seconds since the first transaction), each through to a replay."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.eventtime import from_format
from driftwatch.onboard.infer import TIME_FORMATS, text_formats
from driftwatch.onboard.times import counts_from_start, time_reading

from ._cli import run_cli as _cli

ULB_START = "2013-09-01T00:00:00Z"


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                 str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                 "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                 "--force", *extra], capsys)


def _replay(tmp: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    code, _, err = _cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                         "live.csv", "out.csv", "--out", "run"], capsys)
    assert code == 0, err
    return json.loads((tmp / "run" / "summary.json").read_text())  # type: ignore[no-any-return]


def _event_time(tmp: Path) -> dict[str, Any]:
    c = yaml.safe_load((tmp / "c.yaml").read_text())
    return c["source"]["streams"]["predictions"]["fields"]["event_time"]  # type: ignore[no-any-return]


def _loans(tmp: Path, issued: list[str], n: int = 600, **extra: list[str]) -> None:
    """Lending Club's shape: a reference without times; loans issued in ``issued`` order."""
    rng = np.random.default_rng(7)

    def frame(k: int, start: int) -> pd.DataFrame:
        p = rng.uniform(0.02, 0.6, k)
        return pd.DataFrame({
            "id": np.arange(start, start + k),
            "loan_amnt": rng.integers(1000, 35000, k).astype(float),
            "grade": rng.choice(list("ABCD"), k),
            "score": p.round(4),
            "loan_status": np.where(rng.uniform(size=k) < p, "Charged Off", "Fully Paid"),
        })

    frame(n, 0).to_csv(tmp / "ref.csv", index=False)
    live = frame(n, 10**6)
    live.insert(1, "issue_d", [issued[i * len(issued) // n] for i in range(n)])
    for name, vals in extra.items():
        live[name] = [vals[i % len(vals)] for i in range(n)]
    live.drop(columns=["loan_status"]).to_csv(tmp / "live.csv", index=False)
    live[["id", "loan_status"]].to_csv(tmp / "out.csv", index=False)


MONTHS = [d.strftime("%b-%Y") for d in pd.date_range("2015-01-01", periods=24, freq="MS")]


def test_month_year_text_becomes_the_connector_format_and_replays_in_dated_windows(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _loans(tmp_path, MONTHS)
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    assert "event time: issue_d" in out and "text in %b-%Y" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("  format: %b-%Y"))
    assert "every sample value of issue_d reads with it ('Jan-2015', 'Feb-2015'" in line
    assert _event_time(tmp_path) == {"path": "issue_d", "format": "%b-%Y"}
    monkeypatch.chdir(tmp_path)
    summary = _replay(tmp_path, capsys)
    assert summary["bad_by_reason"] == {} and summary["events"] == 600, summary
    assert (summary["first_event"], summary["last_event"]) == ("2015-01-01T00:00:00Z",
                                                               "2016-12-01T00:00:00Z")
    timeline = [json.loads(ln) for ln in (tmp_path / "run" / "timeline.jsonl").open()]
    assert timeline and all(w["end"][:4] in ("2015", "2016") for w in timeline)


def test_two_month_year_fields_are_an_ambiguity_named_then_settled_by_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # neither is named like a time: both are found by their values
    _loans(tmp_path, MONTHS, earliest_cr_line=["Jan-1999", "Jun-2003", "Dec-1987"])
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 2
    assert "the event time is ambiguous: candidates issue_d (" in err, err
    assert "earliest_cr_line (" in err and "--time-field" in err, err
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off",
                         "--time-field", "issue_d")
    assert code == 0, err
    assert _event_time(tmp_path) == {"path": "issue_d", "format": "%b-%Y"}


def test_day_month_text_that_could_be_month_day_is_refused_with_both_formats(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    days = [f"05/{m:02d}/2015" for m in range(1, 13)]  # the 5th of each month, or May
    _loans(tmp_path, days)
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 2
    assert "cannot tell the format of the event time issue_d" in err, err
    assert "'%d/%m/%Y' and with '%m/%d/%Y'" in err and "--time-format" in err, err
    code, out, err = _init(tmp_path, capsys, "--label-bad", "Charged Off",
                           "--time-format", "%d/%m/%Y")
    assert code == 0, err
    assert "from --time-format" in out
    assert _event_time(tmp_path) == {"path": "issue_d", "format": "%d/%m/%Y"}
    monkeypatch.chdir(tmp_path)
    summary = _replay(tmp_path, capsys)
    assert summary["bad_by_reason"] == {}
    assert summary["first_event"] == "2015-01-05T00:00:00Z", summary  # 5 January, not May
    # a day past the 12th settles it without a flag
    _loans(tmp_path, [*days, "25/12/2015"])
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off")
    assert code == 0, err
    assert _event_time(tmp_path)["format"] == "%d/%m/%Y"


@pytest.mark.parametrize(("fmt", "message"), [
    ("%d/%m", "expected a strptime format with a year directive"),
    ("%Q-%Y", "'Q' is a bad directive"),
])  # fmt: skip
def test_a_bad_time_format_flag_is_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, message: str) -> None:
    _loans(tmp_path, MONTHS)
    code, _, err = _init(tmp_path, capsys, "--label-bad", "Charged Off", "--time-format", fmt)
    assert code == 2 and message in err and repr(fmt) in err, err
    assert "Traceback" not in err and not (tmp_path / "c.yaml").exists()


def _ulb(tmp: Path, n: int = 600) -> None:
    """ULB's shape: ``Time`` counts seconds from the first transaction, over two days."""
    rng = np.random.default_rng(3)

    def frame(k: int) -> pd.DataFrame:
        return pd.DataFrame({"V1": rng.normal(0, 1, k).round(4),
                             "V2": rng.normal(0, 1, k).round(4),
                             "Amount": rng.exponential(80, k).round(2),
                             "Class": (rng.uniform(size=k) < 0.05).astype(int)})

    frame(n).to_csv(tmp / "ref.csv", index=False)
    live = frame(n)
    live.insert(0, "Time", np.sort(rng.integers(0, 172_792, n)).astype(float))
    live.loc[0, "Time"] = 0.0
    live.insert(0, "id", [f"t{i}" for i in range(n)])
    live.drop(columns=["Class"]).to_csv(tmp / "live.csv", index=False)
    live[["id", "Class"]].to_csv(tmp / "out.csv", index=False)


def test_seconds_from_the_first_transaction_get_the_origin_line_to_add_never_an_origin(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    _ulb(tmp_path)
    code, _, err = _init(tmp_path, capsys)
    assert code == 2 and "pass --time-field Time and init prints the origin" in err, err
    code, out, err = _init(tmp_path, capsys, "--time-field", "Time")
    assert code == 0, err
    warning = next(ln for ln in out.splitlines() if ln.startswith("  warning: Time"))
    assert "count from a start" in warning and "1970-01-01T00:00:00" in warning, warning
    assert ('event_time: {path: Time, unit: s, origin: "YYYY-MM-DDTHH:MM:SSZ"}'
            in warning), warning
    assert _event_time(tmp_path) == {"path": "Time", "unit": "s"}  # no origin invented
    text = (tmp_path / "c.yaml").read_text()
    assert '# counts from a start: add origin: "YYYY-MM-DDTHH:MM:SSZ"' in text
    # the user adds the line init printed, with the instant they know
    (tmp_path / "c.yaml").write_text(text.replace(
        "{path: Time, unit: s}", f'{{path: Time, unit: s, origin: "{ULB_START}"}}'))
    monkeypatch.chdir(tmp_path)
    summary = _replay(tmp_path, capsys)
    assert summary["bad_by_reason"] == {} and summary["events"] == 600, summary
    assert summary["first_event"] == ULB_START
    assert "2013-09-01" <= summary["last_event"] < "2013-09-03", summary
    timeline = [json.loads(ln) for ln in (tmp_path / "run" / "timeline.jsonl").open()]
    assert timeline and all(w["end"].startswith("2013-09-0") for w in timeline)


# -- the inference on its own ------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(dates=st.lists(st.datetimes(min_value=dt.datetime(1990, 1, 1),
                                   max_value=dt.datetime(2030, 12, 31)),
                      min_size=1, max_size=25),
       fmt=st.sampled_from(TIME_FORMATS))
def test_init_never_picks_a_format_that_reads_other_times(dates: list[dt.datetime],
                                                          fmt: str) -> None:
    texts = [d.strftime(fmt) for d in dates]
    right = from_format(np.array(texts, dtype=object), fmt)
    found = text_formats(texts)
    reads = [np.array_equal(from_format(np.array(texts, dtype=object), g), right)
             for g in found]
    assert any(reads), (texts[:3], fmt, found)  # the writer's format, or one that agrees
    if len(found) == 1:  # the one init would write
        assert reads == [True]


def test_time_reading_keeps_epoch_and_iso_units_and_says_nothing() -> None:
    assert time_reading("ts", [1.7e9, 1.7e9 + 1], "f").lines == ()
    r = time_reading("ts", ["2024-01-01T00:00:00Z"], "f")
    assert (r.unit, r.format, r.offsets) == ("iso", None, False)


def test_counts_from_start_wants_non_negative_numbers_below_any_epoch() -> None:
    assert counts_from_start([0.0, 86400.0]) and counts_from_start([86400, 10**8])
    assert not counts_from_start([True, False])
    assert not counts_from_start(["0", "1"]) and not counts_from_start([])
    assert not counts_from_start([0.0, float("nan"), 9.5e8])
