"""A replay that reads nothing useful says so in one line and exits non-zero."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch.cli import main

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      paths: ["*.jsonl"]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features: {x: {path: x}, flag: {path: flag}}
        score: score
"""
POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: t}
model: {name: t, reference: "%s"}
window: {kind: count, pane: 100}
signals:
  - detector: psi
    thresholds: {mild: 0.1}
actions: {mild: alert}
"""


@pytest.fixture
def setup(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    pd.DataFrame({"x": rng.normal(size=300), "flag": rng.choice([True, False], 300),
                  "score": rng.uniform(size=300)}).to_csv(tmp_path / "ref.csv", index=False)
    (tmp_path / "conn.yaml").write_text(CONNECTOR)
    (tmp_path / "pol.yaml").write_text(POLICY % (tmp_path / "ref.csv"))
    return tmp_path


def _replay(tmp: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(["replay", "--connector", str(tmp / "conn.yaml"), "--policy", str(tmp / "pol.yaml"),
               "--input", f"predictions={data}", "--out", str(tmp / "out"), "--quiet"])
    err = capsys.readouterr().err
    return rc, err


def test_empty_file_is_a_one_line_error(setup: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = setup / "empty.jsonl"
    data.write_bytes(b"")
    rc, err = _replay(setup, data, capsys)
    assert rc == 1
    assert err == f"error: no records in {data}: the input is empty\n"


def test_csv_saved_as_jsonl_is_a_one_line_error(
    setup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = setup / "pred.jsonl"
    data.write_text("id,ts,x,flag,score\na1,1700000000,0.5,true,0.2\na2,1700000001,1.5,false,0.3\n")
    rc, err = _replay(setup, data, capsys)
    assert rc == 1
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("error: every record was rejected (3 bad records: invalid_json 3); "
                          f"first: {data}:1: ")
    assert "(the file looks like CSV: name it .csv or set format: csv in the connector); " \
           f"all of them are in {setup / 'out' / 'dead_letter.jsonl'}\n" in err


def test_every_record_rejected_exits_non_zero_with_the_top_reasons(
    setup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = setup / "pred.jsonl"
    lines = [{"id": f"a{i}", "ts": 1.7e9 + i, "x": "high", "flag": True, "score": 0.5}
             for i in range(5)] + [{"id": "b", "ts": "soon", "x": 1.0, "score": 0.5}]
    data.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    rc, err = _replay(setup, data, capsys)
    assert rc == 1
    assert err == (
        "error: every record was rejected (6 bad records: wrong_type 5, bad_time 1); "
        f"first: {data}:1: feature 'x' (x): expected a number, found text 'high'; "
        f"all of them are in {setup / 'out' / 'dead_letter.jsonl'}\n"
    )


def test_boolean_flag_typed_numeric_in_the_reference_is_not_rejected(
    setup: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the reference infers the flag as categorical: JSON true/false match its levels
    data = setup / "pred.jsonl"
    lines = [{"id": f"a{i}", "ts": 1.7e9 + i, "x": 0.1 * i, "flag": i % 3 == 0, "score": 0.5}
             for i in range(200)]
    data.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in lines))
    rc, err = _replay(setup, data, capsys)
    assert rc == 0, err
    summary = orjson.loads((setup / "out" / "summary.json").read_bytes())
    assert summary["events"] == 200 and summary["bad_records"] == 0
    tl = [orjson.loads(x) for x in (setup / "out" / "timeline.jsonl").read_bytes().splitlines()]
    flag = tl[0]["features"]["flag"]
    assert flag["type"] == "categorical" and flag["unseen"] == 0
    assert set(flag["levels"]) == {"true", "false"}
