"""A blank CSV header name is read as pandas reads it, ``Unnamed: i``, by every reader.

Found by the onboarding fuzz (test_onboard_any_table): init reads samples with pandas,
which names a blank header ``Unnamed: 2``; the replay's CSV stream reader kept it blank, so
a field init found there (the only column of dates, taken as event time) was absent from
every record, and replay rejected all of them as missing_time.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from driftwatch.connectors.file import FileSource
from driftwatch.schema import FeatureSchema

from ._cli import init_then_replay
from ._csvconn import csv_connector


def test_the_stream_reads_a_blank_header_as_pandas_names_it(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text("id,ts,,cat\n1,1700000000,2.5,a\n2,1700000060,3.5,b\n")
    conn = csv_connector(tmp_path, "s.csv", fields=(
        "event_id: id", "event_time: {path: ts, unit: s}",
        "features: {x: {path: 'Unnamed: 2', type: numeric}, cat: {path: cat, "
        "type: categorical}}"))
    src = FileSource(conn, FeatureSchema(numeric=("x",), categorical=("cat",)),
                     batch_size=10, read_ahead=False)
    xs, bad = [], []
    while (polled := src.poll()) is not None:
        xs += [float(v) for b in polled.batches for v in b.numeric[:, 0]]
        bad += polled.bad
    src.close()
    assert xs == [2.5, 3.5] and bad == []


def test_init_and_replay_agree_on_a_blank_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    n = 80
    ref = ["income,label", *(f"{rng.normal():.3f},{int(rng.integers(0, 2))}"
                             for _ in range(n))]
    (tmp_path / "ref.csv").write_text("\n".join(ref) + "\n")
    # the only dates are under a blank name: init takes them as the event time
    rows = ["application_id,income,", *(f"{i},{rng.normal():.3f},2024-01-{1 + i % 28:02d}"
                                        for i in range(n))]
    (tmp_path / "live.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "out.jsonl").write_text("".join(json.dumps(
        {"application_id": i, "label": int(rng.integers(0, 2))}) + "\n" for i in range(n)))
    out, _ = init_then_replay(tmp_path, capsys, reference="ref.csv", sample="live.csv",
                              outcomes="out.jsonl")
    assert "event time: Unnamed: 2" in out, out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["events"] == n, summary
    assert summary["bad_by_reason"].get("missing_time", 0) == 0, summary
