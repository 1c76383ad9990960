"""Decoding records into batches: values, missing values, time units and every bad reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pytest

from driftwatch.batch import DECISION_APPROVE, DECISION_DECLINE, DECISION_UNKNOWN, Batch
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.columns import code_lookup, encode, texts
from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.schema import FeatureSchema
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.testing.generator import generate, outcome_records, prediction_records
from driftwatch.testing.scenarios import scenario_plan

SCHEMA = FeatureSchema(
    numeric=("income", "age"),
    categorical=("purpose",),
    levels=(("car", "home"),),
    other=(frozenset({"boat"}),),
)

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      fields:
        event_id: id
        event_time: {path: ts, unit: UNIT}
        features:
          income: {path: a.income}
          age: a.age
          purpose: loan.purpose
        score: m.score
        proba: m.proba
        model_version: m.version
        decision: {path: decision, approve: [approve, 1, true], DECLINE}
        segment: channel
        exposure: loan.amount
        metrics: {fee: loan.fee}
    outcomes:
      fields:
        event_id: id
        event_time: ts
        label: {path: bad, bad: [1, true, default], good: [0, false, paid]}
"""


def decoder(stream: str = "predictions", unit: str = "auto", decline: str = "",
            block: bool = True) -> Decoder:  # fmt: skip
    text = CONNECTOR.replace("UNIT", unit).replace(", DECLINE", decline)
    return Decoder(parse_connector(text).stream(stream), SCHEMA, block_parse=block)


def rec(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "a1", "ts": 1_704_067_200, "a": {"income": 52_000.5, "age": 41},
        "loan": {"purpose": "car", "amount": 9000, "fee": 90.0},
        "m": {"score": 0.12, "proba": [0.88, 0.12], "version": "1"},
        "decision": "approve", "channel": "web",
    }  # fmt: skip
    base.update(kw)
    return base


def block(records: Sequence[Any]) -> bytes:
    return b"\n".join(r if isinstance(r, bytes) else orjson.dumps(r) for r in records) + b"\n"


def decode(records: Sequence[Any], **kw: Any) -> tuple[Batch, list[BadRecord]]:
    return decoder(**kw).decode_block(block(records), source="in.jsonl")


def test_good_record_fills_every_column() -> None:
    batch, bad = decode([rec()])
    assert bad == []
    assert batch.stream == "predictions" and batch.ids.tolist() == ["a1"]
    assert batch.event_time.tolist() == [1_704_067_200.0]
    assert batch.position.tolist() == [1]
    assert batch.numeric.tolist() == [[52_000.5, 41.0]]
    assert batch.categorical.tolist() == [[0]]
    assert batch.score.tolist() == [0.12] and batch.proba.tolist() == [[0.88, 0.12]]
    assert batch.model_version.tolist() == ["1"] and batch.segment.tolist() == ["web"]
    assert batch.decision.tolist() == [DECISION_APPROVE]
    assert batch.exposure.tolist() == [9000.0] and batch.metrics["fee"].tolist() == [90.0]
    assert batch.source == "in.jsonl"


def test_missing_values_are_missing_not_bad() -> None:
    records = [
        rec(a={"income": None}),  # null numeric, absent numeric
        rec(a=None, loan={}),  # null parent, empty parent
        rec(loan={"purpose": None}),
        rec(loan={"purpose": "  "}),  # blank level = missing
        {"id": "x", "ts": 1_704_067_200},  # nothing but id and time
    ]
    batch, bad = decode(records)
    assert bad == []
    assert np.isnan(batch.numeric[[0, 1, 4]]).all() and batch.numeric[2].tolist() == [52_000.5, 41]
    assert batch.categorical[:, 0].tolist() == [0, -1, -1, -1, -1]
    assert np.isnan(batch.score[-1]) and batch.decision[-1] == DECISION_UNKNOWN
    assert batch.model_version[-1] == "" and batch.segment[-1] == ""
    assert np.isnan(batch.proba[-1]).all()


