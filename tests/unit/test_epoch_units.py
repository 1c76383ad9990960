"""Epoch times counted in microseconds (Debezium's ``ts_us``, Java's ``Instant``) and
nanoseconds (Go's ``UnixNano``): ``unit: us`` / ``ns``, read by ``unit: auto`` too, and
found by ``init``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.eventtime import from_numbers
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

from ._cli import run_cli

_PER = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}


@settings(max_examples=200, deadline=None)
@given(st.integers(946_684_800, 4_102_444_800), st.integers(0, 999_999_999),
       st.sampled_from(list(_PER)))
def test_auto_reads_each_count_in_its_unit(secs: int, frac_ns: int, unit: str) -> None:
    # an instant between 2000 and 2100, written as a count of `unit`
    count = secs * _PER[unit] + frac_ns * _PER[unit] // 10**9
    want = count / _PER[unit]
    got_auto = float(from_numbers(np.array([float(count)]), "auto")[0])
    got_unit = float(from_numbers(np.array([float(count)]), unit)[0])
    assert got_unit == pytest.approx(want, abs=1e-6)
    assert got_auto == got_unit


def _decoder(unit: str) -> Decoder:
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\n"
            "source:\n  kind: file\n  streams:\n    predictions:\n      fields:\n"
            f"        event_id: id\n        event_time: {{path: t, unit: {unit}}}\n"
            "        features: {x: {path: x, type: numeric}}\n")
    schema = FeatureSchema(numeric=("x",), categorical=(), levels=())
    return Decoder(parse_connector(text, file="t.yaml").stream("predictions"), schema)


@pytest.mark.parametrize("unit", ["us", "ns", "auto"])
def test_decoding_counts_of_micro_and_nanoseconds(unit: str) -> None:
    counts = [1_704_067_200_123_456, 1_704_067_200_123_456_789]  # us, then ns
    if unit != "auto":
        counts = [counts[0 if unit == "us" else 1]] * 2
    block = b"".join(json.dumps({"id": f"e{i}", "t": c, "x": 1.0}).encode() + b"\n"
                     for i, c in enumerate(counts))
    batch, bad = _decoder(unit).decode_block(block, source="s")
    assert not bad
    assert batch.event_time.tolist() == pytest.approx([1_704_067_200.123456] * 2, abs=1e-6)


def test_a_bad_unit_is_refused_with_its_place() -> None:
    with pytest.raises(ConnectorError, match=r"t.yaml:10:37: expected one of 'auto', 's', "
                       r"'ms', 'us', 'ns', 'min', 'h', 'd', 'iso', found 'xs'"):
        _decoder("xs")


@pytest.mark.parametrize("unit", ["us", "ns"])
def test_init_finds_a_time_in_micro_or_nanoseconds(
        unit: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(1)
    pd.DataFrame({"x": rng.normal(size=500), "score": rng.uniform(size=500),
                  "label": (rng.random(500) < 0.2).astype(int)}).to_parquet(tmp_path / "r.pq")
    with open(tmp_path / "live.jsonl", "w") as f, open(tmp_path / "out.jsonl", "w") as g:
        for i in range(200):
            t = (1_700_000_000 + 60 * i) * _PER[unit] + 789
            f.write(json.dumps({"id": f"a{i}", "event_ts": t, "x": 0.1, "score": 0.3}) + "\n")
            g.write(json.dumps({"id": f"a{i}", "event_ts": t + 9, "label": i % 2}) + "\n")
    code, out, err = run_cli(
        ["init", "--reference", str(tmp_path / "r.pq"), "--sample", str(tmp_path / "live.jsonl"),
         "--outcomes", str(tmp_path / "out.jsonl"), "--model", "m", "--connector-out",
         str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert f"event time: event_ts               reads as event time ({unit})" in out, out
    streams = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"]
    assert streams["predictions"]["fields"]["event_time"] == {"path": "event_ts", "unit": unit}
