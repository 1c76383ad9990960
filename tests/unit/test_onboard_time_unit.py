"""PaySim's ``step`` counts hours from the start of its simulation (1 .. 743). ``init`` warned
that it grows like a clock and said ``--ignore step``, but not how to read it as the event
time; and ``--time-field step`` read it as seconds (``unit: s``), with no flag to say hours,
so its windows spanned seconds of 1970. The warning now names ``--time-field step
--time-unit h`` (the unit its name says), and ``--time-unit`` writes ``unit: h``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.cli import build_parser
from driftwatch.connectors.eventtime import SECONDS_IN
from driftwatch.onboard.times import COUNT_UNITS, counter_unit, time_reading

from ._cli import init_then_replay, run_cli

ORIGIN = "2016-09-01T00:00:00Z"
HOUR = 3600.0


def _paysim(tmp: Path, n: int = 600, counter: str = "step", epoch: bool = False) -> None:
    """A PaySim-shaped recording: ``counter`` (hours from the start) in the reference and
    the stream, the outcomes dated a day later on the same counter; ``epoch``: the stream
    has an epoch time ``ts`` too."""
    rng = np.random.default_rng(11)

    def frame(k: int, steps: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({counter: steps,
                             "type": rng.choice(["CASH_OUT", "PAYMENT", "TRANSFER"], k),
                             "amount": rng.lognormal(11, 1.6, k).round(2)})

    ref = frame(n, rng.integers(1, 744, n))
    ref["isFraud"] = (rng.random(n) < 0.1).astype(int)
    ref.to_csv(tmp / "ref.csv", index=False)
    live = frame(n, np.sort(rng.integers(1, 121, n)))
    live.insert(0, "txn_id", np.arange(n))
    if epoch:
        live.insert(1, "ts", 1_700_000_000 + np.arange(n) * 60)
    live["score"] = rng.random(n).round(5)
    live.to_csv(tmp / "live.csv", index=False)
    pd.DataFrame({"txn_id": live["txn_id"], counter: live[counter] + 24,
                  "isFraud": (rng.random(n) < 0.1).astype(int)}).to_csv(tmp / "out.csv",
                                                                        index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                    str(tmp / "live.csv"), "--outcomes", str(tmp / "out.csv"), "--model", "m",
                    "--connector-out", str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml"),
                    "--pane", "100", "--force", *extra], capsys)


def _event_times(tmp: Path) -> dict[str, dict[str, str]]:
    streams = yaml.safe_load((tmp / "c.yaml").read_text())["source"]["streams"]
    return {k: v["fields"]["event_time"] for k, v in streams.items()}


@given(st.sampled_from([("step", "h"), ("hours", "h"), ("hr", "h"), ("day", "d"),
                        ("days", "d"), ("minutes", "min"), ("seconds", "s"), ("dt", "s"),
                        ("ms", "ms")]),
       st.sampled_from(["{}", "elapsed_{}", "{}_since_start", "sim{W}", "{W}Count"]))
def test_a_counter_s_unit_is_read_off_the_words_of_its_name(word_unit: tuple[str, str],
                                                            shape: str) -> None:
    word, unit = word_unit
    name = shape.format(word, W=word.capitalize())
    assert counter_unit(name) == unit, name


@given(st.sampled_from(["Time", "tick", "min_balance", "amount", "hour_minutes"]))
def test_a_name_that_says_no_unit_or_two_guesses_none(name: str) -> None:
    assert counter_unit(name) is None


#: Seconds in one step of each count unit
_STEP = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, **SECONDS_IN}


@given(st.sampled_from(COUNT_UNITS),
       st.lists(st.integers(0, 10**6), min_size=1, max_size=30))
def test_time_unit_reads_a_count_from_a_start_in_that_unit(unit: str, steps: list[int]
                                                           ) -> None:
    values = np.cumsum(steps).tolist()
    r = time_reading("step", values, "live.csv", unit=unit)
    assert (r.unit, r.offsets, r.format) == (unit, True, None)
    warning = r.lines[0][1]
    assert f"--time-unit {unit}" in warning and f"unit: {unit}, origin:" in warning
    secs = values[0] * _STEP[unit]
    shown = pd.Timestamp(secs, unit="s", tz="UTC").isoformat()
    assert f"replay reads {values[0]!r} as {shown}" in warning, warning


def test_the_command_line_offers_the_count_units() -> None:
    init = build_parser()._subparsers._group_actions[0].choices["init"]  # type: ignore[union-attr]
    unit = next(a for a in init._actions if "--time-unit" in a.option_strings)
    assert tuple(unit.choices) == COUNT_UNITS


@pytest.mark.parametrize(("counter", "flags"), [
    ("step", "--time-field step --time-unit h (its name says hours"),
    ("elapsed_days", "--time-field elapsed_days --time-unit d (its name says days"),
    ("tick", "--time-field tick --time-unit UNIT, what one step of it is"),
])
def test_a_counter_in_a_file_without_times_gets_the_flags_that_read_it_as_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], counter: str, flags: str) -> None:
    _paysim(tmp_path, counter=counter)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: record order" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith(f"  warning: {counter} "))
    assert "never decrease" in line and f"--ignore {counter}" in line, line
    assert f"if it counts time from a start, window by it: pass {flags}" in line, line


def test_no_such_flags_where_the_stream_has_a_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _paysim(tmp_path, epoch=True)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    assert "event time: ts" in out, out
    line = next(ln for ln in out.splitlines() if ln.startswith("  warning: step "))
    assert "--time-field" not in line, line


def test_time_field_alone_says_the_unit_its_name_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _paysim(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--time-field", "step")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("  warning: step "))
    assert "unit: s, origin:" in line and "its name says hours: pass --time-unit h" in line
    assert _event_times(tmp_path)["predictions"] == {"path": "step", "unit": "s"}


def test_time_unit_h_writes_hours_and_paces_the_policy_in_hours(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _paysim(tmp_path)
    code, out, err = _init(tmp_path, capsys, "--time-field", "step", "--time-unit", "h")
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("  warning: step "))
    assert "count hours (--time-unit h) from a start" in line, line
    assert "replay reads 1 as 1970-01-01T01:00:00+00:00" in line, line
    assert 'event_time: {path: step, unit: h, origin: "YYYY-MM-DDTHH:MM:SSZ"}' in line, line
    assert _event_times(tmp_path)["predictions"] == {"path": "step", "unit": "h"}
    # 600 records over 120 hours: a window of 100 spans about 20 hours, not 20 seconds
    pace = next(ln for ln in out.splitlines() if ln.startswith("cooldowns:"))
    assert "a window of 100 events spans about 19h" in pace, pace


def test_a_replay_with_the_origin_added_has_dated_windows_hours_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _paysim(tmp_path)
    init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                     outcomes="out.csv",
                     init_flags=["--time-field", "step", "--time-unit", "h", "--pane", "100"])
    text = (tmp_path / "c.yaml").read_text()
    # the user adds the origin init asked for, to both streams' time (one clock: a
    # connector with it on one stream only is refused)
    (tmp_path / "c.yaml").write_text(text.replace(
        "{path: step, unit: h}", f'{{path: step, unit: h, origin: "{ORIGIN}"}}'))
    code, _, err = run_cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                            str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.csv"),
                            "--out", str(tmp_path / "dated")], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "dated" / "summary.json").read_text())
    first = pd.Timestamp(ORIGIN) + pd.Timedelta(hours=1)  # step 1
    assert summary["first_event"] == first.strftime("%Y-%m-%dT%H:%M:%SZ"), summary
    windows = [json.loads(ln) for ln in (tmp_path / "dated" / "timeline.jsonl").open()]
    spans = [(w["end_time"] - w["start_time"]) / HOUR for w in windows if w["n_events"]]
    assert len(spans) == 6 and all(10 <= s <= 30 for s in spans), spans


@pytest.mark.parametrize(("extra", "said"), [
    (["--time-unit", "h"], "--time-unit needs a time field"),
    (["--time-field", "step", "--time-unit", "h", "--time-format", "%Y"],
     "--time-unit h and --time-format '%Y'"),
    (["--time-field", "ts", "--time-unit", "ms"], "are epoch seconds, which ms would read"),
    (["--time-field", "type", "--time-unit", "h"], "is not written as numbers"),
])
def test_a_time_unit_that_cannot_act_is_refused_with_the_reason(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    _paysim(tmp_path, epoch="ts" in extra)
    code, _, err = _init(tmp_path, capsys, *extra)
    assert code == 2 and said in err, err
    assert "Traceback" not in err
