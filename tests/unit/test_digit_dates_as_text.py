"""Dates written in digits (``%Y%m%d``, ``%Y%m``, ``%Y%m%d%H%M%S``) read alike as numbers
and as text, in every decoder path and in a stream mixing both. Two gaps were found: text
padded with spaces (``" 20240131"``, a fixed-width export) was a bad time although init
took it for a digit date, and init wrote ``unit: iso`` for a sample of text digits, which
refused the same dates sent as numbers."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.eventtime import event_times
from driftwatch.connectors.file import FileSource
from driftwatch.onboard.times import time_reading
from driftwatch.schema import FeatureSchema

from ._cli import run_cli
from ._csvconn import one_stream

SCHEMA = FeatureSchema(numeric=("x",))
_FORMATS = ("%Y%m%d", "%Y%m", "%Y%m%d%H%M%S")
_EPOCH = dt.datetime(1970, 1, 1)


def _connector(fmt: str, path: str = "p.jsonl", base: Path | None = None) -> Any:
    text = one_stream(path, ("event_id: id", f'event_time: {{path: ts, format: "{fmt}"}}',
                             "features: {x: {path: x, type: numeric}}"))
    return parse_connector(text, file="c.yaml", base_dir=base)


def _truncated(when: dt.datetime, fmt: str) -> float:
    """Epoch seconds of ``when`` as far as ``fmt`` writes it (the standard library's
    reading of its own text)."""
    return (dt.datetime.strptime(when.strftime(fmt), fmt) - _EPOCH).total_seconds()


def _shape(text: str, how: str) -> Any:
    """``text`` (digits) written as a number, a float, text, padded text or float text."""
    return {"int": int(text), "float": float(text), "text": text, "padded": f" {text} ",
            "float_text": f"{text}.0"}[how]


_SHAPES = ("int", "float", "text", "padded", "float_text")
_dates = st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2200, 12, 31))


@settings(max_examples=200, deadline=None)
@given(when=st.lists(_dates, min_size=1, max_size=30), fmt=st.sampled_from(_FORMATS),
       shapes=st.lists(st.sampled_from(_SHAPES), min_size=30, max_size=30))
def test_event_times_reads_every_shape_of_a_digit_date(
        when: list[dt.datetime], fmt: str, shapes: list[str]) -> None:
    texts = [w.strftime(fmt) for w in when]
    values = [_shape(t, s) for t, s in zip(texts, shapes, strict=False)]
    want = [_truncated(w, fmt) for w in when]
    secs, missing, bad = event_times(values, "auto", fmt=fmt)
    assert secs.tolist() == want and not missing.any() and not bad.any(), values
    # the same as an arrow column of text and, for the whole numbers, of integers
    assert event_times(pa.array([str(v) for v in values]), "auto", fmt=fmt)[0].tolist() == want
    ints = pa.array([int(t) for t in texts], pa.int64())
    assert event_times(ints, "auto", fmt=fmt)[0].tolist() == want


@settings(max_examples=40, deadline=None)
@given(when=st.lists(_dates, min_size=1, max_size=150), fmt=st.sampled_from(_FORMATS),
       shapes=st.lists(st.sampled_from(_SHAPES), min_size=150, max_size=150))
def test_every_json_decoder_path_reads_a_stream_mixing_numbers_and_text(
        when: list[dt.datetime], fmt: str, shapes: list[str]) -> None:
    values = [_shape(w.strftime(fmt), s) for w, s in zip(when, shapes, strict=False)]
    lines = b"\n".join(orjson.dumps({"id": f"r{i}", "ts": v, "x": 1.0})
                       for i, v in enumerate(values))
    want = [_truncated(w, fmt) for w in when]
    for block in (True, False):
        for scan in (True, False):
            dec = Decoder(_connector(fmt).stream("predictions"), SCHEMA, block_parse=block,
                          scan=scan)
            batch, bad = dec.decode_block(lines, source="p.jsonl")
            assert bad == [] and batch.event_time.tolist() == want, (block, scan)


@pytest.mark.parametrize("ext", [".jsonl", ".csv", ".parquet"])
@pytest.mark.parametrize("fmt", ["%Y%m%d", "%Y%m"])
def test_every_file_format_reads_digit_dates_as_numbers_and_as_text(
        tmp_path: Path, ext: str, fmt: str) -> None:
    when = [dt.datetime(2023, 12, 31), dt.datetime(2024, 1, 31), dt.datetime(2024, 2, 29),
            dt.datetime(1999, 7, 1)]
    texts = [w.strftime(fmt) for w in when]
    path = tmp_path / f"p{ext}"
    for shapes in (["int"] * 4, ["text"] * 4, ["int", "text", "padded", "float"]):
        values = [_shape(t, s) for t, s in zip(texts, shapes, strict=True)]
        if ext == ".csv":  # quoted: a CSV reader may type the column as text
            path.write_text("id,ts,x\n" + "".join(f'r{i},"{v}",1.0\n'
                                                  for i, v in enumerate(values)))
        elif ext == ".parquet":
            col = (pa.array(values) if shapes == ["int"] * 4
                   else pa.array([str(v) for v in values]))
            pq.write_table(pa.table({"id": [f"r{i}" for i in range(4)], "ts": col,
                                     "x": [1.0] * 4}), path)
        else:
            path.write_bytes(b"\n".join(orjson.dumps({"id": f"r{i}", "ts": v, "x": 1.0})
                                        for i, v in enumerate(values)) + b"\n")
        src = FileSource(_connector(fmt, path.name, tmp_path), SCHEMA, batch_size=3)
        secs: list[float] = []
        bad: list[Any] = []
        while (p := src.poll()) is not None:
            secs += [t for b in p.batches for t in b.event_time.tolist()]
            bad += p.bad
        assert bad == [] and secs == [_truncated(w, fmt) for w in when], shapes


@pytest.mark.parametrize("values", [["20240131", "20240201"], [" 20240131", "20240201 "],
                                    ["20240131", 20240201]])
def test_init_reads_digit_text_with_the_digit_format_not_as_iso(values: list[Any]) -> None:
    """ISO-8601's basic form reads '20240131' too, but unit: iso refuses 20240131."""
    r = time_reading("d", values, "s.jsonl")
    assert (r.unit, r.format) == ("auto", "%Y%m%d")


