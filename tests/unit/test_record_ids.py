"""Tables without an id (``event_id: {source: order}``): UCI's German credit and many
teaching tables have neither an id nor a time column. ``init`` refused them ('add a unique
id ... or pass --id-field', which cannot help); a record's id is now its number in its
file, from where it stands (never a count of the good records before it), so a label in
the scored file joins its own record, and what cannot work is refused at its line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import load_connector, parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.file import FileSource
from driftwatch.connectors.readers import FileReader
from driftwatch.errors import ConnectorError
from driftwatch.replay.timeline import read_timeline
from driftwatch.schema import FeatureSchema

from ._cli import run_cli

COLS = ["checking_status", "duration", "credit_history", "credit_amount", "age", "credit_risk"]


def _german(n: int, seed: int) -> pd.DataFrame:
    """Rows shaped like UCI's German credit: codes, numbers, the label 1 good / 2 bad; no
    id, no time."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "checking_status": rng.choice(["A11", "A12", "A13", "A14"], n, p=[.27, .27, .06, .4]),
        "duration": rng.integers(4, 48, n),
        "credit_history": rng.choice(["A30", "A31", "A32", "A33", "A34"], n),
        "credit_amount": rng.integers(250, 9000, n),
        "age": rng.integers(19, 75, n),
        "credit_risk": rng.choice([1, 2], n, p=[.7, .3]),
    })


def _files(tmp: Path, headerless: bool) -> str:
    """train.csv and the scored file (its label inline, its second half drifted: longer
    loans, every account overdrawn); the scored file's name."""
    _german(3000, 1).to_csv(tmp / "train.csv", index=False)
    scored = _german(4000, 2)
    late = np.arange(len(scored)) >= len(scored) // 2
    scored.loc[late, "duration"] *= 2
    scored.loc[late, "checking_status"] = "A11"
    if headerless:  # german.data: space-separated, no header line
        scored.to_csv(tmp / "scored.data", index=False, header=False, sep=" ")
        return "scored.data"
    scored.to_csv(tmp / "scored.csv", index=False)
    return "scored.csv"


@pytest.mark.parametrize("headerless", [False, True])
def test_a_german_table_without_id_or_time_runs_init_check_and_replay(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        headerless: bool) -> None:
    monkeypatch.chdir(tmp_path)  # the policy names train.csv as init was given it
    scored = _files(tmp_path, headerless)
    names = ["--names", ",".join(COLS)] if headerless else []
    code, out, err = run_cli(["init", "--reference", "train.csv", "--sample", scored,
                              *names, "--label-field", "credit_risk", "--label-bad", "2",
                              "--model", "g", "--connector-out", "c.yaml", "--policy-out",
                              "p.yaml"], capsys)
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("id:"))
    assert "record order (source: order)" in line and scored in line
    assert "label in the predictions: credit_risk" in out
    pred = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"]["predictions"]
    assert pred["fields"]["event_id"] == {"source": "order"}
    code, _, err = run_cli(["policy", "check", "--connector", "c.yaml", "p.yaml"], capsys)
    assert code == 0, err
    for batch in (100, 1000, 10_000):
        code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml",
                                "-i", scored, "--out", f"o{batch}", "--batch-size",
                                str(batch), "--quiet", "--no-report"], capsys)
        assert code == 0, err
    summary = json.loads((tmp_path / "o1000" / "summary.json").read_text())
    assert summary["events"] == 4000 and summary["labels"]["joined"] == 4000
    assert summary["labels"]["duplicate_predictions"] == 0
    recs = read_timeline(tmp_path / "o1000" / "timeline.jsonl")
    assert [r["n_labelled"] for r in recs] == [1000] * 4
    # the drift is in records 2001 to 4000: found there, and not before
    assert [r["tier"] for r in recs[:2]] == ["none"] * 2
    drifted = [s["value"] for r in recs[2:] for s in r["signals"]
               if s["signal"] == "psi" and s["feature"] == "checking_status"]
    assert len(drifted) == 2 and min(drifted) > 0.5
    assert recs[-1]["tier"] != "none"
    for batch in (100, 10_000):
        assert (tmp_path / f"o{batch}" / "timeline.jsonl").read_bytes() == \
            (tmp_path / "o1000" / "timeline.jsonl").read_bytes(), batch