def test_a_boolean_in_a_numeric_feature_is_zero_or_one() -> None:
    # a flag typed numeric: every prediction used to be rejected as wrong_type
    batch, bad = decode([rec(id=f"r{i}", a={"age": v, "income": 1.0})
                         for i, v in enumerate([True, False, None])])
    assert bad == []
    age = batch.numeric[:, SCHEMA.numeric.index("age")]
    assert age[:2].tolist() == [1.0, 0.0] and np.isnan(age[2])


def test_categorical_codes_follow_the_schema() -> None:
    values = ["car", "home", "boat", "ufo", 7, True, None]
    batch, bad = decode([rec(id=f"r{i}", loan={"purpose": v}) for i, v in enumerate(values)])
    assert bad == []
    # 0..K-1 levels, K other, K+1 unseen (numbers and booleans are text), -1 missing
    assert batch.categorical[:, 0].tolist() == [0, 1, 2, 3, 3, 3, -1]


def test_vectorised_encoding_matches_feature_schema() -> None:
    rng = np.random.default_rng(3)
    vals = rng.choice(np.array(["car", "home", "boat", "ufo", None], dtype=object), 500).tolist()
    arr, _ = texts(vals)
    got = encode(arr, code_lookup(SCHEMA.levels[0], SCHEMA.other[0]), 2)
    assert got.tolist() == SCHEMA.encode_categorical(0, vals).tolist()


@pytest.mark.parametrize(
    ("unit", "value", "expected"),
    [
        ("auto", 1_704_067_200, 1_704_067_200.0),
        ("auto", 1_704_067_200_500, 1_704_067_200.5),  # > 1e11: milliseconds
        ("auto", "2024-01-01T00:00:00Z", 1_704_067_200.0),
        ("auto", "2024-01-01T02:00:00+02:00", 1_704_067_200.0),
        ("auto", "2024-01-01T00:00:00", 1_704_067_200.0),  # naive = UTC
        ("auto", "2024-01-01", 1_704_067_200.0),
        ("auto", "1704067200", 1_704_067_200.0),
        ("s", 1_704_067_200.25, 1_704_067_200.25),
        ("ms", 1_704_067_200_000, 1_704_067_200.0),
        ("ms", "1704067200000", 1_704_067_200.0),
        ("iso", "2024-01-01T00:00:00.250Z", 1_704_067_200.25),
    ],
)
def test_event_time_units(unit: str, value: Any, expected: float) -> None:
    batch, bad = decode([rec(ts=value)], unit=unit)
    assert bad == [] and batch.event_time.tolist() == [expected]


@pytest.mark.parametrize("word", ["now", "today"])
def test_words_pandas_reads_as_the_wall_clock_are_bad_times(word: str) -> None:
    # pandas parses "now" and "today" as the current time: a replay would depend on when
    # it ran, not on its input
    for unit in ("auto", "iso"):
        for blk in (True, False):
            batch, bad = decode([rec(ts=word)], unit=unit, block=blk)
            assert len(batch) == 0 and [b.reason for b in bad] == ["bad_time"], (unit, blk)


