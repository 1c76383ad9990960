"""A batch read straight from the scanner's arrays is the general assembly's batch.

Random blocks of plain records with values that each column's rules judge (categories
seen and unseen, blank and missing texts, decisions and labels of every type, ids past
the length cap or not ASCII, scores out of range): the decoder that reads scanned rows
straight from the scan gives the same batch and dead letters as the same decoder with
that path switched off, and it does take the plain blocks. The span loops are checked
against plain Python on random spans.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonscan import scanner_for
from driftwatch.numba_setup import numba_enabled
from driftwatch.schema import FeatureSchema

pytestmark = pytest.mark.skipif(not numba_enabled(), reason="the scanner needs numba")

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
        event_time: {path: ts, unit: s}
        features:
          income: {path: a.income}
          age: a.age
          purpose: loan.purpose
          flag: a.flag
        score: m.score
        model_version: m.version
        decision: {path: decision, approve: [approve, 1, true]}
        segment: channel
        exposure: loan.amount
        metrics: {fee: loan.fee}
    outcomes:
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        label: {path: bad, bad: [1, true, default], good: [0, false, paid], pending: [open]}
"""
STREAMS = parse_connector(CONNECTOR)
scanner_for({}, {}, wait=True)  # the loops loaded: the decoders here scan

texts = st.sampled_from(["car", "home", "1", "boat", " car", "CAR", "", " ", "é", "x" * 300])
record = st.fixed_dictionaries({
    "id": st.one_of(st.from_regex(r"[A-Za-z0-9 _-]{0,12}", fullmatch=True),
                    st.sampled_from(["é1", "x" * 300, "  ", None])),
    "ts": st.one_of(st.integers(1_600_000_000, 1_800_000_000), st.none()),
    "a": st.fixed_dictionaries({}, optional={"income": st.floats(-1e6, 1e6),
                                             "age": st.integers(-1, 90),
                                             "flag": st.sampled_from(["true", "false", "yes"])}),
    "loan": st.fixed_dictionaries({}, optional={"purpose": st.one_of(texts, st.none()),
                                                "amount": st.floats(0, 1e5),
                                                "fee": st.floats(0, 1e3)}),
    "m": st.fixed_dictionaries({}, optional={"score": st.floats(-0.5, 1.5),
                                             "version": st.one_of(texts, st.none())}),
    "decision": st.sampled_from(["approve", "decline", " Approve", "?", None]),
    "channel": st.one_of(texts, st.none()),
    "bad": st.sampled_from(["default", "paid", "open", "?", None]),
}, optional={"extra": st.integers(-(2**63), 2**63 - 1)})  # fmt: skip
# each column typed as the plain records type it, then the same column of another type
typed = st.sampled_from([{"bad": 1}, {"bad": True}, {"decision": 1}, {"m": {"version": 2}},
                         {"loan": {"purpose": 1}}, {}])  # fmt: skip


def plain(i: int) -> dict[str, Any]:
    return {"id": f"p{i}", "ts": 1_700_000_000 + i, "a": {"income": 1.5 * i, "age": 30,
            "flag": "true"}, "loan": {"purpose": "car", "amount": 9.0, "fee": 1.0},
            "m": {"score": 0.25, "version": "v1"}, "decision": "approve", "channel": "web",
            "bad": "paid"}  # fmt: skip


def decoders(stream: str) -> tuple[Decoder, Decoder]:
    direct, general = Decoder(STREAMS.stream(stream), SCHEMA), Decoder(STREAMS.stream(stream),
                                                                        SCHEMA)
    general._direct.enabled = False
    return direct, general


def same(a: Any, b: Any) -> None:
    assert len(a) == len(b) and a.stream == b.stream
    for name in ("ids", "keys", "event_time", "position", "numeric", "categorical", "score",
                 "model_version", "decision", "segment", "label", "exposure"):  # fmt: skip
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), name
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        assert np.array_equal(a.metrics[k], b.metrics[k], equal_nan=True), k


def letters(bad: list[Any]) -> list[tuple[Any, ...]]:
    return [(b.reason, b.detail, b.position, b.raw, b.value) for b in bad]


