"""An object handed over a pipe with its arrays out of band arrives as the default
pickling gives it: the same values, types and layouts, every array writable and its
own, however the pipe cuts the writes and reads."""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from driftwatch.batch import Batch
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.connectors.handover import PIPE_BYTES, frames, pipe, receive, write_frames


def _over_a_pipe(obj: Any, make_pipe: Any = os.pipe) -> Any:
    """``obj`` written to a pipe on a thread while this one reads it (a message larger
    than the pipe holds needs both at once)."""
    r, w = make_pipe()
    try:
        parts = frames(obj)
        writer = threading.Thread(target=write_frames, args=(w, parts))
        writer.start()
        got = receive(r)
        writer.join()
        return got
    finally:
        os.close(r)
        os.close(w)


def _layout(a: np.ndarray) -> tuple[Any, ...]:
    return (a.dtype.str, a.shape, a.flags.c_contiguous, a.flags.f_contiguous,
            a.flags.writeable)


def _arrays() -> st.SearchStrategy[np.ndarray]:
    """Arrays of the types a batch holds, of every layout: row-major, column-major, and
    of neither (a slice of rows of a column-major matrix, as the merger hands out)."""
    dtypes = st.sampled_from(["<f8", "<i8", "<i4", "|i1", "<u8", "<U9", "<U1", "|b1"])
    base = dtypes.flatmap(lambda d: hnp.arrays(
        d, hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=40)))
    return st.tuples(base, st.sampled_from(["C", "F", "rows", "readonly"]), st.integers(0, 5)
                     ).map(_shaped)


def _shaped(args: tuple[np.ndarray, str, int]) -> np.ndarray:
    a, how, cut = args
    if how == "F":
        return np.asfortranarray(a)
    if how == "rows":
        return np.asfortranarray(a)[cut:]
    if how == "readonly":
        a = a.copy()
        a.flags.writeable = False
    return a


@settings(max_examples=150, deadline=None)
@given(arrays=st.lists(_arrays(), max_size=6))
def test_arrays_arrive_as_the_default_pickling_gives_them(arrays: list[np.ndarray]) -> None:
    got = _over_a_pipe({"arrays": arrays, "n": len(arrays)})
    plain = pickle.loads(pickle.dumps({"arrays": arrays, "n": len(arrays)}, protocol=4))
    assert got["n"] == plain["n"]
    for a, g, p in zip(arrays, got["arrays"], plain["arrays"], strict=True):
        assert np.array_equal(g, a, equal_nan=a.dtype.kind == "f")
        # the default pickling makes every array writable: a read-only one too
        assert _layout(g) == _layout(p)
    for i, g in enumerate(got["arrays"]):  # each its own memory
        for h in got["arrays"][i + 1:]:
            assert not np.shares_memory(g, h)


def test_a_poll_larger_than_the_pipe_arrives_whole() -> None:
    n = 200_000  # about 20 MB: hundreds of the pipe's fills
    rng = np.random.default_rng(7)
    batch = Batch.build("predictions", n=n, n_numeric=3, n_categorical=2,
                        ids=np.array([f"A{i:08d}" for i in range(n)]),
                        event_time=rng.random(n),
                        numeric=np.asfortranarray(rng.random((n + 5, 3)))[5:],
                        categorical=rng.integers(0, 9, (n, 2)).astype(np.int32),
                        metrics={"revenue": rng.random(n)}, source="p.jsonl")
    bad = [BadRecord("invalid_json", "cut short", "p.jsonl", 3, b'{"a": ')]
    polled = Polled([batch], bad, {"p.jsonl": n + 1}, 123, np.zeros(n, np.intp),
                    np.array([2]))
    got = _over_a_pipe(("poll", polled))
    assert got[0] == "poll"
    out = got[1]
    assert (out.bad, out.positions, out.bytes_read) == (bad, {"p.jsonl": n + 1}, 123)
    assert out.order.tolist() == polled.order.tolist() and out.bad_at.tolist() == [2]
    b = out.batches[0]
    for f in ("ids", "keys", "event_time", "position", "numeric", "categorical", "score",
              "model_version", "decision", "segment", "label", "exposure"):
        u, v = getattr(b, f), getattr(batch, f)
        assert np.array_equal(u, v, equal_nan=u.dtype.kind == "f"), f
    assert b.metrics["revenue"].tolist() == batch.metrics["revenue"].tolist()
    assert (b.stream, b.source) == ("predictions", "p.jsonl")


