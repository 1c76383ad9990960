"""``format: percent`` and ``format: money`` read a numeric feature written as text
(Lending Club's ``int_rate`` ``"13.56%"``; the SBA's ``DisbursementGross``
``"$60,000.00 "``) as its number on every decoding path: JSON blocks (scanner, pyarrow,
orjson), Kafka payloads and tables (CSV text, Parquet text or numbers); text that is no
such number is a ``wrong_type`` dead letter naming what was expected."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pytest

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema

__all__ = ["connector_text"]


def connector_text(fmt: str, feature: str, path: str) -> str:
    """A file connector whose one feature ``feature`` is read at ``path`` with ``fmt``."""
    return f"""\
apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: t}}
source:
  kind: file
  streams:
    predictions:
      paths: [live.jsonl]
      fields:
        event_id: id
        event_time: {{path: ts, unit: s}}
        features:
          {feature}: {{path: {path}, format: {fmt}}}
        score: score
"""


# per format: the values sent, what each reads as (a number, NaN for missing, None for a
# dead letter), the first bad value's detail, and a table's texts with what they read as
CASES: dict[str, dict[str, Any]] = {
    "percent": {
        "feature": "int_rate", "warm": "10%",
        "values": ["13.56%", " 7 % ", 21, "21.5", "abc%", "%", "", None, True, "13,56%",
                   "-0,5 %", "21,5", "1,234%", "1,234", "1,2,3%", "1.234,5%"],
        "read": [13.56, 7.0, 21.0, 21.5, None, None, np.nan, np.nan, None, 13.56, -0.5, 21.5,
                 None, None, None, None],
        "detail": ("feature 'int_rate' (loan.int_rate): expected a number or percent text "
                   "like '13.56%', found text 'abc%'"),
        "texts": ["13.56%", " 7 % ", "21.5", "abc%", "%", "", None, "13,56%", "0,1234%",
                  "1,234%"],
        "texts_read": [13.56, 7.0, 21.5, None, None, np.nan, np.nan, 13.56, 0.1234, None],
    },
    "money": {
        "feature": "gross", "warm": "$10.00 ",
        "values": ["$60,000.00 ", "-$1,234.50", "€ 12", "1500", 7, "$6,00.00", "$",
                   "12 apples", "", None, True, "($1,234.50)", " (60,000) ", "$(7)",
                   "(-$5)", "($5", "()"],
        "read": [60000.0, -1234.5, 12.0, 1500.0, 7.0, None, None, None, np.nan, np.nan, None,
                 -1234.5, -60000.0, -7.0, None, None, None],
        "detail": ("feature 'gross' (loan.gross): expected a number or money text like "
                   "'$60,000.00', found text '$6,00.00'"),
        "texts": ["$60,000.00 ", "-$1,234.50", "€ 12", "1500", "$6,00.00", "$", "", None,
                  "($1,234.50)", "(60,000)", "$(7)", "(-$5)", "$5)"],
        "texts_read": [60000.0, -1234.5, 12.0, 1500.0, None, None, np.nan, np.nan, -1234.5,
                       -60000.0, -7.0, None, None],
    },
}


def _decoder(fmt: str, **kw: bool) -> Decoder:
    feat = CASES[fmt]["feature"]
    spec = parse_connector(connector_text(fmt, feat, f"loan.{feat}")).stream("predictions")
    return Decoder(spec, FeatureSchema(numeric=(feat,), categorical=(), levels=()), **kw)


def _records(fmt: str, values: list[Any]) -> list[dict[str, Any]]:
    feat = CASES[fmt]["feature"]
    return [{"id": f"e{i}", "ts": 1_700_000_000 + i, "loan": {feat: v}, "score": 0.5}
            for i, v in enumerate(values)]


def _check(fmt: str, batch: Any, bad: list[Any], first: int = 0) -> None:
    """``first``: the position of the first value."""
    read = CASES[fmt]["read"]
    np.testing.assert_array_equal(batch.numeric[:, 0],
                                  np.array([v for v in read if v is not None], dtype=float))
    assert [(b.reason, b.position - first) for b in bad] == [
        ("wrong_type", i) for i, v in enumerate(read) if v is None]
    assert bad[0].detail == CASES[fmt]["detail"]


@pytest.mark.parametrize("fmt", CASES)
@pytest.mark.parametrize("kw", [{}, {"scan": False}, {"block_parse": False}])
def test_json_lines_read_the_text_as_numbers_on_every_path(fmt: str,
                                                           kw: dict[str, bool]) -> None:
    # enough clean lines first that the block parsers (not only orjson) take the rest
    warm = _records(fmt, [CASES[fmt]["warm"]] * 80)
    block = b"".join(orjson.dumps(r) + b"\n" for r in warm + _records(fmt, CASES[fmt]["values"]))
    batch, bad = _decoder(fmt, **kw).decode_block(block, source="s")
    assert batch.numeric[:80, 0].tolist() == [10.0] * 80
    _check(fmt, batch.take(np.arange(80, len(batch))), bad, first=81)  # lines count from 1


@pytest.mark.parametrize("fmt", CASES)
def test_kafka_payloads_read_the_text_as_numbers(fmt: str) -> None:
    payloads = [orjson.dumps(r) for r in _records(fmt, CASES[fmt]["values"])]
    batch, bad = _decoder(fmt).decode(payloads, source="t", positions=np.arange(len(payloads)))
    _check(fmt, batch, bad)


@pytest.mark.parametrize("fmt", CASES)
@pytest.mark.parametrize("lenient", [True, False])
def test_tables_read_the_text_as_numbers(fmt: str, lenient: bool) -> None:
    """A CSV gives every column as text (lenient), a Parquet file text or numbers."""
    case = CASES[fmt]
    texts, read = case["texts"], case["texts_read"]
    n, col = len(texts), f"loan.{case['feature']}"
    table = pa.table({"id": [f"e{i}" for i in range(n)], "ts": [1_700_000_000] * n,
                      col: pa.array(texts, pa.string()), "score": [0.5] * n})
    batch, bad = _decoder(fmt).decode_table(table, source="f", positions=np.arange(n),
                                            lenient=lenient)
    np.testing.assert_array_equal(batch.numeric[:, 0],
                                  np.array([v for v in read if v is not None], dtype=float))
    assert [(b.reason, b.position) for b in bad] == [
        ("wrong_type", i) for i, v in enumerate(read) if v is None]
    numbers = pa.table({"id": ["a", "b"], "ts": [1_700_000_000] * 2, col: [13.56, 7.0],
                        "score": [0.5] * 2})
    batch, bad = _decoder(fmt).decode_table(numbers, source="f", positions=np.arange(2))
    assert batch.numeric[:, 0].tolist() == [13.56, 7.0] and not bad


@pytest.mark.parametrize("fmt", CASES)
def test_a_text_format_with_a_categorical_type_is_refused_where_written(fmt: str) -> None:
    feat = CASES[fmt]["feature"]
    text = connector_text(fmt, feat, f"loan.{feat}").replace(
        f"format: {fmt}}}", f"type: categorical, format: {fmt}}}")
    with pytest.raises(ConnectorError) as exc:
        parse_connector(text, file="c.yaml")
    assert exc.value.line == 13 and f"format: {fmt} reads a number" in exc.value.message
