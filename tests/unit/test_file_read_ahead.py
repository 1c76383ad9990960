"""Reading ahead on a worker thread changes nothing a poll hands out.

A :class:`~driftwatch.connectors.file.FileSource` with ``read_ahead`` decodes each file's
next chunk while the caller works. Every poll must hold the same batches, order,
positions and bad records as the same source read synchronously: with several files
sharing one stream's decoder, bad lines, any poll size, and a resume in the middle.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.base import Polled
from driftwatch.connectors.config import Connector
from driftwatch.connectors.file import FileSource
from driftwatch.errors import SourceError
from driftwatch.testing.credit import credit_connector, credit_schema
from driftwatch.testing.generator import (
    CreditStream,
    generate,
    outcome_records,
    prediction_records,
)
from driftwatch.testing.scenarios import scenario_plan

FIELDS = ("ids", "event_time", "position", "numeric", "categorical", "score", "decision",
          "segment", "label", "exposure", "source")  # fmt: skip


@pytest.fixture(scope="module")
def stream() -> CreditStream:
    return generate(scenario_plan("demo", n_events=900, days=20), seed=5, delay_days=(1, 4))


def _files(tmp: Path, s: CreditStream, cut: int, bad_every: int) -> Connector:
    """Predictions split over two files at ``cut`` (one decoder reads both), outcomes in
    one, every ``bad_every``-th prediction line broken."""
    lines = [orjson.dumps(r) for r in prediction_records(s)]
    for i in range(3, len(lines), bad_every):
        lines[i] = b'{"application_id": "x", "ts": "late"' if i % 2 else b"[1, 2]"
    (tmp / "p1.jsonl").write_bytes(b"\n".join(lines[:cut]) + b"\n")
    (tmp / "p2.jsonl").write_bytes(b"\n".join(lines[cut:]) + b"\n")
    (tmp / "o.jsonl").write_bytes(b"\n".join(orjson.dumps(r) for r in outcome_records(s)))
    return credit_connector("p*.jsonl", "o.jsonl", base_dir=tmp)


def _polls(src: FileSource, sizes: list[int]) -> list[Polled]:
    out, k = [], 0
    while (p := src.poll(sizes[k % len(sizes)])) is not None:
        out.append(p)
        k += 1
    return out


def _same(a: list[Polled], b: list[Polled]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.positions == y.positions
        assert [(r.reason, r.position, r.source, r.detail) for r in x.bad] == [
            (r.reason, r.position, r.source, r.detail) for r in y.bad]
        assert (x.order is None) == (y.order is None)
        if x.order is not None:
            assert np.array_equal(x.order, y.order)
        assert [bx.stream for bx in x.batches] == [by.stream for by in y.batches]
        for bx, by in zip(x.batches, y.batches, strict=True):
            for f in FIELDS:
                u, v = getattr(bx, f), getattr(by, f)
                if isinstance(u, np.ndarray):
                    assert np.array_equal(u, v, equal_nan=u.dtype.kind == "f"), f
                else:
                    assert u == v, f


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 700), sizes=st.lists(st.integers(1, 900), min_size=1, max_size=4),
       cut=st.integers(0, 900), bad_every=st.integers(5, 400), resume_after=st.integers(0, 6))
def test_read_ahead_hands_out_what_a_synchronous_read_does(
    tmp_path_factory: pytest.TempPathFactory, stream: CreditStream, batch: int, sizes: list[int],
    cut: int, bad_every: int, resume_after: int,
) -> None:
    c = _files(tmp_path_factory.mktemp("ra"), stream, cut, bad_every)
    plain = _polls(FileSource(c, credit_schema(), batch_size=batch, read_ahead=False), sizes)
    ahead_src = FileSource(c, credit_schema(), batch_size=batch, read_ahead=True)
    head = []
    for k in range(resume_after):  # a few polls, then close and resume where they ended
        p = ahead_src.poll(sizes[k % len(sizes)])
        if p is None:
            break
        head.append(p)
    saved = ahead_src.positions
    ahead_src.close()
    resumed = FileSource(c, credit_schema(), batch_size=batch, read_ahead=True)
    resumed.seek(saved)
    sizes_rest = sizes[len(head) % len(sizes):] + sizes[: len(head) % len(sizes)]
    ahead = head + _polls(resumed, sizes_rest)
    resumed.close()
    _same(plain, ahead)


def _readers_alive() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("driftwatch-read")]


def test_close_stops_the_worker(tmp_path: Path, stream: CreditStream) -> None:
    before = set(_readers_alive())
    src = FileSource(_files(tmp_path, stream, 400, 50), credit_schema(), batch_size=100)
    assert src.poll(150) is not None
    assert set(_readers_alive()) - before  # reading ahead while the caller works
    src.close()
    assert not set(_readers_alive()) - before
    assert src.poll(10_000) is not None  # a later poll reopens the files and goes on


def test_a_read_error_surfaces_from_poll(tmp_path: Path, stream: CreditStream) -> None:
    import gzip

    before = set(_readers_alive())
    lines = b"\n".join(orjson.dumps(r) for r in prediction_records(stream)) + b"\n"
    data = gzip.compress(lines)
    (tmp_path / "p.jsonl.gz").write_bytes(data[: len(data) // 2])  # cut mid-stream
    (tmp_path / "o.jsonl").write_bytes(b"")
    c = credit_connector("p.jsonl.gz", "o.jsonl", base_dir=tmp_path)
    src = FileSource(c, credit_schema(), batch_size=50, read_ahead=True)
    with pytest.raises(SourceError, match=r"p\.jsonl\.gz"):
        while src.poll() is not None:
            pass
    src.close()  # after a failed read too: the worker is stopped
    assert not set(_readers_alive()) - before



def test_the_read_ahead_worker_leaves_the_loop_a_core(
        tmp_path: Path, stream: CreditStream, monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's scans leave a core to the loop that judges (two cores: one part)."""
    from driftwatch.connectors import file as file_source
    from driftwatch.connectors import jsonscan

    left: set[int] = set()
    real = file_source._read_chunk

    def spy(reader: object) -> object:
        if threading.current_thread().name.startswith("driftwatch-read"):
            left.add(getattr(jsonscan._here, "left", 0))
        return real(reader)  # type: ignore[arg-type]

    monkeypatch.setattr(file_source, "_read_chunk", spy)
    conn = _files(tmp_path, stream, 400, 10**9)
    src = FileSource.from_paths(conn, credit_schema(), sorted(tmp_path.glob("*.jsonl")))
    src.read_ahead = True
    _polls(src, [100])
    src.close()
    assert left == {1}