@pytest.mark.parametrize(
    ("record", "reason", "in_detail"),
    [
        (b'{"id": "a1", "ts": 1', "invalid_json", ""),
        (b"\xef\xbb\xbf" + orjson.dumps(rec()), "invalid_json", ""),
        (b'{"id": "a1", "ts": NaN}', "bad_time", ""),  # Python's json.dumps of a NaN
        (b"[1, 2]", "not_an_object", "a list"),
        (b"null", "not_an_object", "null"),
        (b'"text"', "not_an_object", "text"),
        (rec(id=None), "missing_id", "missing"),
        ({k: v for k, v in rec().items() if k != "id"}, "missing_id", "missing"),
        (rec(id=" "), "missing_id", "empty"),
        (rec(id={"x": 1}), "wrong_type", "event_id"),
        (rec(ts=None), "missing_time", "event_time (ts) is missing"),
        (rec(ts="yesterday"), "bad_time", "'yesterday'"),
        (rec(ts=True), "bad_time", "true"),
        (rec(ts=[1]), "bad_time", "a list"),
        (rec(a={"income": "52000"}), "wrong_type", "feature 'income' (a.income)"),
        (rec(a={"income": {"v": 1}}), "wrong_type", "an object"),
        (rec(a={"age": [41]}), "wrong_type", "feature 'age'"),
        (rec(a={"age": "old"}), "wrong_type", "feature 'age'"),
        (rec(a=5), "wrong_type", "not an object on the path"),
        (rec(loan={"purpose": ["car"]}), "wrong_type", "feature 'purpose'"),
        (rec(m={"score": "0.1"}), "wrong_type", "score (m.score)"),
        (rec(m={"score": 1.5}), "score_out_of_range", "[0, 1]"),
        (rec(m={"score": -0.01}), "score_out_of_range", "-0.01"),
        (rec(m={"proba": [0.5]}), "wrong_type", "proba"),
        (rec(m={"proba": [1.5, -0.5]}), "score_out_of_range", "proba"),
        (rec(decision={"a": 1}), "wrong_type", "decision"),
        (rec(loan={"amount": "9000"}), "wrong_type", "exposure"),
        (rec(loan={"fee": "x"}), "wrong_type", "metric 'fee'"),
    ],
)
def test_each_bad_reason(record: Any, reason: str, in_detail: str) -> None:
    for blk in (True, False):
        batch, bad = decode([rec(id="ok"), record, rec(id="ok2")], block=blk)
        assert batch.ids.tolist() == ["ok", "ok2"]
        assert [(b.reason, b.position) for b in bad] == [(reason, 2)]
        b = bad[0]
        assert in_detail in b.detail
        assert b.source == "in.jsonl" and b.stream == "predictions"
        assert b.raw == (record if isinstance(record, bytes) else orjson.dumps(record))


def test_first_problem_wins_in_a_fixed_order() -> None:
    _, bad = decode([rec(id=None, ts="x", m={"score": 7})])
    assert [b.reason for b in bad] == ["missing_id"]
    _, bad = decode([rec(ts="x", m={"score": 7})])
    assert [b.reason for b in bad] == ["bad_time"]


def test_labels_decisions_and_their_vocabularies() -> None:
    out = decoder("outcomes")
    recs = [{"id": str(i), "ts": 1, "bad": v} for i, v in
            enumerate([1, True, "Default", 0, False, "paid", 1.0, "maybe", None, {"x": 1}])]
    batch, bad = out.decode_block(block(recs), source="o")
    assert batch.label.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert [(b.reason, b.position) for b in bad] == [("bad_label", 8), ("bad_label", 9),
                                                     ("bad_label", 10)]
    assert "'maybe'" in bad[0].detail and "null" in bad[1].detail
    batch, _ = decode([rec(decision=v) for v in ["approve", " APPROVE ", 1, True, "no", 0, None]])
    assert batch.decision.tolist() == [1, 1, 1, 1, 0, 0, -1]
    batch, _ = decode([rec(decision=v) for v in ["approve", "decline", "review"]],
                      decline=", decline: [decline]")
    assert batch.decision.tolist() == [DECISION_APPROVE, DECISION_DECLINE, DECISION_UNKNOWN]


def test_an_unknown_label_value_is_named_with_the_key_that_takes_it() -> None:
    """Before: 'expected one of [...] (bad) or [...] (good), found text 'Repurchased'',
    silent on the pending list and on where in the connector the value goes; and no
    record said which value it was, so no summary could count them."""
    out = decoder("outcomes")
    recs = [{"id": str(i), "ts": 1, "bad": v} for i, v in
            enumerate(["Repurchased", None, {"x": 1}, 7])]
    _, bad = out.decode_block(block(recs), source="o")
    assert [b.reason for b in bad] == ["bad_label"] * 4
    unknown, null, wrong, number = bad
    assert (unknown.value, number.value, null.value, wrong.value) == ("Repurchased", "7",
                                                                      None, None)
    assert unknown.detail.startswith("label (bad): text 'Repurchased' is on none of the "
                                     "connector's label lists (bad ["), unknown.detail
    assert unknown.detail.endswith("add it to this stream's fields.label bad: or good:, if "
                                   "it is no outcome yet to pending:"), unknown.detail
    assert "found null" in null.detail and null.value is None


