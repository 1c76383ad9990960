"""A file reader hands the decoder the line ends it found while reading, and the decoder
uses them instead of looking again: the batches and dead letters are those of the whole
file decoded in one block, for any mix of lines and any batch size."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.jsonblock import Lines
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.readers import FileReader
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("x",), categorical=(), levels=())
MAPPING = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                        event_time=TimeField(FieldPath.parse("ts")), features=None,
                        score=FieldPath.parse("s"))

_LINE = st.one_of(
    st.builds(lambda i, x: orjson.dumps({"id": f"e{i}", "ts": 1_700_000_000 + i, "x": x,
                                         "s": 0.5}),
              st.integers(0, 10**6), st.floats(-1e6, 1e6)),
    st.sampled_from([b"", b"   ", b"\t", b"{not json", b'{"id": "z"}', b"[1]"]),
)


def _decoded(batch_and_bad: tuple) -> tuple[list[str], list[float], list[tuple[str, int]]]:
    batch, bad = batch_and_bad
    return batch.ids.tolist(), batch.numeric[:, 0].tolist(), [(b.reason, b.position)
                                                              for b in bad]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_LINE, st.booleans()), max_size=40), st.booleans(),
       st.integers(1, 7))
def test_a_reader_s_batches_are_the_whole_file_s(
        tmp_path: Path, lines: list[tuple[bytes, bool]], last_newline: bool,
        batch_size: int) -> None:
    data = b"".join(line + (b"\r\n" if crlf else b"\n") for line, crlf in lines)
    if lines and not last_newline:
        data = data.rstrip(b"\r\n")
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    want = _decoded(Decoder(MAPPING, SCHEMA).decode_block(data, source="p.jsonl"))
    reader = FileReader(path, "p.jsonl", "jsonl", [(0, Decoder(MAPPING, SCHEMA))],
                        batch_size=batch_size)
    ids: list[str] = []
    xs: list[float] = []
    bad: list[tuple[str, int]] = []
    try:
        while (chunk := reader.next_chunk()) is not None:
            for batch, _ in chunk.parts.values():
                ids += batch.ids.tolist()
                xs += batch.numeric[:, 0].tolist()
            bad += [(b.reason, b.position) for b in chunk.bad]
    finally:
        reader.close()
    assert (ids, xs, bad) == want


def test_given_line_ends_are_the_ones_it_would_find() -> None:
    block = b'{"a": 1}\r\n\n  \n{"b": 2}'
    nl = np.flatnonzero(np.frombuffer(block, np.uint8) == 10)
    (found, no_found), (given_, no_given) = Lines.from_block(block), Lines.from_block(block, nl)
    assert found.starts.tolist() == given_.starts.tolist() == [0, 14]
    assert found.ends.tolist() == given_.ends.tolist() == [8, 22]
    assert no_found.tolist() == no_given.tolist() == [0, 3]
