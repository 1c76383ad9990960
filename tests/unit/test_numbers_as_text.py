"""``numbers_as_text: true`` reads numbers a producer writes as JSON text (``"52000"``) as
numbers, on every decoding path; without it they stay wrong_type, as before; ``init``
writes it when the sample's text reads as numbers for a numeric reference column."""

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
from driftwatch.schema import FeatureSchema

from ._cli import run_cli

SCHEMA = FeatureSchema(numeric=("income",), categorical=(), levels=())


def _decoder(flag: bool | None, **kw: bool) -> Decoder:
    extra = "" if flag is None else f"      numbers_as_text: {str(flag).lower()}\n"
    text = ("apiVersion: driftwatch/v1\nkind: Connector\nmetadata: {name: t}\n"
            "source:\n  kind: file\n  streams:\n    predictions:\n" + extra +
            "      fields:\n        event_id: id\n        event_time: {path: ts, unit: s}\n"
            "        features: {income: {path: a.income, type: numeric}}\n"
            "        score: p\n")
    return Decoder(parse_connector(text, file="t.yaml").stream("predictions"), SCHEMA, **kw)


def _lines(values: list[object]) -> bytes:
    return b"".join(json.dumps({"id": f"e{i}", "ts": 1.7e9 + i, "a": {"income": v},
                                "p": "0.25"}).encode() + b"\n"
                    for i, v in enumerate(values))


@pytest.mark.parametrize("kw", [{}, {"scan": False}, {"block_parse": False}])
def test_text_numbers_read_as_numbers_on_every_path(kw: dict[str, bool]) -> None:
    block = _lines(["52000", "1.5e3", 7, None, " 12 ", "n/a"])
    batch, bad = _decoder(True, **kw).decode_block(block, source="s")
    assert batch.numeric[:, 0].tolist()[:3] == [52000.0, 1500.0, 7.0]
    assert np.isnan(batch.numeric[3, 0]) and batch.numeric[4, 0] == 12.0
    assert batch.score.tolist() == [0.25] * 5
    assert [(b.reason, b.position) for b in bad] == [("wrong_type", 6)]


@pytest.mark.parametrize("flag", [None, False])
def test_without_it_text_is_wrong_type(flag: bool | None) -> None:
    batch, bad = _decoder(flag).decode_block(_lines(["52000", 3]), source="s")
    assert len(batch) == 0 and {b.reason for b in bad} == {"wrong_type"}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                max_size=20))
def test_a_number_as_text_reads_as_the_number(values: list[float]) -> None:
    text, plain = (_decoder(True).decode_block(_lines(v), source="s")[0]
                   for v in ([repr(x) for x in values], values))
    assert text.numeric[:, 0].tolist() == plain.numeric[:, 0].tolist() == values


def _files(tmp: Path, income: list[str]) -> None:
    rng = np.random.default_rng(0)
    n = len(income)
    pd.DataFrame({"income": rng.lognormal(10, 0.5, n).round(0), "score": rng.uniform(0, 1, n),
                  "label": (rng.random(n) < 0.2).astype(int)}).to_parquet(tmp / "ref.parquet")
    with open(tmp / "live.jsonl", "w") as f, open(tmp / "out.jsonl", "w") as g:
        for i, v in enumerate(income):
            f.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i, "income": v,
                                "score": 0.5}) + "\n")
            g.write(json.dumps({"id": f"a{i}", "ts": 1.7e9 + 60 * i + 9, "label": i % 2}) + "\n")


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_cli(["init", "--reference", str(tmp / "ref.parquet"), "--sample",
                    str(tmp / "live.jsonl"), "--outcomes", str(tmp / "out.jsonl"), "--model",
                    "m", "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                    str(tmp / "p.yaml")], capsys)


def test_init_writes_it_for_a_sample_of_numbers_as_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, [str(40000 + (7919 * i) % 5000) for i in range(300)])
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert stream["numbers_as_text"] is True, out
    assert "income: numbers as text" in out and "warning: income" not in out, out
    code, out, err = run_cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                              str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.jsonl"),
                              str(tmp_path / "out.jsonl"), "--out", str(tmp_path / "run")],
                             capsys)
    assert code == 0 and "300 events, 300 outcomes, 0 bad records" in out, (out, err)


def test_init_warns_of_text_that_is_no_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _files(tmp_path, [str(40000 + (7919 * i) % 5000) if i % 3 else "unknown" for i in range(300)])
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    stream = yaml.safe_load((tmp_path / "c.yaml").read_text())["source"]["streams"][
        "predictions"]
    assert "numbers_as_text" not in stream
    assert "warning: income" in out and "'unknown'" in out and "wrong_type" in out, out