def test_blank_lines_are_skipped_and_positions_are_file_lines() -> None:
    data = orjson.dumps(rec(id="a")) + b"\n\n   \r\n" + orjson.dumps(rec(id="b")) + b"\r\n"
    batch, bad = decoder().decode_block(data, source="f", first_line=10)
    assert bad == [] and batch.ids.tolist() == ["a", "b"]
    assert batch.position.tolist() == [10, 13]


def test_kafka_payloads_keep_offsets_partition_and_timestamps() -> None:
    text = CONNECTOR.replace("{path: ts, unit: UNIT}", "{source: kafka_timestamp}").replace(
        ", DECLINE", "")
    dec = Decoder(parse_connector(text).stream("predictions"), SCHEMA)
    payloads = [orjson.dumps(rec(id="a")), b"", b"{oops", orjson.dumps(rec(id="b"))]
    batch, bad = dec.decode(payloads, source="credit.predictions",
                            positions=np.array([40, 41, 42, 43]), partition=3,
                            timestamps=np.array([1_704_067_200.5, 1.0, 2.0, np.nan]))
    assert batch.ids.tolist() == ["a"] and batch.event_time.tolist() == [1_704_067_200.5]
    assert batch.position.tolist() == [40]
    assert [(b.reason, b.position, b.partition, b.source) for b in bad] == [
        ("invalid_json", 41, 3, "credit.predictions"),
        ("invalid_json", 42, 3, "credit.predictions"),
        ("missing_time", 43, 3, "credit.predictions"),
    ]
    assert bad[0].detail == "empty payload"


def test_tables_decode_like_json_and_csv_text_numbers_are_read() -> None:
    dec = decoder()
    table = pa.table({
        "id": ["a", "b", "c", "d"], "ts": ["1704067200", "2024-01-01T00:00:00Z", "x", "1"],
        "a.income": ["1.5", "", "abc", "2"], "a.age": ["40", None, "1", "2"],
        "loan.purpose": ["home", "", "car", "car"], "m.score": ["0.5", "0.1", "0.1", "inf"],
    })  # fmt: skip
    batch, bad = dec.decode_table(table, source="f.csv", positions=np.arange(2, 6),
                                  lenient=True)  # fmt: skip
    assert batch.ids.tolist() == ["a", "b"]
    assert batch.numeric[0].tolist() == [1.5, 40.0] and np.isnan(batch.numeric[1]).all()
    assert batch.categorical[:, 0].tolist() == [1, -1]
    assert [(b.reason, b.position) for b in bad] == [("bad_time", 4), ("non_finite_score", 5)]
    assert b'"id":"c"' in bad[0].raw
    nested = pa.table({"id": ["a"], "ts": [1_704_067_200], "a": [{"income": 3.0, "age": 2}],
                       "m": [{"score": float("nan")}]})  # fmt: skip
    batch, bad = dec.decode_table(nested, source="f.parquet", positions=np.array([1]))
    assert batch.numeric.tolist() == [] and bad[0].reason == "non_finite_score"


def test_stream_without_features_has_zero_width_matrices() -> None:
    batch, bad = decoder("outcomes").decode_block(block([{"id": "a", "ts": 5, "bad": 0}]),
                                                  source="o")  # fmt: skip
    assert bad == [] and batch.stream == "outcomes"
    assert batch.numeric.shape == (1, 0) and batch.categorical.shape == (1, 0)


