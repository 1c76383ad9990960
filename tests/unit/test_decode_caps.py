"""Caps that keep decoding memory bounded: id and text length, message size, block bytes.

Each refused record has its own reason (counted by reason and dead-lettered like any bad
record) and the records around it decode as if it were not there.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import orjson
import pytest

from driftwatch.connectors import readers
from driftwatch.connectors.decode import KEPT_BYTES, MAX_MESSAGE_BYTES, MAX_TEXT_CHARS, Decoder
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.readers import FileReader
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("income",), categorical=(), levels=())
MAPPING = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                        event_time=TimeField(FieldPath.parse("ts")), features=None,
                        score=FieldPath.parse("s"), segment=FieldPath.parse("seg"))


def _rec(i: int, **extra: object) -> bytes:
    return orjson.dumps({"id": f"e{i}", "ts": 1_704_067_200 + i, "income": 1.0, "s": 0.5,
                         "seg": "web", **extra})


def _lines(n: int = 100) -> list[bytes]:
    return [_rec(i) for i in range(n)]


def _decoder() -> Decoder:
    return Decoder(MAPPING, SCHEMA)


@pytest.mark.parametrize("how", ["block", "payloads"])
def test_a_100k_character_id_is_refused_and_the_batch_stays_narrow(how: str) -> None:
    lines = _lines()
    lines[5] = _rec(5, id="x" * 100_000)
    dec = _decoder()
    if how == "block":
        batch, bad = dec.decode_block(b"\n".join(lines) + b"\n", source="p.jsonl")
    else:
        batch, bad = dec.decode(lines, source="topic", positions=np.arange(100))
    assert [(b.reason, b.position) for b in bad] == [("id_too_long", 6 if how == "block" else 5)]
    assert bad[0].detail == ("event_id (id) has 100000 characters, over the "
                             f"{MAX_TEXT_CHARS} limit")
    assert len(batch) == 99 and batch.ids.dtype.itemsize <= 4 * MAX_TEXT_CHARS
    assert "e6" in batch.ids.tolist() and "e4" in batch.ids.tolist()


def test_the_id_cap_is_exact() -> None:
    lines = [_rec(0, id="a" * MAX_TEXT_CHARS), _rec(1, id="b" * (MAX_TEXT_CHARS + 1))]
    batch, bad = _decoder().decode_block(b"\n".join(lines), source="p.jsonl")
    assert batch.ids.tolist() == ["a" * MAX_TEXT_CHARS]
    assert [b.reason for b in bad] == ["id_too_long"]


def test_the_cap_counts_characters_not_bytes() -> None:
    # 256 two-byte characters are 512 bytes and within the cap; one more is over it
    lines = [_rec(0, id="é" * MAX_TEXT_CHARS), _rec(1, id="日" * (MAX_TEXT_CHARS + 1)),
             _rec(2, id="e2")]
    batch, bad = _decoder().decode_block(b"\n".join(lines), source="p.jsonl")
    assert batch.ids.tolist() == ["é" * MAX_TEXT_CHARS, "e2"]
    assert [(b.reason, b.position) for b in bad] == [("id_too_long", 2)]


def test_a_long_segment_is_refused_too() -> None:
    lines = _lines(3)
    lines[1] = _rec(1, seg="z" * (MAX_TEXT_CHARS + 1))
    batch, bad = _decoder().decode_block(b"\n".join(lines), source="p.jsonl")
    assert [(b.reason, b.position) for b in bad] == [("text_too_long", 2)]
    assert bad[0].detail.startswith("segment has 257 characters")
    assert batch.ids.tolist() == ["e0", "e2"]


def test_a_message_over_the_size_cap_is_not_parsed_and_keeps_only_its_head() -> None:
    lines = _lines(4)
    lines[1] = _rec(1, pad="y" * (2 * MAX_MESSAGE_BYTES))
    lines[2] = _rec(2, pad="y" * (MAX_MESSAGE_BYTES - len(_rec(2, pad="")) ))  # exactly the cap
    assert len(lines[2]) == MAX_MESSAGE_BYTES
    batch, bad = _decoder().decode_block(b"\n".join(lines), source="p.jsonl")
    assert [(b.reason, b.position) for b in bad] == [("message_too_large", 2)]
    assert bad[0].detail == f"{len(lines[1])} bytes, over the {MAX_MESSAGE_BYTES} byte limit"
    assert bad[0].raw == lines[1][:KEPT_BYTES]
    assert batch.ids.tolist() == ["e0", "e2", "e3"]
    assert batch.position.tolist() == [1, 3, 4]


def test_large_and_small_bad_records_keep_their_order() -> None:
    lines = _lines(5)
    lines[1] = b"not json"
    lines[3] = _rec(3, pad="y" * (MAX_MESSAGE_BYTES + 1))
    batch, bad = _decoder().decode(lines, source="t", positions=np.arange(10, 15))
    assert [(b.reason, b.position) for b in bad] == [("invalid_json", 11),
                                                     ("message_too_large", 13)]
    assert batch.position.tolist() == [10, 12, 14]


def _reader(path: Path, batch_size: int) -> FileReader:
    return FileReader(path, "p.jsonl", "jsonl", [(0, _decoder())], batch_size=batch_size)


def _read_all(path: Path, batch_size: int) -> tuple[list[str], list[tuple[str, int]], list[int]]:
    r = _reader(path, batch_size)
    ids, bad, rows = [], [], []
    try:
        while (chunk := r.next_chunk()) is not None:
            for batch, _ in chunk.parts.values():
                ids += batch.ids.tolist()
                rows.append(len(batch))
            bad += [(b.reason, b.position) for b in chunk.bad]
            assert len(r._buf) <= readers.MAX_BLOCK_BYTES + 2 * readers._READ
    finally:
        r.close()
    return ids, bad, rows


def test_a_block_stops_at_its_byte_cap_not_its_line_count(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "MAX_BLOCK_BYTES", 1 << 21)  # 2 MiB
    monkeypatch.setattr(readers, "_READ", 1 << 16)
    lines = [_rec(i, pad="p" * 900_000) for i in range(8)]  # under the message cap each
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    ids, bad, rows = _read_all(path, batch_size=1000)
    assert ids == [f"e{i}" for i in range(8)] and bad == []
    assert rows == [2, 2, 2, 2]  # two whole 900 kB lines fit in 2 MiB: not 1000 lines


def test_a_line_longer_than_a_block_is_dead_lettered_without_being_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "MAX_BLOCK_BYTES", 1 << 21)
    monkeypatch.setattr(readers, "_READ", 1 << 16)
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wb") as f:  # 40 MiB of one line: gzip keeps the test file small
        f.write(_rec(0) + b"\n")
        f.write(b'{"id": "huge", "pad": "' + b"q" * (40 << 20) + b'"}\n')
        f.write(_rec(2) + b"\n")
    ids, bad, _ = _read_all(path, batch_size=1000)
    assert ids == ["e0", "e2"]
    assert bad == [("message_too_large", 2)]


def test_a_long_last_line_without_newline_is_dead_lettered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "MAX_BLOCK_BYTES", 1 << 21)
    path = tmp_path / "p.jsonl"
    path.write_bytes(_rec(0) + b"\n" + b"{" + b"q" * (3 << 20))
    ids, bad, _ = _read_all(path, batch_size=10)
    assert ids == ["e0"] and bad == [("message_too_large", 2)]


def test_a_text_line_that_starts_with_the_gzip_magic_is_a_bad_record(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\x1f\x8b not gzip at all\n" + _rec(1) + b"\n")
    ids, bad, _ = _read_all(path, batch_size=10)
    assert ids == ["e1"] and bad == [("invalid_json", 1)]
    real = tmp_path / "r.jsonl.gz"
    real.write_bytes(gzip.compress(_rec(0) + b"\n"))
    assert _read_all(real, batch_size=10)[0] == ["e0"]