@settings(max_examples=50, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(blocks=st.lists(st.lists(st.tuples(st.booleans(), record), min_size=1, max_size=40),
                       min_size=1, max_size=4),
       first=typed, stream=st.sampled_from(["predictions", "outcomes"]))
def test_a_batch_from_the_scan_is_the_general_assemblys(
    blocks: list[list[tuple[bool, dict[str, Any]]]], first: dict[str, Any], stream: str
) -> None:
    direct, general = decoders(stream)
    warm = b"\n".join(orjson.dumps({**plain(i), **first}) for i in range(64))
    for dec in (direct, general):
        dec.decode_block(warm, source="warm")
    for k, block in enumerate(blocks):
        # mostly plain records (a block the scan reads whole), some random ones among them
        lines = [orjson.dumps(rec if odd else plain(100 * k + i))
                 for i, (odd, rec) in enumerate(block)]
        raw = b"\n".join(lines + [orjson.dumps(plain(i)) for i in range(40)]) + b"\n"
        a, abad = direct.decode_block(raw, source="f", first_line=1 + 100 * k)
        b, bbad = general.decode_block(raw, source="f", first_line=1 + 100 * k)
        same(a, b)
        assert letters(abad) == letters(bbad)
    assert general.rows_assembled_from_scan == 0


def test_plain_blocks_are_read_straight_from_the_scan() -> None:
    """The agreement above is not vacuous: a block of plain records never reaches the
    general assembly, and a block with one bad record does, whole."""
    direct, _ = decoders("predictions")
    block = b"\n".join(orjson.dumps(plain(i)) for i in range(200))
    direct.decode_block(block, source="f")  # the first 64 lines teach the types
    batch, bad = direct.decode_block(block, source="f")
    assert bad == [] and len(batch) == 200
    assert direct.rows_assembled_from_scan == 200 + 136
    rec = plain(7) | {"m": {"score": 2.0, "version": "v1"}}
    batch, bad = direct.decode_block(block + b"\n" + orjson.dumps(rec), source="f")
    assert [b.reason for b in bad] == ["score_out_of_range"] and len(batch) == 200
    assert direct.rows_assembled_from_scan == 336


# -- the span loops --------------------------------------------------------------------------
spans_of = st.lists(st.one_of(st.none(), st.sampled_from([b"", b" ", b"  ", b"a", b"ab", b"ba",
                                                          b"a b", "é".encode(), b"x" * 20])),
                    max_size=60)  # fmt: skip


def laid_out(cells: list[bytes | None]) -> tuple[np.ndarray, ...]:
    buf, s0, s1 = bytearray(), [], []
    for c in cells:
        buf += b'"'
        s0.append(len(buf))
        buf += c or b""
        s1.append(len(buf))
        buf += b'",'
    arr = np.frombuffer(bytes(buf) or b"\0", np.uint8)
    valid = np.array([c is not None for c in cells], np.uint8)
    return arr, np.array(s0, np.int64), np.array(s1, np.int64), valid


@settings(max_examples=200, deadline=None)
@given(cells=spans_of, cap=st.sampled_from([2, 4, 16]))
def test_the_span_loops_read_what_python_reads(cells: list[bytes | None], cap: int) -> None:
    from driftwatch.connectors import _spanloops as loops

    arr, s0, s1, valid = laid_out(cells)
    present = [c for c in cells if c is not None]
    widest = max(map(len, present), default=0)
    out = np.zeros((len(present), max(1, widest)), np.uint32)
    flags = loops.ascii_texts(arr, s0[valid == 1], s1[valid == 1], out)
    assert bool(flags & loops.SPACES) == any(not c.strip(b" ") for c in present)
    assert bool(flags & loops.NON_ASCII) == any(not c.isascii() for c in present)
    if not flags:
        assert out.view(f"U{max(1, widest)}").ravel().tolist() == [c.decode() for c in present]
    assert numbered([cells], cap)[0] == expected_numbers(cells, cap)


def expected_numbers(cells: list[bytes | None], cap: int) -> tuple[int, list[int], list[bytes]]:
    """``(found, codes, texts first seen)`` as plain Python numbers a column's texts."""
    order = list(dict.fromkeys(c for c in cells if c is not None))
    if len(order) > cap:
        return -1, [], []
    return len(order), [-1 if c is None else order.index(c) for c in cells], order


def numbered(columns: list[list[bytes | None]], cap: int,
             ) -> list[tuple[int, list[int], list[bytes]]]:
    """The columns (as many cells each) laid out as a scan lays out a block, a line per
    row with its cells side by side, numbered by ``distinct_columns`` in one call: the
    valid table holds a column more than the texts, in another order."""
    from driftwatch.connectors import _spanloops as loops

    rows, k = len(columns[0]), len(columns)
    buf = bytearray()
    s0, s1 = np.zeros((rows, k), np.int64), np.zeros((rows, k), np.int64)
    valid = np.zeros((rows, k + 1), np.uint8)
    at = np.arange(k, 0, -1, dtype=np.int64)  # column c's cells are valid column k - c
    for i in range(rows):
        buf += b"{"
        for c in range(k):
            cell = columns[c][i]
            buf += b'"'
            s0[i, c] = len(buf)
            buf += cell or b""
            s1[i, c] = len(buf)
            buf += b'",'
            valid[i, at[c]] = cell is not None
        buf += b"}\n"
    arr = np.frombuffer(bytes(buf) or b"\0", np.uint8)
    codes, firsts = np.empty((k, rows), np.int64), np.empty((k, cap), np.int64)
    found = np.zeros(k, np.int64)
    loops.distinct_columns(arr, s0, s1, valid, np.arange(k, dtype=np.int64), at, codes,
                           firsts, np.full((k, 2 * cap), -1, np.int64), found)
    out = []
    for c in range(k):
        f = int(found[c])
        if f < 0:
            out.append((-1, [], []))
        else:
            out.append((f, codes[c].tolist(), [columns[c][i] for i in firsts[c, :f].tolist()]))
    return out


texts_of = st.one_of(st.none(), st.binary(max_size=12), st.sampled_from([b"a", b"ab", b"ba"]))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), k=st.integers(1, 4), rows=st.integers(0, 40),
       cap=st.sampled_from([1, 2, 4, 16]))
def test_columns_numbered_in_one_pass_are_each_numbered_alone(
    data: st.DataObject, k: int, rows: int, cap: int
) -> None:
    """Several text columns numbered together, one of them past the cap or not, give
    each column the numbers plain Python gives it alone."""
    columns = [data.draw(st.lists(texts_of, min_size=rows, max_size=rows)) for _ in range(k)]
    assert numbered(columns, cap) == [expected_numbers(col, cap) for col in columns]
