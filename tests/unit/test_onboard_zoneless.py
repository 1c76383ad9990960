"""``init``'s event-time line says when the sample's ISO-8601 times carry no zone: replay
reads ``2024-05-01T09:00:00`` as UTC, which is documented but was not said where the time
was chosen."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.onboard.times import time_reading, zoneless

from ._cli import run_cli


def _files(tmp: Path, times: list[str]) -> None:
    rng = np.random.default_rng(5)
    pd.DataFrame({"income": rng.normal(5e4, 1e4, 200).round(0),
                  "default": rng.choice([0, 1], 200)}).to_csv(tmp / "ref.csv", index=False)
    with (tmp / "live.jsonl").open("w") as f:
        for i, t in enumerate(times):
            f.write(json.dumps({"id": i, "ts": t, "income": 50_000 + i}) + "\n")


def _time_line(tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                              str(tmp / "live.jsonl"), "--model", "m", "--connector-out",
                              str(tmp / "c.yaml"), "--policy-out", str(tmp / "p.yaml")],
                             capsys)
    assert code == 0, err
    return next(ln for ln in out.splitlines() if ln.startswith("event time: "))


def test_zone_less_iso_times_are_said_to_be_read_as_utc(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, [f"2024-05-01T{h:02d}:00:00" for h in range(10)])
    line = _time_line(tmp_path, capsys)
    assert line.startswith("event time: ts ") and "reads as event time (iso)" in line, line
    assert ("its times carry no zone ('2024-05-01T00:00:00', '2024-05-01T01:00:00', "
            "'2024-05-01T02:00:00', ...): read as UTC") in line, line


def test_times_with_a_zone_say_nothing_of_utc(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, [f"2024-05-01T{h:02d}:00:00+02:00" for h in range(5)]
           + [f"2024-05-02T{h:02d}:00:00Z" for h in range(5)])
    line = _time_line(tmp_path, capsys)
    assert "no zone" not in line and "UTC" not in line, line


def test_a_mix_says_how_many_carry_no_zone() -> None:
    r = time_reading("ts", ["2024-05-01T09:00:00Z", "2024-05-01T10:00:00", None], "f")
    assert r.unit == "iso"
    assert r.note.startswith("; 1 of 2 of its times carry no zone ('2024-05-01T10:00:00')")


@pytest.mark.parametrize(("text", "bare"), [
    ("2024-05-01T09:00:00", True), ("2024-05-01", True), ("2024-05-01 09:00", True),
    ("2024-05-01T09:00:00Z", False), ("2024-05-01T09:00:00z", False),
    ("2024-05-01T09:00:00+02:00", False), ("2024-05-01T09:00:00-0500", False),
    ("2024-05-01T09:00:00.123+05", False), ("2024-05-01T09:00:00.123456", True),
])
def test_zoneless_reads_the_zone_after_the_time_of_day(text: str, bare: bool) -> None:
    assert zoneless([text]) == ([text] if bare else [])