def test_a_table_with_times_still_needs_an_id(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # read in time order (a time field), a record's number is no id: refused as before
    _german(300, 1).to_csv(tmp_path / "train.csv", index=False)
    scored = _german(300, 2)
    scored.insert(0, "scored_on", pd.date_range("2024-01-01", periods=300, freq="h")
                  .strftime("%Y-%m-%dT%H:%M:%SZ"))
    scored.to_csv(tmp_path / "scored.csv", index=False)
    code, _, err = run_cli(["init", "--reference", str(tmp_path / "train.csv"), "--sample",
                            str(tmp_path / "scored.csv"), "--label-field", "credit_risk",
                            "--label-bad", "2", "--connector-out", str(tmp_path / "c.yaml"),
                            "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 2 and "cannot find the id field" in err and "Traceback" not in err


_CONNECTOR = """apiVersion: driftwatch/v1
kind: Connector
metadata: {name: c}
source:
  kind: KIND
  streams:
    predictions:
      PLACE
      fields:
        event_id: ID
        event_time: TIME
        features: infer
"""


def _conn(kind: str = "file", time: str = "{source: order}", id_: str = "{source: order}",
          extra: str = "") -> str:
    place = "topic: p" if kind == "kafka" else "paths: [p.csv]"
    text = (_CONNECTOR.replace("KIND", kind).replace("PLACE", place).replace("TIME", time)
            .replace("ID", id_)) + extra
    if kind == "kafka":
        text = text.replace("  kind: kafka\n", "  kind: kafka\n  connection: "
                            "{bootstrap_servers: [localhost:9092], group_id: g}\n")
    return text


def test_record_ids_are_refused_where_a_number_is_no_id(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_connector(_conn()).streams[0].event_id is None
    with pytest.raises(ConnectorError) as exc:  # a Kafka message has no place in a file
        parse_connector(_conn(kind="kafka", time="{source: kafka_timestamp}"), file="c.yaml")
    assert "c.yaml:11:28:" in str(exc.value)  # at order, below the connection line
    assert "expected kind: file, found kind 'kafka'" in str(exc.value)
    with pytest.raises(ConnectorError) as exc:  # read in time order
        parse_connector(_conn(time="ts"), file="c.yaml")
    assert "c.yaml:10:28:" in str(exc.value)
    assert "expected event_time: {source: order}, found event_time path 'ts'" in str(exc.value)
    with pytest.raises(ConnectorError) as exc:
        parse_connector(_conn(id_="{source: order, path: id}"), file="c.yaml")
    assert "c.yaml:10:19:" in str(exc.value) and "not both" in str(exc.value)
    outcomes = ("    outcomes:\n      paths: [o.csv]\n      fields:\n"
                "        event_id: {source: order}\n        event_time: {source: arrival}\n"
                "        label: y\n")
    # numbered outcomes pair with numbered predictions row by row (test_row_pairing.py)
    assert parse_connector(_conn(extra=outcomes)).stream("outcomes").event_id is None
    # two files would number their records alike
    for name in ("p.csv", "q.csv"):
        (tmp_path / name).write_text("x\n1\n")
    (tmp_path / "c.yaml").write_text(_conn().replace("[p.csv]", "['*.csv']"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConnectorError) as exc:
        FileSource(load_connector(tmp_path / "c.yaml"), FeatureSchema(numeric=("x",)))
    assert "expected one file, found 2 (p.csv, q.csv)" in str(exc.value)


SCHEMA = FeatureSchema(numeric=("x",), categorical=(), levels=())


def _ids(path: Path, batch_size: int, header: bool) -> list[str]:
    text = _conn()
    if not header:
        text = text.replace("      paths: [p.csv]\n", "      paths: [p.csv]\n"
                            "      csv: {names: [x]}\n")
    mapping = parse_connector(text).streams[0]
    reader = FileReader(path, "p.csv", "csv", [(0, Decoder(mapping, SCHEMA))],
                        batch_size=batch_size, names=mapping.names)
    got: list[str] = []
    while (chunk := reader.next_chunk()) is not None:
        for batch, _ in chunk.parts.values():
            got += [str(i) for i in batch.ids.tolist()]
        if reader.exhausted:
            break
    reader.close()
    return got


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(good=st.integers(1, 60), bad=st.lists(st.integers(0, 60), max_size=8),
       batch=st.integers(1, 25), header=st.booleans())
def test_record_ids_are_positions_unique_and_unmoved_by_bad_lines(
        tmp_path_factory: pytest.TempPathFactory, good: int, bad: list[int], batch: int,
        header: bool) -> None:
    # a bad line (a text where x is a number, or a row of two fields) before record k
    # takes a number itself, and leaves record k its number in the file
    rows: list[str] = [str(v) for v in range(good)]
    for k, at in enumerate(sorted(bad, reverse=True)):
        rows.insert(min(at, len(rows)), "oops" if k % 2 else "1,2")
    want = [str(i) for i, r in enumerate(rows, 1) if r.isdigit()]
    path = tmp_path_factory.mktemp("ids") / "p.csv"
    path.write_text(("x\n" if header else "") + "".join(r + "\n" for r in rows))
    got = _ids(path, batch, header)
    assert got == want
    assert len(set(got)) == len(got)
