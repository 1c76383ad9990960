"""A JSON-lines file read through a mapping (``FileReader(mapped=True)``, as the reader
process reads) gives what reads give: the same chunks, batches, dead letters with their
lines and raw bytes, lines and byte counts, for any mix of lines, batch size, skipped
lines (a resume) and read size; after the mapping's end it goes on reading (bytes
appended meanwhile); a file that shrinks under it is an error, not a crash; and its
mapping is gone once it is closed."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors import readers
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonscan import scanner_for
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.readers import Chunk, FileReader
from driftwatch.errors import SourceError
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("x",), categorical=(), levels=())
MAPPING = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                        event_time=TimeField(FieldPath.parse("ts")), features=None,
                        score=FieldPath.parse("s"))
TOPIC_MAPPING = dataclasses.replace(MAPPING, topic="preds")
scanner_for({}, {}, wait=True)  # its loops loaded, so a decoder here scans its blocks

_RECORD = st.builds(lambda i, x: orjson.dumps({"id": f"e{i}", "ts": 1_700_000_000 + i, "x": x,
                                               "s": 0.5}),
                    st.integers(0, 10**6), st.floats(-1e6, 1e6))
_LINE = st.one_of(
    _RECORD,
    st.sampled_from([b"", b"   ", b"\t", b"{not json", b'{"id": "z"}', b"[1]", b"\xff\xfe"]),
    # over the message cap (patched to 300 bytes below), and over a block (patched too)
    st.integers(250, 2_000).map(lambda n: b'{"id": "long", "pad": "' + b"q" * n + b'"}'),
)


def _recording(line: bytes, offset: int) -> bytes:
    """``line`` as a Kafka recording's value (text when it is UTF-8), at ``offset``."""
    try:
        value: object = line.decode()
    except UnicodeDecodeError:
        value = None
    return orjson.dumps({"topic": "preds", "partition": 0, "offset": offset,
                         "timestamp": 1_700_000_000_000 + offset, "value": value})


def _same_batch(a: Batch, b: Batch) -> None:
    for f in dataclasses.fields(Batch):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, dict):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            np.testing.assert_array_equal(x, y)
            assert np.asarray(x).dtype == np.asarray(y).dtype
        else:
            assert x == y, f.name


def _same_chunk(a: Chunk, b: Chunk) -> None:
    assert a.parts.keys() == b.parts.keys()
    for s in a.parts:
        _same_batch(a.parts[s][0], b.parts[s][0])
        np.testing.assert_array_equal(a.parts[s][1], b.parts[s][1])
    assert a.bad == b.bad  # reason, detail, source, position, raw bytes, partition, stream
    assert all(type(x.raw) is bytes for x in b.bad)
    assert (a.bad_lines, a.end_line, a.nbytes) == (b.bad_lines, b.end_line, b.nbytes)


def _reader(path: Path, fmt: str, batch_size: int, skip: int, mapped: bool,
            **decoder: bool) -> FileReader:
    mapping = TOPIC_MAPPING if fmt == "kafka-recording" else MAPPING
    return FileReader(path, path.name, fmt, [(0, Decoder(mapping, SCHEMA, **decoder))],
                      batch_size=batch_size, skip_lines=skip, mapped=mapped)


def _chunks(reader: FileReader) -> list[tuple[Chunk, int, bool]]:
    out = []
    try:
        while (chunk := reader.next_chunk()) is not None:
            out.append((chunk, reader.line, reader.exhausted))
    finally:
        reader.close()
    return out


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(_LINE, st.booleans()), max_size=60),
       last_newline=st.booleans(), batch_size=st.integers(1, 9), skip=st.integers(0, 12),
       read=st.sampled_from([1, 7, 64, 512, 1 << 22]), recording=st.booleans())
def test_a_mapped_file_reads_as_reads_do(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        lines: list[tuple[bytes, bool]], last_newline: bool, batch_size: int, skip: int,
        read: int, recording: bool) -> None:
    monkeypatch.setattr(readers, "_READ", read)
    monkeypatch.setattr(readers, "MAX_BLOCK_BYTES", 1_024)
    monkeypatch.setattr(readers, "MAX_MESSAGE_BYTES", 300)
    monkeypatch.setattr("driftwatch.connectors.decode.MAX_MESSAGE_BYTES", 300)
    if recording:
        lines = [(_recording(line, k), crlf) for k, (line, crlf) in enumerate(lines)]
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line, crlf in lines)
    if lines and not last_newline:
        data = data.rstrip(b"\r\n")
    path = tmp_path_factory.mktemp("mapped") / "p.jsonl"
    path.write_bytes(data)
    fmt = "kafka-recording" if recording else "jsonl"
    read_chunks = _chunks(_reader(path, fmt, batch_size, skip, mapped=False))
    mapped = _reader(path, fmt, batch_size, skip, mapped=True)
    if not skip:  # (skipping to the end leaves the mapping for reads at its end)
        assert (mapped._map is not None) == (len(data) > 0)
    mapped_chunks = _chunks(mapped)
    assert mapped._map is None
    assert len(mapped_chunks) == len(read_chunks)
    for (a, line_a, end_a), (b, line_b, end_b) in zip(read_chunks, mapped_chunks, strict=True):
        _same_chunk(a, b)
        assert (line_a, end_a) == (line_b, end_b)


