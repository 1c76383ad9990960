"""``format: money`` reads a feature written as money text (the SBA loan table's
``DisbursementGross``, ``"$60,000.00 "`` with a trailing space) as the amount, on every
decoding path and in the reference table alike; ``init`` maps such a column as a numeric
feature, where it was a category with a level per amount (a new category in every record:
a data-quality fault per window, and an amount shift unseen)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

from ._cli import run_cli as _cli

SCHEMA = FeatureSchema(numeric=("gross",), categorical=(), levels=())
CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      paths: [live.jsonl]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features:
          gross: {path: loan.gross, format: money}
        score: score
"""
VALUES: list[Any] = ["$60,000.00 ", "-$1,234.50", "€ 12", "1500", 7, "$6,00.00", "$",
                     "12 apples", "", None, True]
# what each reads as: a number, missing (NaN), or a bad record (None)
READ = [60000.0, -1234.5, 12.0, 1500.0, 7.0, None, None, None, np.nan, np.nan, None]
BAD_AT = [5, 6, 7, 10]


def _decoder(**kw: bool) -> Decoder:
    return Decoder(parse_connector(CONNECTOR).stream("predictions"), SCHEMA, **kw)


def _records(values: list[Any]) -> list[dict[str, Any]]:
    return [{"id": f"e{i}", "ts": 1_700_000_000 + i, "loan": {"gross": v}, "score": 0.5}
            for i, v in enumerate(values)]


def _check(batch: Any, bad: list[Any], first: int = 0) -> None:
    kept = [v for v in READ if v is not None]
    np.testing.assert_array_equal(batch.numeric[:, 0], np.array(kept, dtype=float))
    assert [(b.reason, b.position - first) for b in bad] == [("wrong_type", i) for i in BAD_AT]
    assert bad[0].detail == ("feature 'gross' (loan.gross): expected a number or money text "
                             "like '$60,000.00', found text '$6,00.00'")


@pytest.mark.parametrize("kw", [{}, {"scan": False}, {"block_parse": False}])
def test_json_lines_read_money_text_as_amounts_on_every_path(kw: dict[str, bool]) -> None:
    warm = _records(["$10.00 "] * 80)
    block = b"".join(orjson.dumps(r) + b"\n" for r in warm + _records(VALUES))
    batch, bad = _decoder(**kw).decode_block(block, source="s")
    assert batch.numeric[:80, 0].tolist() == [10.0] * 80
    _check(batch.take(np.arange(80, len(batch))), bad, first=81)


def test_kafka_payloads_read_money_text_as_amounts() -> None:
    payloads = [orjson.dumps(r) for r in _records(VALUES)]
    batch, bad = _decoder().decode(payloads, source="t", positions=np.arange(len(payloads)))
    _check(batch, bad)


@pytest.mark.parametrize("lenient", [True, False])
def test_tables_read_money_text_as_amounts(lenient: bool) -> None:
    """A CSV gives every column as text (lenient), a Parquet file text or numbers."""
    texts = ["$60,000.00 ", "-$1,234.50", "€ 12", "1500", "$6,00.00", "$", "", None]
    n = len(texts)
    table = pa.table({"id": [f"e{i}" for i in range(n)], "ts": [1_700_000_000] * n,
                      "loan.gross": pa.array(texts, pa.string()), "score": [0.5] * n})
    batch, bad = _decoder().decode_table(table, source="f", positions=np.arange(n),
                                         lenient=lenient)
    np.testing.assert_array_equal(batch.numeric[:, 0],
                                  [60000.0, -1234.5, 12.0, 1500.0, np.nan, np.nan])
    assert [(b.reason, b.position) for b in bad] == [("wrong_type", 4), ("wrong_type", 5)]


def test_money_with_a_categorical_type_is_refused_where_written() -> None:
    text = CONNECTOR.replace("format: money}", "type: categorical, format: money}")
    with pytest.raises(ConnectorError) as exc:
        parse_connector(text, file="c.yaml")
    assert exc.value.line == 13 and "format: money reads a number" in exc.value.message


# -- init and replay: the SBA's loan table ----------------------------------------------------

N = 2000


def _money(a: np.ndarray) -> list[str]:
    return [f"${v:,.2f} " for v in a]


def _sba(tmp: Path, factor: float) -> None:
    """The SBA's shape: amounts as money text in the reference CSV and the CSV stream; the
    stream's second half lends ``factor`` times as much."""
    rng = np.random.default_rng(5)
    ref = pd.DataFrame({"Term": rng.integers(12, 300, N),
                        "DisbursementGross": _money(rng.lognormal(11, 1, N).round(-2)),
                        "MIS_Status": rng.choice(["P I F", "CHGOFF"], N, p=[0.8, 0.2])})
    ref.to_csv(tmp / "ref.csv", index=False)
    gross = rng.lognormal(11, 1, N).round(-2) * np.where(np.arange(N) >= N // 2, factor, 1.0)
    live = pd.DataFrame({"id": np.arange(N), "ts": 1_700_000_000 + 60 * np.arange(N),
                         "Term": rng.integers(12, 300, N), "DisbursementGross": _money(gross),
                         "score": rng.uniform(0, 1, N).round(4)})
    live.to_csv(tmp / "live.csv", index=False)


def _init(tmp: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = _cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                           str(tmp / "live.csv"), "--pane", "500", "--model", "m",
                           "--label-field", "MIS_Status", "--label-bad", "CHGOFF",
                           "--connector-out", str(tmp / "c.yaml"),
                           "--policy-out", str(tmp / "p.yaml")], capsys)
    assert code == 0, err
    return out


def _psi(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[list[float], dict[str, Any]]:
    code, _, err = _cli(["replay", "--connector", str(tmp / "c.yaml"), "--policy",
                         str(tmp / "p.yaml"), "--input", str(tmp / "live.csv"),
                         "--out", str(tmp / "run"), "--no-report", "-q"], capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (tmp / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    psi = [next(s["value"] for s in r["signals"]
                if s["signal"] == "psi" and s["feature"] == "DisbursementGross")
           for r in records]
    return psi, json.loads((tmp / "run" / "summary.json").read_text())


def test_init_maps_money_text_and_replay_sees_an_amount_shift(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sba(tmp_path, factor=3.0)
    out = _init(tmp_path, capsys)
    feats = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    assert feats["DisbursementGross"] == {"path": "DisbursementGross", "type": "numeric",
                                          "format": "money"}
    line = next(x for x in out.splitlines() if x.startswith("  DisbursementGross: numeric"))
    assert "format: money" in line, out
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {}
    assert max(psi[:2]) < 0.1 < min(psi[2:]), psi  # the shift, and only the shift


def test_unchanged_money_text_is_no_drift(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sba(tmp_path, factor=1.0)
    _init(tmp_path, capsys)
    psi, summary = _psi(tmp_path, capsys)
    assert summary["bad_by_reason"] == {} and max(psi) < 0.1, psi


def test_a_malformed_amount_in_the_reference_is_a_one_line_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _sba(tmp_path, factor=1.0)
    _init(tmp_path, capsys)
    ref = pd.read_csv(tmp_path / "ref.csv")
    ref.loc[3, "DisbursementGross"] = "$6,00.00"
    ref.to_csv(tmp_path / "ref.csv", index=False)
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.csv"),
                         "--out", str(tmp_path / "run"), "--no-report", "-q"], capsys)
    assert code != 0 and "Traceback" not in err
    assert ("reference column 'DisbursementGross' is read as money text (format: money in "
            "the connector) but holds '$6,00.00'") in err
