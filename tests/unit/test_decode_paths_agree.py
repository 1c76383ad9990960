"""The block parser and the orjson line parser give the same batches and dead letters.

Random records over nested paths and every mapped field kind (features, score, proba, model
version, decision, segment, exposure, metrics, label), with values of every JSON type, absent
or null parents, parents that are not objects, duplicate keys, unmapped keys, and lines that
are not JSON at all: whatever path reads a line, the batch and each dead letter (reason,
detail, position, raw bytes) are the same, for JSONL blocks and for Kafka payloads alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonscan import scanner_for
from driftwatch.numba_setup import numba_enabled
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("income", "age"), categorical=("purpose", "flag"),
                       levels=(("car", "home", "1"), ("true", "false")))  # fmt: skip

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
        event_time: {path: ts, unit: auto}
        features:
          income: {path: a.income}
          age: a.b.age
          purpose: loan.purpose
          flag: a.flag
        score: m.score
        proba: m.proba
        model_version: m.version
        decision: {path: decision, approve: [approve, 1, true]}
        segment: channel
        exposure: loan.amount
        metrics: {fee: loan.fee}
    outcomes:
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        label: {path: out.bad, bad: [1, true, default], good: [0, false, paid], pending: [open]}
"""
STREAMS = parse_connector(CONNECTOR)
# without the list (proba), which the compiled scanner does not read: it takes the blocks
NO_PROBA = parse_connector(CONNECTOR.replace("        proba: m.proba\n", ""))
scanner_for({}, {}, wait=True)  # its loops loaded, so the decoders here use it

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
    st.sampled_from(["car", "home", "approve", "default", "paid", "1", " ", "",
                     "2024-01-01T00:00:00Z", "1704067200"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3),
                   st.dictionaries(st.sampled_from(["x", "score"]), scalars, max_size=2))
numbers = st.one_of(st.floats(0, 1), st.integers(0, 2), st.floats(-1e300, 1e300))
times = st.one_of(st.integers(1_600_000_000, 1_800_000_000_000),
                  st.floats(1.6e9, 1.8e9), st.sampled_from(["2024-02-01T10:00:00+01:00"]))
# a leaf is mostly a plausible value, sometimes anything, sometimes absent
ABSENT = object()


