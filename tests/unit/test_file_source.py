"""Replaying files: every format, event-time merge across files, resume, dead letters."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled, Source
from driftwatch.connectors.config import Connector
from driftwatch.connectors.deadletter import DeadLetterWriter, read_dead_letters
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError, SourceError
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.testing.generator import (
    CreditStream,
    generate,
    outcome_records,
    prediction_records,
    write_jsonl,
)
from driftwatch.testing.scenarios import scenario_plan

FIELDS = ("ids", "event_time", "position", "numeric", "categorical", "score", "decision",
          "segment", "label", "exposure")  # fmt: skip


@pytest.fixture(scope="module")
def stream() -> CreditStream:
    return generate(scenario_plan("demo", n_events=1500, days=30), seed=11, delay_days=(2, 6))


def flat(rec: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in rec.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[prefix + k] = v
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    name = path.name
    if name.endswith((".jsonl", ".jsonl.gz")):
        write_jsonl(path, records, compress=name.endswith(".gz"))
    elif name.endswith((".csv", ".csv.gz")):
        rows = [flat(r) for r in records]
        cols = sorted({k for r in rows for k in r})
        table = pa.table({c: [r.get(c) for r in rows] for c in cols})
        out = pa.output_stream(str(path), compression="gzip" if name.endswith(".gz") else None)
        with out:
            pacsv.write_csv(table, out)
    else:
        pq.write_table(pa.Table.from_pylist(records), path, row_group_size=400)
    return path


def files(tmp: Path, s: CreditStream, ext: str = ".jsonl") -> Connector:
    write(tmp / f"predictions{ext}", list(prediction_records(s)))
    write(tmp / f"outcomes{ext}", list(outcome_records(s)))
    return credit_connector(f"predictions{ext}", f"outcomes{ext}", base_dir=tmp)


def drain(src: Source, max_records: int | None = None) -> list[Polled]:
    polls = []
    while (p := src.poll(max_records)) is not None:  # type: ignore[arg-type]
        polls.append(p)
    return polls


def by_stream(polls: list[Polled]) -> dict[str, Batch]:
    out: dict[str, list[Batch]] = {}
    for p in polls:
        for b in p.batches:
            out.setdefault(b.stream, []).append(b)
    return {k: Batch.concat(v) for k, v in out.items()}


def same(a: Batch, b: Batch) -> None:
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), f


@pytest.mark.parametrize("ext", [".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet"])
def test_every_format_gives_the_generated_rows(tmp_path: Path, stream: CreditStream,
                                               ext: str) -> None:  # fmt: skip
    src = FileSource(files(tmp_path, stream, ext), credit_schema(), batch_size=400)
    assert isinstance(src, Source)
    polls = drain(src)
    got = by_stream(polls)
    # progress counts the bytes on disk (compressed for gzip), all of them by the end
    assert sum(p.bytes_read for p in polls) == sum(f.stat().st_size for f in tmp_path.iterdir())
    pred, out = got["predictions"], got["outcomes"]
    assert pred.ids.tolist() == stream.ids.tolist()
    assert pred.event_time.tolist() == stream.ts.astype(float).tolist()
    assert pred.score.tolist() == stream.score.tolist()
    assert np.array_equal(pred.numeric[:, 0], stream.features["income"])
    assert np.array_equal(pred.numeric[:, 6], stream.features["utilization"], equal_nan=True)
    assert pred.categorical[:, 0].tolist() == stream.features["purpose"].tolist()
    first_row = 2 if ".csv" in ext else 1  # a CSV header is line 1
    assert pred.position[:3].tolist() == [first_row, first_row + 1, first_row + 2]
    assert out.ids.tolist() == stream.ids[stream.outcome_index].tolist()
    assert out.label.tolist() == stream.label.astype(float).tolist()
    assert src.positions == {f"predictions{ext}": len(stream) + first_row - 1,
                             f"outcomes{ext}": len(out) + first_row - 1}


def recording(path: Path, s: CreditStream) -> Path:
    msgs = [("credit.predictions", r["ts"], r) for r in prediction_records(s)]
    msgs += [("credit.outcomes", r["outcome_ts"], r) for r in outcome_records(s)]
    msgs.sort(key=lambda m: m[1])
    offsets: dict[str, int] = {}
    lines = []
    for topic, t, r in msgs:
        off = offsets[topic] = offsets.get(topic, -1) + 1
        lines.append(orjson.dumps({"topic": topic, "partition": 0, "offset": off,
                                   "timestamp": t * 1000, "key": r["application_id"],
                                   "value": orjson.dumps(r).decode()}))  # fmt: skip
    lines.append(orjson.dumps({"topic": "other", "partition": 0, "offset": 0, "timestamp": 1,
                               "key": None, "value": "{}"}))  # fmt: skip
    lines.append(b'{"topic": "credit.outcomes"}')
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_kafka_recording_routes_topics_to_streams(tmp_path: Path, stream: CreditStream) -> None:
    rec = recording(tmp_path / "rec.jsonl", stream)
    c = credit_connector("rec.jsonl", "rec.jsonl", base_dir=tmp_path,
                         topics=("credit.predictions", "credit.outcomes"))  # fmt: skip
    src = FileSource(c, credit_schema(), batch_size=500)
    polls = drain(src)
    got = by_stream(polls)
    assert got["predictions"].ids.tolist() == stream.ids.tolist()
    assert got["predictions"].position.tolist() == list(range(len(stream)))  # Kafka offsets
    assert got["outcomes"].label.tolist() == stream.label.astype(float).tolist()
    bad = [b for p in polls for b in p.bad]
    assert [(b.reason, b.position) for b in bad] == [("bad_envelope", len(rec.read_bytes()
                                                                        .splitlines()))]
    assert src.skipped_topics == {"other": 1}
    # the same file given on the command line binds itself by topic
    src2 = FileSource.from_paths(c, credit_schema(), [rec])
    same(by_stream(drain(src2))["outcomes"], got["outcomes"])


def test_two_files_merge_in_event_time_order(tmp_path: Path, stream: CreditStream) -> None:
    src = FileSource(files(tmp_path, stream), credit_schema(), batch_size=300)
    seq = [(b.stream, float(b.event_time[0])) for p in drain(src, 1) for b in p.batches]
    assert len(seq) == len(stream) + len(stream.outcome_index)
    keys = [(t, 0 if s == "predictions" else 1) for s, t in seq]
    assert keys == sorted(keys)  # by time; ties: predictions (first stream) first
    src = FileSource(files(tmp_path, stream), credit_schema(), batch_size=300)
    prev, merged = -np.inf, []
    for p in drain(src):
        times = np.concatenate([b.event_time for b in p.batches])
        assert times.min() >= prev
        prev = times.max()
        # Polled.order interleaves the poll's batches back into the merged sequence
        assert p.order is not None and len(p.order) == p.n_events
        at = [0] * len(p.batches)
        for k in p.order.tolist():
            b = p.batches[k]
            merged.append((b.stream, float(b.event_time[at[k]])))
            at[k] += 1
    assert merged == seq


def test_unsorted_file_keeps_its_own_order(tmp_path: Path) -> None:
    def r(i: str, t: int) -> dict[str, Any]:
        return {"application_id": i, "ts": t, "model": {"score": 0.1}}

    write(tmp_path / "p.jsonl", [r("p1", 5), r("p2", 1), r("p3", 6), r("p4", 5)])
    write(tmp_path / "o.jsonl", [{"application_id": i, "outcome_ts": t, "defaulted": 0}
                                 for i, t in [("o1", 2), ("o2", 5), ("o3", 7)]])  # fmt: skip
    c = credit_connector("p.jsonl", "o.jsonl", base_dir=tmp_path)
    for bs in (1, 2, 100):
        src = FileSource(c, credit_schema(), batch_size=bs)
        seq = [b.ids[0] for p in drain(src, 1) for b in p.batches]
        # p2 (late) rides behind p1; at equal time 5 predictions come before outcomes
        assert seq == ["o1", "p1", "p2", "o2", "p3", "p4", "o3"]


@pytest.mark.parametrize("ext", [".jsonl.gz", ".csv", ".parquet"])
def test_seek_resumes_with_exactly_the_rest(tmp_path: Path, stream: CreditStream,
                                            ext: str) -> None:  # fmt: skip
    c = files(tmp_path, stream, ext)
    whole = by_stream(drain(FileSource(c, credit_schema(), batch_size=256)))
    src = FileSource(c, credit_schema(), batch_size=256)
    head = [src.poll(333) for _ in range(3)]
    saved = head[-1].positions  # type: ignore[union-attr]
    src.close()
    resumed = FileSource(c, credit_schema(), batch_size=256)
    resumed.seek(saved)
    rest = by_stream(drain(resumed))
    first = by_stream([p for p in head if p is not None])
    for name in ("predictions", "outcomes"):
        same(Batch.concat([first[name], rest[name]]), whole[name])
    with pytest.raises(SourceError, match="does not read"):
        resumed.seek({"elsewhere.jsonl": 3})


def test_batch_size_does_not_change_the_result(tmp_path: Path, stream: CreditStream) -> None:
    c = files(tmp_path, stream)
    runs = [by_stream(drain(FileSource(c, credit_schema(), batch_size=bs))) for bs in
            (7, 128, 10_000)]  # fmt: skip
    for other in runs[1:]:
        for name in ("predictions", "outcomes"):
            same(runs[0][name], other[name])


def test_bad_lines_are_dead_lettered_with_their_line(tmp_path: Path, stream: CreditStream) -> None:
    lines = [orjson.dumps(r) for r in prediction_records(stream)]
    lines[4] = b"{not json"
    lines[900] = lines[900].replace(b'"ts":', b'"ts":"soon","x":')
    (tmp_path / "p.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    write(tmp_path / "o.jsonl", list(outcome_records(stream)))
    dl = DeadLetterWriter(tmp_path / "state" / "dead.jsonl")
    c = credit_connector("p.jsonl", "o.jsonl", base_dir=tmp_path)
    polls = drain(FileSource(c, credit_schema(), batch_size=200, dead_letter=dl))
    assert sum(len(b) for p in polls for b in p.batches) == len(lines) - 2 + len(
        stream.outcome_index)
    letters = read_dead_letters(dl.path)
    assert [(d["reason"], d["position"], d["source"], d["stream"]) for d in letters] == [
        ("invalid_json", 5, "p.jsonl", "predictions"),
        ("bad_time", 901, "p.jsonl", "predictions"),
    ]
    assert letters[0]["raw"] == "{not json" and dl.counts == {"invalid_json": 1, "bad_time": 1}


def test_csv_rows_with_the_wrong_field_count(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text(
        "application_id,ts,model.score\na,1,0.1\nb,2\nc,3,0.2\nd,4,0.3,9\ne,5,0.4\n")
    (tmp_path / "o.csv").write_text("application_id,outcome_ts,defaulted\n")
    c = credit_connector("p.csv", "o.csv", base_dir=tmp_path)
    polls = drain(FileSource(c, credit_schema(), batch_size=2))
    got = by_stream(polls)["predictions"]
    assert got.ids.tolist() == ["a", "c", "e"] and got.position.tolist() == [2, 4, 6]
    assert [(b.reason, b.position) for p in polls for b in p.bad] == [
        ("invalid_csv", 3), ("invalid_csv", 5)]


def test_inputs_bind_to_streams(tmp_path: Path, stream: CreditStream) -> None:
    c = files(tmp_path, stream)
    other = write(tmp_path / "elsewhere.jsonl", list(outcome_records(stream)))
    src = FileSource.from_paths(c, credit_schema(), [tmp_path / "predictions.jsonl",
                                                     f"outcomes={other}"])  # fmt: skip
    assert [(i.key, i.streams) for i in src.inputs] == [
        ("predictions.jsonl", ("predictions",)), ("elsewhere.jsonl", ("outcomes",))]
    with pytest.raises(SourceError, match="matches no stream"):
        FileSource.from_paths(c, credit_schema(), [other])
    with pytest.raises(SourceError, match="no stream named 'labels'"):
        FileSource.from_paths(c, credit_schema(), [f"labels={other}"])


def test_unreadable_sources_fail_clearly(tmp_path: Path, stream: CreditStream) -> None:
    c = credit_connector("missing-*.jsonl", "o.jsonl", base_dir=tmp_path)
    with pytest.raises(ConnectorError, match="no file matches this path") as info:
        FileSource(c, credit_schema())
    assert info.value.line is not None
    c = files(tmp_path, stream, ".jsonl.gz")
    data = (tmp_path / "predictions.jsonl.gz").read_bytes()
    (tmp_path / "predictions.jsonl.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match=r"predictions\.jsonl\.gz"):
        drain(FileSource(c, credit_schema()))
    with gzip.open(tmp_path / "x.jsonl.gz", "wb") as f:
        f.write(b"")
    assert drain(FileSource.from_paths(c, credit_schema(), [f"outcomes={tmp_path}/x.jsonl.gz"])
                 ) == []
