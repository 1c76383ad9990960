"""A CSV stream's chunks say how many bytes of the file they stand for, as JSON lines'
do: replay's progress bar and the daemon's bytes-read count add them up. They said 0 until
the file was done, so a 5-million-row CSV replay sat at 0% to its end. pyarrow reads tens
of MB ahead of the rows it hands out, so a chunk's share is the bytes read times the share
of the lines read that are handed out; in the file's own (compressed) bytes for gzip."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors import readers
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.mapping import FieldPath, StreamMapping, TimeField
from driftwatch.connectors.readers import FileReader
from driftwatch.schema import FeatureSchema

SCHEMA = FeatureSchema(numeric=("x",), categorical=(), levels=())
MAPPING = StreamMapping(name="predictions", event_id=FieldPath.parse("id"),
                        event_time=TimeField(FieldPath.parse("ts")), features=None,
                        score=FieldPath.parse("s"))


def _write(path: Path, rows: int) -> None:
    x = np.random.default_rng(rows).normal(size=rows)  # numbers gzip cannot squeeze away
    text = "id,ts,x,s\n" + "".join(f"e{i},{1_700_000_000 + i},{x[i]:.6f},0.5\n"
                                   for i in range(rows))
    if path.suffix == ".gz":
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        path.write_text(text)


def _sizes(path: Path, batch_size: int) -> list[int]:
    reader = FileReader(path, path.name, "csv", [(0, Decoder(MAPPING, SCHEMA))],
                        batch_size=batch_size)
    out = []
    try:
        while (chunk := reader.next_chunk()) is not None:
            out.append(chunk.nbytes)
    finally:
        reader.close()
    return out


def _check(path: Path, rows: int, batch: int, slack: int) -> None:
    sizes = _sizes(path, batch)
    size = path.stat().st_size
    assert all(n >= 0 for n in sizes)
    assert size - 64 <= sum(sizes) <= size  # the whole file, to within its last line
    full = rows // batch  # chunks before the last hold a batch each
    if full >= 4:
        # no chunk stands for the read-ahead: each about its batch's share of the file
        # (``slack``: what a read takes at once, a gzip stream's compressed block)
        assert max(sizes[:full]) <= 3 * size * batch / rows + slack
        half = sum(sizes[: full // 2])  # about a quarter of the file at least
        assert 0.5 * size * (full // 2) * batch / rows - slack <= half <= 0.6 * size + slack


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(50, 3_000), batch=st.integers(7, 400))
def test_chunks_share_out_the_file_as_they_go(tmp_path_factory, monkeypatch, rows,
                                              batch) -> None:
    monkeypatch.setattr(readers, "_READ", 1 << 12)  # pyarrow's blocks: many per file
    path = tmp_path_factory.mktemp("csv") / "p.csv"
    _write(path, rows)
    _check(path, rows, batch, 1 << 13)


def test_gzip_chunks_share_out_its_compressed_bytes(tmp_path) -> None:
    path = tmp_path / "p.csv.gz"
    _write(path, 200_000)
    assert path.stat().st_size > 1 << 20
    _check(path, 200_000, 10_000, 1 << 17)