def test_init_on_text_digits_writes_a_format_that_replays_numbers_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    n = 300
    rng = np.random.default_rng(5)
    days = pd.date_range("2024-01-01", periods=n, freq="D").strftime("%Y%m%d")
    pd.DataFrame({"income": rng.gamma(3, 15000, n).round(0),
                  "target": rng.integers(0, 2, n)}).to_csv(tmp_path / "ref.csv", index=False)
    rows = [{"id": i, "application_date": d, "income": float(rng.gamma(3, 15000))}
            for i, d in enumerate(days)]
    (tmp_path / "sample.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for r in rows[1::2]:  # the live stream sends some of them as numbers
        r["application_date"] = int(r["application_date"])
    (tmp_path / "live.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pd.DataFrame({"id": range(n), "target": rng.integers(0, 2, n)}).to_csv(
        tmp_path / "out.csv", index=False)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["init", "--reference", "ref.csv", "--sample", "sample.jsonl",
                            "--outcomes", "out.csv", "--model", "m", "--connector-out",
                            "c.yaml", "--policy-out", "p.yaml"], capsys)
    assert code == 0, err
    fields = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]
    assert fields["event_time"] == {"path": "application_date", "format": "%Y%m%d"}
    code, _, err = run_cli(["replay", "--connector", "c.yaml", "--policy", "p.yaml", "--input",
                            "predictions=live.jsonl", "out.csv", "--out", "run", "--quiet",
                            "--no-report"],
                           capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["bad_by_reason"] == {} and summary["events"] == n, summary
    assert summary["first_event"] == "2024-01-01T00:00:00Z"