def test_block_parser_and_line_parser_agree_on_generated_data() -> None:
    s = generate(scenario_plan("demo", n_events=3000, days=20), seed=5)
    lines = [orjson.dumps(r) for r in prediction_records(s)]
    lines[10] = lines[10].replace(b'"income":', b'"income":"x","y":')  # forces a fallback
    lines[2000] = b"{broken"
    c = credit_connector(None, None)
    fast = Decoder(c.stream("predictions"), credit_schema())
    slow = Decoder(c.stream("predictions"), credit_schema(), block_parse=False)
    a, abad = fast.decode_block(b"\n".join(lines), source="x")
    b, bbad = slow.decode_block(b"\n".join(lines), source="x")
    assert fast.rows_block_parsed > 2500 and slow.rows_block_parsed == 0
    assert abad == bbad and [x.position for x in abad] == [11, 2001]
    for name in ("ids", "event_time", "position", "numeric", "categorical", "score",
                 "model_version", "decision", "segment", "exposure"):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    out = Decoder(c.stream("outcomes"), credit_schema())
    ob, obad = out.decode_block(b"\n".join(orjson.dumps(r) for r in outcome_records(s)),
                                source="o")  # fmt: skip
    assert obad == [] and len(ob) == len(s.outcome_index)
    assert ob.label.tolist() == s.label.astype(float).tolist()


def test_features_come_column_major_with_bad_records_dropped() -> None:
    """The decoder fills the feature matrix a column at a time and keeps it column-major
    (what the window kernel reads in place), bad rows filtered out, values unchanged."""
    recs = [rec(id=f"r{i}", a={"income": 1000.0 + i, "age": 20 + i}) for i in range(6)]
    recs[2] = rec(id="", a={"income": 1.0, "age": 1})  # missing id: a bad record
    batch, bad = decode(recs)
    assert [b.reason for b in bad] == ["missing_id"]
    assert batch.numeric.flags.f_contiguous and batch.categorical.flags.f_contiguous
    assert batch.numeric.tolist() == [[1000.0 + i, 20.0 + i] for i in (0, 1, 3, 4, 5)]
    assert batch.categorical.tolist() == [[0]] * 5


def test_csv_text_of_an_integral_number_is_the_reference_level() -> None:
    # pandas writes an integer column with a missing value as floats ("3.0"), and reads a
    # reference's "3.0" back as 3.0, whose level is "3": the CSV text must land there too
    schema = FeatureSchema(categorical=("deps",), levels=(("0", "1", "3", "x.0"),))
    m = parse_connector(CONNECTOR.replace("UNIT", "auto").replace(", DECLINE", "")
                        .replace("income: {path: a.income}", "deps: deps")).stream("predictions")
    dec = Decoder(m, schema)
    table = pa.table({
        "id": list("abcdefg"), "ts": ["1704067200"] * 7,
        "deps": ["3.0", "1", " 0.0 ", "", "2.0", "x.0", "1_0"],
    })  # fmt: skip
    batch, bad = dec.decode_table(table, source="f.csv", positions=np.arange(2, 9),
                                  lenient=True)  # fmt: skip
    assert not bad
    unseen = len(schema.levels[0]) + 1
    assert batch.categorical[:, 0].tolist() == [2, 1, 0, -1, unseen, 3, unseen]


@pytest.mark.parametrize(("levels", "sent"), [
    (("36 months", "60 months"), [" 36 months", "60 months ", "36 months", " 48 months"]),
    ((" 36 months", " 60 months"), ["36 months", " 60 months", "  36 months ", "48 months"]),
])
def test_a_level_with_spaces_around_it_is_the_reference_level(
        levels: tuple[str, ...], sent: list[str]) -> None:
    """Lending Club's ``term`` is `` 36 months``: a CSV reference reads it trimmed, a
    JSON stream keeps the space (or a Parquet reference keeps it and the stream does
    not). Before, every record's term was a new category, and the data-quality gate held
    every window of the replay."""
    schema = FeatureSchema(numeric=("income", "age"), categorical=("purpose",),
                           levels=(levels,), other=(frozenset(),))
    dec = Decoder(parse_connector(CONNECTOR.replace("UNIT", "auto").replace(", DECLINE", ""))
                  .stream("predictions"), schema)
    batch, bad = dec.decode_block(block([rec(id=f"r{i}", loan={"purpose": v})
                                         for i, v in enumerate(sent)]), source="in.jsonl")
    assert bad == []
    assert batch.categorical[:, 0].tolist() == [0, 1, 0, 3]  # 48 months: unseen
