"""The first records of a recording: nested paths for `features: infer`, absent fields."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from driftwatch.cli import main
from driftwatch.connectors.mapping import FieldPath
from driftwatch.connectors.probe import absent_share, infer_paths, sample_records
from driftwatch.errors import ConnectorError

RECS = [{"id": f"a{i}", "applicant": {"income": 1.0 * i, "age": 30}, "loan": {"purpose": "car"},
         "flag": True} for i in range(10)]


def test_infer_finds_nested_paths_by_their_last_key() -> None:
    got = infer_paths(["income", "age", "purpose", "flag", "nowhere"], RECS)
    assert {k: p.text for k, p in got.items()} == {
        "income": "applicant.income", "age": "applicant.age", "purpose": "loan.purpose",
        "flag": "flag", "nowhere": "nowhere"}


def test_infer_refuses_a_name_at_several_paths() -> None:
    recs = [{"applicant": {"income": 1}, "co_applicant": {"income": 2}}]
    with pytest.raises(ConnectorError) as info:
        infer_paths(["income"], recs)
    assert info.value.message == (
        "features: infer finds feature 'income' at several paths: applicant.income, "
        "co_applicant.income")
    assert info.value.hint == "map it explicitly: income: {path: applicant.income}"


def test_absent_is_not_null() -> None:
    recs = [{"a": {"b": None}}, {"a": {}}, {"a": 3}, {"a.b": 1}]
    assert absent_share(FieldPath.parse("a.b"), recs) == 0.5


def test_samples_jsonl_csv_and_nested_parquet(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in RECS)
                                       + b"not json\n")
    assert sample_records(tmp_path / "p.jsonl", "jsonl", 5) == RECS[:5]
    pd.DataFrame({"id": ["a", "b"], "x": [1.5, None]}).to_csv(tmp_path / "p.csv", index=False)
    assert sample_records(tmp_path / "p.csv", "csv") == [{"id": "a", "x": 1.5},
                                                         {"id": "b", "x": None}]
    pq.write_table(pa.Table.from_pylist(RECS), tmp_path / "p.parquet")
    got = sample_records(tmp_path / "p.parquet", "parquet", 3)
    assert got[2]["applicant"] == {"income": 2.0, "age": 30}


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
        features: FEATURES
        score: score
"""
POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: t}
model: {name: t, reference: "%s"}
window: {kind: count, pane: 200}
signals:
  - detector: psi
    thresholds: {mild: 0.1}
data_quality:
  signals:
    - detector: field_absent
      threshold: 0.5