_ODD = st.sampled_from([
    b'{"id": "n", "ts": 1700000000, "x": NaN, "s": 0.5}',  # pyarrow's screen: NaN
    b'{"id": "i", "ts": 1700000000, "x": -Infinity, "s": 0.5}',
    b'{"id": "\\u00e9", "ts": 1700000000, "x": 1, "s": 0.5}',  # an escape: not scanned
    b'{"id": "\xc3\xa9", "ts": 1700000000, "x": 1, "s": 0.5}',
    b'{"id": "\xff", "ts": 1700000000, "x": 1, "s": 0.5}',  # invalid UTF-8
    b'{"id": 7, "ts": "2024-01-01T00:00:00Z", "x": "1.5", "s": 0.5}',
    b'\x00\x00\x00\x00\x01{"id": "framed", "ts": 1700000000, "x": 1, "s": 0.5}',
    b'  {"id": "pad", "ts": 1700000000, "x": 1, "s": 0.5}  ',
])


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_RECORD, _RECORD, _RECORD, _LINE, _ODD), min_size=30,
                      max_size=400),
       crlf=st.booleans(), batch_size=st.integers(30, 250), skip=st.integers(0, 40),
       decoder=st.sampled_from([{}, {"scan": False}, {"block_parse": False}]))
def test_every_decoding_path_reads_a_mapped_block_as_bytes(
        tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], crlf: bool,
        batch_size: int, skip: int, decoder: dict[str, bool]) -> None:
    """Blocks big enough for the compiled scanner, pyarrow's parser (``scan=False``) or
    orjson alone (``block_parse=False``), with lines each of them refuses."""
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line in lines)
    path = tmp_path_factory.mktemp("mapped") / "p.jsonl"
    path.write_bytes(data)
    read_chunks = _chunks(_reader(path, "jsonl", batch_size, skip, False, **decoder))
    mapped_chunks = _chunks(_reader(path, "jsonl", batch_size, skip, True, **decoder))
    assert len(mapped_chunks) == len(read_chunks)
    for (a, line_a, end_a), (b, line_b, end_b) in zip(read_chunks, mapped_chunks, strict=True):
        _same_chunk(a, b)
        assert (line_a, end_a) == (line_b, end_b)


def _rec(i: int) -> bytes:
    return orjson.dumps({"id": f"e{i}", "ts": 1_700_000_000 + i, "x": 1.0, "s": 0.5})


def _ids(chunks: list[tuple[Chunk, int, bool]]) -> list[str]:
    return [i for c, _, _ in chunks for b, _ in c.parts.values() for i in b.ids.tolist()]


def test_lines_appended_after_the_mapping_are_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "_READ", 64)
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(_rec(i) + b"\n" for i in range(4)))
    reader = _reader(path, "jsonl", 2, 0, mapped=True)
    first = reader.next_chunk()
    assert first is not None and reader._map is not None
    with path.open("ab") as f:
        f.write(b"".join(_rec(i) + b"\n" for i in range(4, 7)))
    assert _ids([(first, 0, False), *_chunks(reader)]) == [f"e{i}" for i in range(7)]


def test_a_file_that_shrinks_under_its_mapping_is_an_error_not_a_crash(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "_READ", 64)
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(_rec(i) + b"\n" for i in range(40)))
    reader = _reader(path, "jsonl", 2, 0, mapped=True)
    assert reader.next_chunk() is not None
    with path.open("r+b") as f:
        f.truncate(10)
    with pytest.raises(SourceError, match="shrank to 10 bytes while it was read"):
        _chunks(reader)
    assert reader._map is None


def test_a_file_cut_after_the_bytes_held_reads_on_as_reads_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "_READ", 1 << 10)
    path = tmp_path / "p.jsonl"

    def cut_while_read(mapped: bool) -> list[str]:
        path.write_bytes(b"".join(_rec(i) + b"\n" for i in range(100)))
        reader = _reader(path, "jsonl", 2, 0, mapped=mapped)
        first = reader.next_chunk()
        assert first is not None and reader._len == 1 << 10
        with path.open("r+b") as f:
            f.truncate(reader._len + 3)  # the bytes scanned (or read) stay
        return _ids([(first, 0, False), *_chunks(reader)])

    assert cut_while_read(mapped=True) == cut_while_read(mapped=False)


def test_gzip_and_empty_files_are_read_not_mapped(tmp_path: Path) -> None:
    gz = tmp_path / "p.jsonl.gz"
    gz.write_bytes(gzip.compress(_rec(0) + b"\n"))
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    for path, ids in ((gz, ["e0"]), (empty, [])):
        reader = _reader(path, "jsonl", 2, 0, mapped=True)
        assert reader._map is None
        assert _ids(_chunks(reader)) == ids


def test_a_closed_reader_leaves_no_mapping(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(_rec(i) + b"\n" for i in range(10)))
    reader = _reader(path, "jsonl", 3, 0, mapped=True)
    assert reader.next_chunk() is not None
    maps = Path("/proc/self/maps")
    if maps.exists():
        assert str(path) in maps.read_text()
    reader.close()
    assert reader._map is None
    if maps.exists():
        assert str(path) not in maps.read_text()


def _mapped_rss_kib(path: Path) -> int:
    """The resident KiB of ``path``'s mappings in this process (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if "-" in line.split(" ", 1)[0]:  # a mapping's header line
            inside = line.rstrip().endswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux's smaps")
def test_pages_read_leave_the_resident_set(tmp_path: Path) -> None:
    """The mapping lets go of the pages it has read: a 48 MB recording had left the
    reader process 48 MB larger (a 368 MB one, 368 MB), though nothing reads them again."""
    path = tmp_path / "p.jsonl"
    line = _rec(7) + b"\n"
    path.write_bytes(line * (48 * 2**20 // len(line)))
    reader = _reader(path, "jsonl", 5000, 0, mapped=True)
    try:
        peak = 0
        while reader.next_chunk() is not None:
            peak = max(peak, _mapped_rss_kib(path))
    finally:
        reader.close()
    assert 0 < peak < 16 * 1024, peak  # a few stretches of 4 MiB at most, not 48 MiB
