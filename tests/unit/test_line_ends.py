"""The line ends a reader finds are the offsets of the newline bytes, as plain Python finds
them: with the compiled loop (a word of eight bytes tested at once) and without it, for any
bytes, any stretch of them, and a buffer at any alignment, read-only (a mapped file) or not
(a read buffer)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors import lineends
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonscan import line_finder
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.readers import FileReader
from driftwatch.numba_setup import numba_enabled
from driftwatch.schema import FeatureSchema

# newlines, and the bytes a word test could take for one: \n's neighbours and high-bit twin
_BYTES = st.binary(max_size=200) | st.lists(
    st.sampled_from([10, 11, 9, 0, 0x8A, 0xFF, 0x0A ^ 0x01, ord("a")]), max_size=200).map(bytes)


SCHEMA = FeatureSchema(numeric=("x",), categorical=(), levels=())
MAPPING = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                        event_time=TimeField(FieldPath.parse("ts")), features=None,
                        score=FieldPath.parse("s"))


def _plain(data: bytes, start: int, count: int) -> list[int]:
    return [i for i in range(start, start + count) if data[i] == 10]


@st.composite
def _stretch(draw: st.DrawFn) -> tuple[bytes, int, int, int, bool]:
    data = draw(_BYTES)
    skew = draw(st.integers(0, 7))  # where the array's first byte lies in its buffer
    start = draw(st.integers(0, len(data)))
    count = draw(st.integers(0, len(data) - start))
    return data, skew, start, count, draw(st.booleans())


def _array(data: bytes, skew: int, writable: bool) -> np.ndarray:
    held = (bytearray if writable else bytes)(b"\n" * skew + data)
    return np.frombuffer(held, np.uint8, offset=skew)


@settings(max_examples=300, deadline=None)
@given(_stretch())
def test_the_compiled_loop_finds_every_newline_and_nothing_else(
        case: tuple[bytes, int, int, int, bool]) -> None:
    if not numba_enabled():
        pytest.skip("numba is not installed")
    from driftwatch.connectors._lineloops import line_ends

    data, skew, start, count, writable = case
    out = np.full(count + 1, -1, np.int64)
    k = line_ends(_array(data, skew, writable), start, count, out)
    assert out[:k].tolist() == _plain(data, start, count)
    assert (out[k:] == -1).all()  # nothing written past them


@settings(max_examples=100, deadline=None)
@given(_stretch(), st.booleans())
def test_line_ends_are_the_same_with_the_loop_or_without(
        case: tuple[bytes, int, int, int, bool], compiled: bool) -> None:
    data, skew, start, count, writable = case
    if compiled and line_finder() is None:
        from driftwatch.connectors.jsonscan import _LOOPS

        if _LOOPS.get(wait=True) is None:
            pytest.skip("numba is not installed")
    finder = line_finder if compiled else (lambda: None)
    with mock.patch.object(lineends, "line_finder", finder):
        got = lineends.line_ends(_array(data, skew, writable), start, count)
    assert got.dtype == np.int64
    assert got.tolist() == _plain(data, start, count)


def test_the_scanner_s_load_compiles_the_loop_for_every_buffer_a_reader_hands_it(
        tmp_path: Path) -> None:
    """Loaded before the reader process forks, the loop must not compile again there (15 s
    of a replay's reader): the argument types a reader passes, on a mapped file's bytes and
    on a read buffer's, are those the scanner's load runs it with."""
    if not numba_enabled():
        pytest.skip("numba is not installed")
    import numba

    from driftwatch.connectors import _lineloops, jsonscan

    real, seen = _lineloops.line_ends, []

    def spy(*args: object) -> int:
        seen.append(tuple(numba.typeof(a) for a in args))
        return int(real(*args))

    with mock.patch.object(_lineloops, "line_ends", spy):
        jsonscan._load()
    warmed, seen[:] = set(seen), []
    path = tmp_path / "p.jsonl"
    path.write_bytes(b'{"id": "a", "ts": 1, "x": 1.0, "s": 0.5}\n' * 50)
    with mock.patch.object(lineends, "line_finder", lambda: spy):
        for mapped in (True, False):
            reader = FileReader(path, "p.jsonl", "jsonl", [(0, Decoder(MAPPING, SCHEMA))],
                                batch_size=7, mapped=mapped)
            try:
                while reader.next_chunk() is not None:
                    pass
            finally:
                reader.close()
    assert seen and set(seen) <= warmed