actions: {mild: alert}
"""


def _write(tmp: Path, features: str) -> None:
    rng = np.random.default_rng(0)
    pd.DataFrame({"income": rng.lognormal(10, 1, 500), "purpose": rng.choice(["car", "home"], 500),
                  "score": rng.uniform(size=500)}).to_csv(tmp / "ref.csv", index=False)
    (tmp / "conn.yaml").write_text(CONNECTOR.replace("FEATURES", features))
    (tmp / "pol.yaml").write_text(POLICY % (tmp / "ref.csv"))
    with (tmp / "pred.jsonl").open("wb") as fh:
        for i in range(400):
            fh.write(orjson.dumps({"id": f"a{i}", "ts": 1.7e9 + i, "score": 0.5,
                                   "applicant": {"income": float(rng.lognormal(10, 1))},
                                   "loan": {"purpose": ["car", "home"][i % 2]}}) + b"\n")


def _run(tmp: Path, features: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    _write(tmp, features)
    rc = main(["replay", "--connector", str(tmp / "conn.yaml"), "--policy", str(tmp / "pol.yaml"),
               "--input", f"predictions={tmp / 'pred.jsonl'}", "--out", str(tmp / "out"),
               "--quiet", "--no-report"])
    return rc, capsys.readouterr().err


def _timeline(tmp: Path) -> list[dict]:
    return [orjson.loads(x) for x in (tmp / "out" / "timeline.jsonl").read_bytes().splitlines()]


def test_infer_reads_nested_features_in_a_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err = _run(tmp_path, "infer", capsys)
    assert rc == 0 and err == ""
    first = _timeline(tmp_path)[0]["features"]
    assert first["income"]["missing"] == 0 and first["purpose"]["missing"] == 0
    assert not any(s["signal"] == "field_absent" for s in _timeline(tmp_path)[0]["signals"])


def test_a_mistyped_path_warns_at_start_and_raises_field_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, err = _run(tmp_path, "{income: applicant.incme, purpose: loan.purpose}", capsys)
    assert rc == 0
    assert err == ("warning: 'income' (applicant.incme) is absent from 100% of the first 400 "
                   "predictions records: check its path\n")
    for rec in _timeline(tmp_path):
        (s,) = [s for s in rec["signals"] if s["signal"] == "field_absent"]
        assert (s["feature"], s["value"], s["details"]["path"]) == ("income", 1.0,
                                                                    "applicant.incme")
        assert any(r["signal"] == "field_absent" for r in rec["decision"]["reasons"])


def test_the_daemon_probes_its_file_source_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from driftwatch.clock import ManualClock
    from driftwatch.connectors.config import load_connector
    from driftwatch.replay import build_monitor
    from driftwatch.service.config import ModelConfig
    from driftwatch.service.model import open_source

    features = "{income: applicant.incme, purpose: loan.purpose}"
    _write(tmp_path, features)
    (tmp_path / "conn.yaml").write_text(CONNECTOR.replace("FEATURES", features).replace(
        '"*.jsonl"', f'"{tmp_path}/pred.jsonl"'))
    monitor = build_monitor(None, reference=tmp_path / "ref.csv")
    cfg = ModelConfig(None, tmp_path / "conn.yaml", tmp_path / "pol.yaml", None, 0.0, None)
    with caplog.at_level("WARNING"):
        source, _ = open_source(load_connector(tmp_path / "conn.yaml"), monitor, cfg,
                                tmp_path / "state", ManualClock())
    assert monitor.absent_fields == {"income": (400, 400, "applicant.incme")}
    assert "'income' (applicant.incme) is absent from 100% of the first 400" in caplog.text
    source.close()


def test_a_field_left_out_as_often_as_the_reference_misses_it_is_not_absent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # IEEE-CIS: D7 is missing in 93% of the training rows, and an exporter that drops
    # nulls leaves the key out as often; that is the feature's missing share, not a
    # mistyped path, and must not mark the feature absent for the whole run
    rng = np.random.default_rng(1)
    _write(tmp_path, "{income: applicant.income, purpose: loan.purpose}")
    ref = pd.read_csv(tmp_path / "ref.csv")
    ref.loc[rng.uniform(size=len(ref)) < 0.9, "income"] = np.nan
    ref.to_csv(tmp_path / "ref.csv", index=False)
    recs = [orjson.loads(x) for x in (tmp_path / "pred.jsonl").read_bytes().splitlines()]
    with (tmp_path / "pred.jsonl").open("wb") as fh:
        for i, r in enumerate(recs):
            if i % 10:
                del r["applicant"]["income"]
            fh.write(orjson.dumps(r) + b"\n")
    rc = main(["replay", "--connector", str(tmp_path / "conn.yaml"), "--policy",
               str(tmp_path / "pol.yaml"), "--input", f"predictions={tmp_path / 'pred.jsonl'}",
               "--out", str(tmp_path / "out"), "--quiet", "--no-report"])
    assert rc == 0
    assert "absent" not in capsys.readouterr().err
    assert not any(s["signal"] == "field_absent" for s in _timeline(tmp_path)[0]["signals"])


def test_a_csv_row_with_the_wrong_number_of_fields_is_skipped_in_the_sample(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p.csv"
    path.write_text("id,x\na,1.5\nb,2.5,extra\nc\nd,4.5\n")
    assert sample_records(path, "csv") == [{"id": "a", "x": 1.5}, {"id": "d", "x": 4.5}]


def test_a_ragged_csv_row_is_a_bad_record_not_a_replay_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The probe read the stream's first block with a parser that stops on a row with too
    few fields; replay ended in pyarrow's traceback before its reader could count it."""
    _write(tmp_path, "{income: income, purpose: purpose}")
    rows = [f"a{i},{1.7e9 + i},0.5,{1000.0 + i},{['car', 'home'][i % 2]}" for i in range(400)]
    rows.insert(5, "oops,1")
    (tmp_path / "pred.csv").write_text("id,ts,score,income,purpose\n" + "\n".join(rows) + "\n")
    (tmp_path / "conn.yaml").write_text(
        (tmp_path / "conn.yaml").read_text().replace('"*.jsonl"', '"*.csv"'))
    rc = main(["replay", "--connector", str(tmp_path / "conn.yaml"),
               "--policy", str(tmp_path / "pol.yaml"),
               "--input", f"predictions={tmp_path / 'pred.csv'}", "--out",
               str(tmp_path / "out"), "--quiet", "--no-report"])
    err = capsys.readouterr().err
    assert rc == 0, err
    summary = orjson.loads((tmp_path / "out" / "summary.json").read_bytes())
    assert (summary["events"], summary["bad_records"]) == (400, 1), summary