def leaf(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(plausible, plausible, plausible, values, st.just(ABSENT))


def parent(children: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    obj = st.fixed_dictionaries({}, optional=children)
    return st.one_of(obj, obj, obj, obj, obj, st.none(), scalars, st.just(ABSENT))


record = st.fixed_dictionaries({
    "id": leaf(st.one_of(st.text(min_size=1, max_size=8), st.integers(0, 10**6))),
    "ts": leaf(times),
    "a": parent({"income": leaf(numbers), "flag": leaf(st.booleans()),
                 "b": parent({"age": leaf(st.integers(18, 90))})}),
    "loan": parent({"purpose": leaf(st.sampled_from(["car", "home", "boat", 1])),
                    "amount": leaf(numbers), "fee": leaf(numbers)}),
    "m": parent({"score": leaf(numbers), "version": leaf(st.sampled_from(["v1", 2, "x" * 300])),
                 "proba": leaf(st.lists(numbers, min_size=1, max_size=3))}),
    "decision": leaf(st.sampled_from(["approve", "decline", 1, 0, True, None])),
    "channel": leaf(st.sampled_from(["web", "branch", 3])),
    "out": parent({"bad": leaf(st.sampled_from([0, 1, True, False, "default", "paid", "open",
                                                "?"]))}),
    "extra": leaf(values),
})  # fmt: skip


def _prune(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _prune(x) for k, x in v.items() if x is not ABSENT}
    return v


def dump(rec: dict[str, Any], style: int) -> bytes:
    line = orjson.dumps(_prune(rec))
    if style == 1 and line.startswith(b'{"id"'):  # a duplicate key: the last one counts
        return b'{"id":"shadowed",' + line[1:]
    if style == 2:
        return b" " + line + b" "
    return line


raw_lines = st.one_of(
    st.binary(max_size=30).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")),
    st.sampled_from([b"null", b"[1]", b"3", b'{"id": 1,}', b'{"id": NaN}', b'{"id":"a"} x',
                     b'{"id":"a","ts":1e400}', b'{"id":"\xff"}', b"{" * 40,
                     # integers past 64 bits: orjson reads them as floats
                     b'{"id":18446744073709551616,"ts":1704067200}',
                     b'{"id":"b","ts":1704067200,"a":{"income":123456789012345678901234567890}}',
                     b'{"id":"c","ts":1704067200,"loan":{"purpose":-9223372036854775809}}']),
)
line = st.one_of(
    st.tuples(record, st.sampled_from([0, 0, 0, 1, 2])).map(lambda t: dump(*t)),
    st.tuples(record, st.integers(1, 300)).map(lambda t: dump(t[0], 0)[: t[1]]),
    raw_lines,
)

# the block parser learns the types of ids and levels from a stream's first lines
WARM = [orjson.dumps({"id": f"w{i}", "ts": 1_704_067_200 + i, "a": {"income": 1.5 * i,
                      "flag": True, "b": {"age": 30}}, "loan": {"purpose": "car", "amount": 9.0,
                      "fee": 1.0}, "m": {"score": 0.5, "version": "v1", "proba": [0.5, 0.5]},
                      "decision": "approve", "channel": "web", "out": {"bad": 0}})
        for i in range(64)]  # fmt: skip
PLAIN = [w.replace(b'"w', b'"p') for w in WARM] * 2  # the lines random ones are mixed into


def mixed(inserts: list[tuple[int, bytes]]) -> list[bytes]:
    """Plain lines with the random ones inserted: blocks the block parser can split."""
    out = list(PLAIN)
    for at, ln in sorted(inserts, key=lambda t: -t[0]):
        out.insert(at, ln)
    return out


def assert_same(a: Batch, b: Batch) -> None:
    assert a.stream == b.stream and len(a) == len(b)
    for name in ("ids", "keys", "event_time", "position", "numeric", "categorical", "score",
                 "model_version", "decision", "segment", "label", "exposure"):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        assert x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert (a.proba is None) == (b.proba is None)
    if a.proba is not None:
        assert np.array_equal(a.proba, b.proba, equal_nan=True)
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        assert np.array_equal(a.metrics[k], b.metrics[k], equal_nan=True), k


def letters(bad: list[BadRecord]) -> list[tuple[Any, ...]]:
    return [(b.reason, b.detail, b.position, b.raw, b.stream) for b in bad]


def both_agree(mapping: Any, warm: list[bytes], lines: list[bytes],
               stamps: np.ndarray | None = None) -> tuple[Batch, list[BadRecord]]:
    """Decode ``lines`` (after ``warm``) as one block and as Kafka payloads, with the block
    parser and line by line: the same batches and dead letters each way. Returns the
    payloads' decode."""
    slow = Decoder(mapping, SCHEMA, block_parse=False)
    fast = [Decoder(mapping, SCHEMA), Decoder(mapping, SCHEMA, scan=False)]  # scanner, pyarrow
    for dec in (*fast, slow):
        dec.decode_block(b"\n".join(warm), source="warm")
    block = b"\n".join(lines) + b"\n"
    offsets = np.arange(100, 100 + len(lines))
    b, bbad = slow.decode_block(block, source="f.jsonl", first_line=65)
    c, cbad = slow.decode(lines, source="t", positions=offsets, partition=2, timestamps=stamps)
    for dec in fast:
        a, abad = dec.decode_block(block, source="f.jsonl", first_line=65)
        assert_same(a, b)
        assert letters(abad) == letters(bbad)
        a, abad = dec.decode(lines, source="t", positions=offsets, partition=2,
                             timestamps=stamps)
        assert_same(a, c)
        assert letters(abad) == letters(cbad)
    assert fast[1].rows_scanned == 0
    if mapping.proba is None and numba_enabled():  # (DRIFTWATCH_KERNEL=numpy: no scanner)
        # the plain lines (most of them), twice: as a block and as payloads
        assert fast[0].rows_scanned >= len(lines)
    return a, abad


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(inserts=st.lists(st.tuples(st.integers(0, len(PLAIN)), line), min_size=1, max_size=25),
       stream=st.sampled_from(["predictions", "outcomes", "no proba"]))  # fmt: skip
def test_block_and_line_parsers_give_the_same_batches_and_dead_letters(
    inserts: list[tuple[int, bytes]], stream: str
) -> None:
    lines = mixed(inserts)
    mapping = NO_PROBA.stream("predictions") if stream == "no proba" else STREAMS.stream(stream)
    a, abad = both_agree(mapping, WARM, lines, np.full(len(lines), 1.7e9))
    assert len(a) + len(abad) == len(lines)  # every payload is a row or a dead letter


def test_integer_probabilities_out_of_range_read_alike() -> None:
    """``[0, 2]`` is dead-lettered with the same detail whichever parser read it (the line
    parser keeps JSON integers, the block parser reads floats)."""
    lines = [w.replace(b"[0.5,0.5]", b"[0,2]") if k == 70 else w
             for k, w in enumerate(PLAIN)]
    assert lines[70] != PLAIN[70]
    got = []
    for dec in (Decoder(STREAMS.stream("predictions"), SCHEMA),
                Decoder(STREAMS.stream("predictions"), SCHEMA, block_parse=False)):
        dec.decode_block(b"\n".join(WARM), source="warm")
        _, bad = dec.decode_block(b"\n".join(lines), source="f")
        got.append(letters(bad))
    assert got[0] == got[1]
    assert [(r[0], r[1]) for r in got[0]] == [
        ("score_out_of_range", "proba (m.proba): expected probabilities in [0, 1], found "
                               "[0.0, 2.0]")]


def test_the_block_parser_takes_plain_lines() -> None:
    """The agreement above is not a vacuous one: plain lines do go through the block parser."""
    dec = Decoder(STREAMS.stream("predictions"), SCHEMA)
    batch, bad = dec.decode_block(b"\n".join(WARM * 3), source="f")
    assert bad == [] and len(batch) == 192 and dec.rows_block_parsed == 128


# -- event_time format: and origin: ---------------------------------------------------------
# Each configuration with the plain time its warm-up lines carry: a text time must reach the
# block parser as text, or every block falls back and the agreement below is vacuous.
TIME_CONFIGS = [
    ('{path: ts, format: "%b-%Y"}', "Dec-2015"),
    ('{path: ts, unit: iso, format: "%d/%m/%Y %H:%M"}', "01/12/2015 10:30"),
    ('{path: ts, format: "%Y-%m-%dT%H:%M:%S%z"}', "2015-12-01T10:30:00+0100"),
    ('{path: ts, unit: s, origin: "2013-09-01T00:00:00Z"}', 172792),
    ('{path: ts, unit: ms, origin: "2013-09-01"}', 1500.5),
    ("{path: ts, origin: 2013-09-01T00:00:00+02:00}", 0),
]
time_values = st.one_of(
    st.sampled_from(["Dec-2015", "dec-2015", "Dec-15", "01/12/2015 10:30", "1/2/2015 9:05",
                     "2015-12-01T10:30:00+0100", "2015-12-01T10:30:00Z", "2015-12-01",
                     "172792", "1.5e3", " 12", "now", "today", "", "NaN", "-0"]),
    st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False, allow_infinity=False),
    st.integers(0, 200_000), st.text(max_size=20), values,
)
timed_record = st.tuples(record, leaf(time_values)).map(
    lambda t: {**t[0], "ts": t[1]} if t[1] is not ABSENT else
    {k: v for k, v in t[0].items() if k != "ts"})


def _timed_streams(config: str) -> Any:
    text = CONNECTOR.replace("{path: ts, unit: auto}", config).replace("{path: ts, unit: s}",
                                                                       config)
    return parse_connector(text)


def _warm(ts: Any) -> list[bytes]:
    return [orjson.dumps({**orjson.loads(w), "ts": ts}) for w in WARM]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(config=st.sampled_from(TIME_CONFIGS),
       inserts=st.lists(st.tuples(st.integers(0, len(PLAIN)), st.one_of(
           st.tuples(timed_record, st.sampled_from([0, 0, 0, 1, 2])).map(lambda t: dump(*t)),
           raw_lines)), min_size=1, max_size=25),
       stream=st.sampled_from(["predictions", "outcomes"]))  # fmt: skip
def test_both_parsers_agree_on_event_time_formats_and_origins(
    config: tuple[str, Any], inserts: list[tuple[int, bytes]], stream: str
) -> None:
    streams = _timed_streams(config[0])
    warm = _warm(config[1])
    plain = [w.replace(b'"w', b'"p') for w in warm] * 2
    lines = list(plain)
    for at, ln in sorted(inserts, key=lambda t: -t[0]):
        lines.insert(at, ln)
    a, abad = both_agree(streams.stream(stream), warm, lines)
    assert len(a) + len(abad) == len(lines)


@pytest.mark.parametrize(("config", "plain"), TIME_CONFIGS)
def test_the_block_parser_takes_formatted_and_offset_times(config: str, plain: Any) -> None:
    dec = Decoder(_timed_streams(config).stream("predictions"), SCHEMA)
    batch, bad = dec.decode_block(b"\n".join(_warm(plain) * 3), source="f")
    assert bad == [] and len(batch) == 192 and dec.rows_block_parsed == 128
    assert np.isfinite(batch.event_time).all() and batch.event_time.min() > 1.3e9  # not 1970


# -- missing_values: ------------------------------------------------------------------------
# Each adds lines under the predictions stream's fields; the records carry the listed codes.
SENTINEL_CONFIGS = [
    "missing_values: [-9, -8, -7]",
    'missing_values: [-1, home, "1"]\n        missing_values_by_feature: {age: [30, -9]}',
    'missing_values_by_feature: {income: [0, 1, 0.5], purpose: [car, 1], flag: ["false"]}',
    "missing_values: [-9.0, 999999]\n        missing_values_by_feature: {income: []}",
]
coded = st.one_of(numbers, st.sampled_from([-9, -8, -7, -9.0, -1, 0, 1, 30, 999999]))
sentinel_record = st.tuples(record, leaf(coded), leaf(coded), leaf(st.sampled_from(
    ["car", "home", "1", 1, -1, "-1", True]))).map(lambda t: {
        **t[0], "a": {"income": t[1], "b": {"age": t[2]}, "flag": True},
        "loan": {"purpose": t[3], "amount": 1.0, "fee": 1.0}})


def _sentinel_streams(config: str) -> Any:
    return parse_connector(CONNECTOR.replace("        metrics: {fee: loan.fee}\n",
                                             f"        metrics: {{fee: loan.fee}}\n"
                                             f"        {config}\n"))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(config=st.sampled_from(SENTINEL_CONFIGS),
       inserts=st.lists(st.tuples(st.integers(0, len(PLAIN)), st.one_of(
           sentinel_record.map(lambda r: dump(r, 0)), line)), min_size=1, max_size=25))
def test_both_parsers_agree_on_missing_values(config: str,
                                              inserts: list[tuple[int, bytes]]) -> None:
    streams = _sentinel_streams(config)
    assert not streams.stream("predictions").missing.is_empty
    both_agree(streams.stream("predictions"), WARM, mixed(inserts))


def test_the_block_parser_takes_lines_with_missing_values() -> None:
    dec = Decoder(_sentinel_streams(SENTINEL_CONFIGS[0]).stream("predictions"), SCHEMA)
    coded = [w.replace(b'"income":1.5', b'"income":-9') for w in WARM]
    batch, bad = dec.decode_block(b"\n".join(coded * 3), source="f")
    assert bad == [] and len(batch) == 192 and dec.rows_block_parsed == 128
    assert np.isnan(batch.numeric[:, 0]).sum() == 3