def _granted(fd: int) -> int | None:
    """The pipe's capacity, where the system says (Linux)."""
    try:
        import fcntl

        return int(fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ))
    except (ImportError, AttributeError):
        return None


def _max_pipe() -> int:
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            return int(f.read())
    except OSError:
        return 0


def test_the_pipe_holds_a_poll_where_the_system_lets_it_grow() -> None:
    r, w = pipe()
    try:
        size = _granted(w)
        if size is None:  # no way to ask (not Linux): a plain pipe
            return
        if _max_pipe() >= min(PIPE_BYTES):
            assert size >= min(PIPE_BYTES) > 64 << 10
            assert size in PIPE_BYTES or size >= max(PIPE_BYTES)
        # a message of the pipe's size goes in one write, with nobody reading yet
        os.set_blocking(w, False)
        assert os.write(w, b"x" * size) == size
    finally:
        os.close(r)
        os.close(w)


def test_a_message_larger_than_a_grown_pipe_arrives_whole() -> None:
    sent = {"a": np.arange(3 * max(PIPE_BYTES) // 8, dtype=np.int64), "b": "tail"}
    got = _over_a_pipe(sent, pipe)
    assert got["b"] == "tail" and np.array_equal(got["a"], sent["a"])


def test_objects_without_arrays_and_arrays_of_objects_go_in_the_pickle() -> None:
    sent = ("error", (b"\x80\x05payload", "SourceError: cut", True),
            np.array(["a", None], dtype=object), np.float64(2.5))
    got = _over_a_pipe(sent)
    assert got[:2] == sent[:2]
    assert got[2].tolist() == ["a", None] and got[3] == 2.5


def test_a_pipe_that_ends_before_or_within_a_message_says_so() -> None:
    r, w = os.pipe()
    os.close(w)
    with pytest.raises(EOFError, match="before a message"):
        receive(r)
    os.close(r)
    parts = frames({"a": np.arange(1000)})
    whole = b"".join(bytes(memoryview(p).cast("B")) for p in parts)
    for cut in (3, len(whole) // 2, len(whole) - 1):
        r, w = os.pipe()
        os.write(w, whole[:cut])
        os.close(w)
        with pytest.raises(EOFError):
            receive(r)
        os.close(r)


def test_a_shared_layout_arrives_as_the_receivers_own_inside_every_sketch() -> None:
    """A judge's windows keep the profile's layout itself (the stacked pass checks it by
    identity): every sketch, however deep, points at the receiver's object; a plain
    receive of such a message says what it needs instead of guessing."""
    from driftwatch.windows.sketch import Sketch, SketchLayout

    layout = SketchLayout.fit(numeric_names=("x",), numeric=np.linspace(0, 1, 50)[:, None])
    sketches = [Sketch.empty(layout) for _ in range(3)]
    got = _over_a_pipe_shared({"windows": sketches, "again": sketches[0]}, (layout,))
    assert all(s.layout is layout for s in got["windows"])
    assert got["again"] is got["windows"][0]
    r, w = os.pipe()
    write_frames(w, frames(sketches, shared=(layout,)))
    with pytest.raises(pickle.UnpicklingError, match="receiver's own"):
        receive(r)
    os.close(r)
    os.close(w)


def _over_a_pipe_shared(obj: Any, shared: tuple[Any, ...]) -> Any:
    r, w = os.pipe()
    try:
        parts = frames(obj, shared=shared)
        writer = threading.Thread(target=write_frames, args=(w, parts))
        writer.start()
        got = receive(r, shared=shared)
        writer.join()
        return got
    finally:
        os.close(r)
        os.close(w)
