"""Binary checkpoints: trees of arrays round-trip, append-only tables are written
incrementally and restored whole, and the earlier SQLite/JSON format is still read."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.labels.store import KeyStore
from driftwatch.schema import FeatureSchema
from driftwatch.state import CheckpointStore
from driftwatch.statetree import Appended

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])

arrays = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.int64, np.int32, np.uint64, np.int8, np.bool_,
                           np.dtype(">f8")]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
leaves = st.none() | st.booleans() | st.integers(-2**62, 2**62) | st.text(max_size=5) \
    | st.floats(allow_nan=True, allow_infinity=True) | arrays
trees = st.recursive(leaves, lambda kids: st.lists(kids, max_size=4)
                     | st.dictionaries(st.text(max_size=4), kids, max_size=4), max_leaves=12)


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype.newbyteorder("=") == b.dtype.newbyteorder("=")
                and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


@SETTINGS
@given(tree=trees)
def test_any_tree_of_arrays_and_json_values_reads_back_exactly(tmp_path, tree):
    store = CheckpointStore(tmp_path / "cp", keep=1)
    store.save({"m": {"tree": tree}}, now=1.0)
    got = CheckpointStore(tmp_path / "cp").load().models["m"]["tree"]
    assert same(tree, got)


SCHEMA = FeatureSchema(numeric=("x", "y"), categorical=("c",), levels=(("a", "b"),))


@SETTINGS
@given(adds=st.lists(st.tuples(st.integers(0, 40), st.booleans()), min_size=1, max_size=12))
def test_the_labelled_buffer_is_written_incrementally_and_restored_whole(tmp_path, adds):
    """Rows arrive in lumps, some checkpoints in between: each restore holds exactly the
    rows the buffer held, and a checkpoint writes only the lump since the one before."""
    folder = tmp_path / f"cp{abs(hash(tuple(adds)))}"
    store = CheckpointStore(folder)
    buf = LabelledBuffer(SCHEMA, capacity=50)
    rng = np.random.default_rng(len(adds))
    for n, checkpoint in adds:
        buf.add(numeric=rng.normal(size=(n, 2)), categorical=rng.integers(-1, 3, (n, 1)),
                label=rng.integers(0, 2, n).astype(float), score=rng.uniform(size=n))
        if not checkpoint:
            continue
        held = store.capture("m").durable(buf._table)
        state = buf.to_dict(store.capture("m"))
        assert state["rows"].base == (held if held is not None and held >= buf.seq - len(buf)
                                      else buf.seq - len(buf))
        store.save({"m": {"buf": state}}, now=0.0)
        back = LabelledBuffer.from_dict(SCHEMA, CheckpointStore(folder).load().models["m"]["buf"])
        assert back.seq == buf.seq and back.frame().equals(buf.frame())
        assert back.to_dict() == buf.to_dict()


@SETTINGS
@given(ops=st.lists(st.tuples(st.sampled_from(["insert", "pop", "evict", "expire", "cp"]),
                              st.integers(1, 300)), min_size=1, max_size=25))
def test_a_key_store_restores_its_live_rows_in_order_across_compactions(tmp_path, ops):
    folder = tmp_path / f"ks{abs(hash(tuple(ops)))}"
    store = CheckpointStore(folder)
    ks = KeyStore({"time": np.float64, "v": np.int32})
    rng = np.random.default_rng(len(ops))
    next_key, t = 1, 0.0
    for op, n in [*ops, ("cp", 0)]:
        if op == "insert":
            keys = np.arange(next_key, next_key + n, dtype=np.uint64)
            next_key += n
            times = t + rng.integers(-5, 20, n).astype(float)  # mostly in order, some late
            t += n
            ks.insert(keys, {"time": times, "v": keys.astype(np.int32)})
        elif op == "pop":
            ks.pop(rng.integers(1, next_key + 1, n).astype(np.uint64))
        elif op == "evict":
            ks.evict_oldest(n, "time")
        elif op == "expire":
            ks.pop_where_below("time", t - n)
        else:
            store.save({"m": {"ks": ks.to_dict(store.capture("m"))}}, now=0.0)
            back = KeyStore.from_dict(CheckpointStore(folder).load().models["m"]["ks"])
            assert back.to_dict() == ks.to_dict() and len(back) == len(ks)
            ks = back  # go on from the restored store: the table carries on
    probe = np.arange(1, next_key, dtype=np.uint64)
    assert ks.contains(probe).sum() == len(ks)


def test_a_checkpoint_writes_only_the_rows_since_the_one_before(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    buf = LabelledBuffer(SCHEMA, capacity=10_000)

    def add(n: int) -> None:
        buf.add(numeric=np.ones((n, 2)), categorical=np.zeros((n, 1), np.int32),
                label=np.ones(n), score=np.ones(n))

    add(10_000)
    first = store.save({"m": {"b": buf.to_dict(store.capture("m"))}}, now=0.0)
    add(100)
    nxt = store.save({"m": {"b": buf.to_dict(store.capture("m"))}}, now=1.0)
    row = 2 * 8 + 4 + 5 * 8  # bytes of one row
    assert first.written_bytes > 10_000 * row > 100 * row * 50 > nxt.written_bytes
    assert nxt.size_bytes > 10_000 * row
    saved = CheckpointStore(tmp_path / "cp").load().models["m"]["b"]
    back = LabelledBuffer.from_dict(SCHEMA, saved)
    assert back.frame().equals(buf.frame())


def test_many_small_checkpoints_keep_few_segment_files(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    for i in range(60):
        tid_rows = Appended("t", 0, i + 1, store.capture("m").durable("t") or 0, {})
        store.save({"m": {"t": Appended("t", 0, i + 1, tid_rows.base,
                                        {"v": np.arange(tid_rows.base, i + 1.0)})}}, now=i)
    segs = [p for p in (tmp_path / "cp").iterdir() if p.suffix == ".seg"]
    assert len(segs) <= 2 * 16  # two checkpoints kept, each naming at most 16
    got = CheckpointStore(tmp_path / "cp").load().models["m"]["t"]
    assert got.columns["v"].tolist() == list(range(60))


def test_a_merge_of_segments_keeps_only_the_rows_still_held(tmp_path):
    """A table that grows at the back faster than rows fall out at the front: once its
    segments are merged, the one segment left starts at the oldest held row (no dead
    rows carried on), and every restore gives exactly the rows held."""
    store = CheckpointStore(tmp_path / "cp", keep=1)
    merges = 0
    for i in range(40):
        start, stop = 3 * i + 1, 10 * (i + 1)
        base = store.capture("m").durable("t") or start
        store.save({"m": {"t": Appended("t", start, stop, base,
                                        {"v": np.arange(base, stop, dtype=float)})}}, now=i)
        seq = CheckpointStore.manifest_seqs(tmp_path / "cp")[0]
        body = (tmp_path / "cp" / f"cp-{seq:08d}.json").read_bytes().rsplit(b"\n", 2)[0]
        (segs,) = json.loads(body)["models"]["m"]["tables"].values()
        assert len(segs) <= 16 and segs[-1]["stop"] == stop
        if i and len(segs) == 1:
            merges += 1
            assert segs[0]["start"] == start
        got = CheckpointStore(tmp_path / "cp").load().models["m"]["t"]
        assert got.columns["v"].tolist() == list(range(start, stop))
    assert merges >= 2


def _legacy_file(path, states: list[dict]) -> None:
    """A state folder as the earlier version left it: JSON parts in SQLite."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE checkpoints (seq INTEGER PRIMARY KEY, created REAL NOT NULL,
                                  format INTEGER NOT NULL, meta TEXT NOT NULL);
        CREATE TABLE parts (seq INTEGER NOT NULL, model TEXT NOT NULL, digest TEXT NOT NULL,
                            payload BLOB NOT NULL, PRIMARY KEY (seq, model));""")
    for seq, models in enumerate(states, start=1):
        db.execute("INSERT INTO checkpoints VALUES (?, ?, 2, ?)", (seq, float(seq), "{}"))
        for name, state in models.items():
            blob = zlib.compress(json.dumps(state).encode(), 1)
            db.execute("INSERT INTO parts VALUES (?, ?, ?, ?)",
                       (seq, name, hashlib.sha256(blob).hexdigest(), blob))
    db.commit()
    db.close()


def test_a_checkpoint_of_the_earlier_format_is_restored_then_replaced(tmp_path):
    buf = LabelledBuffer(SCHEMA, capacity=5)
    buf.add(numeric=np.arange(6.0).reshape(3, 2), categorical=np.zeros((3, 1), np.int32),
            label=np.ones(3), score=np.full(3, 0.5))
    legacy = tmp_path / "checkpoint.sqlite3"
    _legacy_file(legacy, [{"m": {"i": 1}}, {"m": {"i": 2, "buf": buf.to_dict()}}])
    store = CheckpointStore(tmp_path / "checkpoints", legacy=legacy)
    cp = store.load()
    assert cp.seq == 2 and cp.models["m"]["i"] == 2
    back = LabelledBuffer.from_dict(SCHEMA, cp.models["m"]["buf"])
    assert back.frame().equals(buf.frame())
    info = store.save({"m": {"i": 3, "buf": back.to_dict(store.capture("m"))}}, now=3.0)
    assert info.seq == 3 and not legacy.exists()  # migrated: the old file is gone
    again = CheckpointStore(tmp_path / "checkpoints", legacy=legacy).load()
    assert again.seq == 3
    assert LabelledBuffer.from_dict(SCHEMA, again.models["m"]["buf"]).frame().equals(buf.frame())


def test_a_damaged_earlier_format_checkpoint_falls_back_to_the_one_before(tmp_path):
    legacy = tmp_path / "checkpoint.sqlite3"
    _legacy_file(legacy, [{"m": {"i": 1}}, {"m": {"i": 2}}])
    db = sqlite3.connect(legacy)
    db.execute("UPDATE parts SET payload = ? WHERE seq = 2", (b"garbage",))
    db.commit()
    db.close()
    assert CheckpointStore(tmp_path / "cp", legacy=legacy).load().models["m"] == {"i": 1}


def test_a_table_the_store_does_not_hold_is_refused(tmp_path):
    store = CheckpointStore(tmp_path / "cp")
    with pytest.raises(Exception, match="not held"):
        store.save({"m": {"t": Appended("t", 0, 5, 3, {"v": np.ones(2)})}}, now=0.0)


@pytest.mark.parametrize("segment", [None, "channel"])
def test_a_monitor_restored_from_binary_checkpoints_goes_on_as_if_never_stopped(tmp_path,
                                                                                  segment):
    import pandas as pd

    from driftwatch.batch import Batch
    from driftwatch.connectors.base import Polled
    from driftwatch.pipeline import ModelMonitor
    from driftwatch.windows.panes import WindowSpec
    from driftwatch.windows.profile import ReferenceProfile

    rng = np.random.default_rng(3)
    ref = pd.DataFrame({"x": rng.normal(size=5000), "c": rng.choice(["a", "b"], 5000),
                        "score": rng.uniform(size=5000),
                        "channel": rng.choice(["web", "app"], 5000)})
    prof = ReferenceProfile.build(ref, numeric=["x"], categorical=["c"], segment=segment)
    spec = WindowSpec(kind="count", pane_size=200)

    def poll(i: int) -> Polled:
        t0 = i * 200
        b = [Batch.build("predictions", n=200, n_numeric=1, n_categorical=1,
                         ids=[f"e{t0 + k}" for k in range(200)],
                         event_time=np.arange(t0, t0 + 200, dtype=float),
                         numeric=rng.normal(size=(200, 1)),
                         categorical=rng.integers(-1, 2, (200, 1)).astype(np.int32),
                         score=rng.uniform(size=200), decision=np.ones(200, np.int8),
                         segment=rng.choice(["web", "app"], 200))]
        if i >= 3:
            b.append(Batch.build("outcomes", n=150, ids=[f"e{(i - 3) * 200 + k}"
                                                         for k in range(150)],
                                 event_time=np.full(150, float(t0)),
                                 label=rng.integers(0, 2, 150).astype(float)))
        return Polled(batches=b)

    polls = [poll(i) for i in range(20)]
    a = ModelMonitor("m", prof, spec, lineage="one")
    out_a = [r.assessment.to_dict() for p in polls for r in a.process(p)]
    b = ModelMonitor("m", prof, spec, lineage="one")
    store = CheckpointStore(tmp_path / "cp")
    out_b = []
    for i, p in enumerate(polls):
        out_b += [r.assessment.to_dict() for r in b.process(p)]
        if i in (6, 7, 12):  # checkpoint, restore into a new monitor, go on from it
            store.save({"m": b.state_dict(store.capture("m"))}, now=float(i))
            store = CheckpointStore(tmp_path / "cp")
            restored = ModelMonitor("m", prof, spec, lineage="one")
            restored.load_state(store.load().models["m"])
            saved = restored.state_dict()
            assert json.dumps(saved) == json.dumps(b.state_dict())
            panes = saved["window"]["open"] + saved["window"]["closed"]
            assert all(("segments" in p) == (segment is not None) for p in panes) and panes
            b = restored
    assert json.dumps(out_b) == json.dumps(out_a)
    assert json.dumps(b.state_dict()) == json.dumps(a.state_dict())
