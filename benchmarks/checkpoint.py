#!/usr/bin/env python
"""Checkpoint capture-to-durable, restore and size for many models, against baselines
measured in the same run.

Builds ``--models`` monitors of ``--features`` features each (four fifths numeric, one
fifth categorical), feeds each ``--predictions`` predictions and outcomes for the oldest
two thirds of them (so the labelled buffer is full and the joiner holds the rest), then
measures, in one run:

* ``first``: the first checkpoint into an empty folder (every row written);
* ``next``: one more poll per model (1,000 predictions and outcomes), then the next
  checkpoint: only what changed is written;
* ``restore``: a new store opens the folder, checks every checksum, and every monitor
  is rebuilt from it (split into the store's part and the monitors' ``load_state``);
* baselines: the disk's fsync rate (one-byte files), and numpy writing the same arrays
  (one uncompressed ``.npz`` per model, each fsynced, one after the other) and loading
  them back; the checkpoint's size is compared with those arrays' bytes;
* ``--legacy``: the earlier format too (the JSON-safe state, zlib level 1, one SQLite
  transaction with ``synchronous=FULL``), capture-to-durable and restore.

Capture-to-durable runs from the first state capture to the fsync of the manifest,
through the daemon's own :class:`~driftwatch.service.checkpoint.CheckpointWriter`: this
thread captures the next model while the writer thread writes the one before.

    python benchmarks/checkpoint.py [--models 10] [--features 50] [--legacy] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.batch import Batch  # noqa: E402
from driftwatch.connectors.base import Polled  # noqa: E402
from driftwatch.pipeline import ModelMonitor  # noqa: E402
from driftwatch.service.checkpoint import CheckpointWriter  # noqa: E402
from driftwatch.state import CheckpointStore  # noqa: E402
from driftwatch.statetree import Capture, pack  # noqa: E402
from driftwatch.windows.panes import WindowSpec  # noqa: E402
from driftwatch.windows.profile import ReferenceProfile  # noqa: E402

POLL = 1000


def profile(n_num: int, n_cat: int, rng: np.random.Generator) -> ReferenceProfile:
    n = 20_000
    df = pd.DataFrame({f"x{j}": rng.normal(size=n) for j in range(n_num)})
    for j in range(n_cat):
        df[f"c{j}"] = rng.choice(list("abcdefgh"), size=n)
    df["score"] = rng.uniform(size=n)
    df["label"] = (rng.uniform(size=n) < 0.1).astype(float)
    return ReferenceProfile.build(df, numeric=[f"x{j}" for j in range(n_num)],
                                  categorical=[f"c{j}" for j in range(n_cat)])


def polls(i0: int, count: int, n_num: int, n_cat: int, label_lag: int,
          rng: np.random.Generator) -> list[Polled]:
    out = []
    for i in range(i0, i0 + count):
        t0 = i * POLL
        ids = [f"e{t0 + k}" for k in range(POLL)]
        pred = Batch.build("predictions", n=POLL, n_numeric=n_num, n_categorical=n_cat,
                           ids=ids, event_time=np.arange(t0, t0 + POLL, dtype=float),
                           numeric=rng.normal(size=(POLL, n_num)),
                           categorical=rng.integers(0, 8, size=(POLL, n_cat)).astype(np.int32),
                           score=rng.uniform(size=POLL), decision=np.ones(POLL, np.int8))
        batches = [pred]
        j = i - label_lag
        if j >= 0:
            o0 = j * POLL
            batches.append(Batch.build(
                "outcomes", n=POLL, ids=[f"e{o0 + k}" for k in range(POLL)],
                event_time=np.full(POLL, float(t0)),
                label=(rng.uniform(size=POLL) < 0.1).astype(float)))
        out.append(Polled(batches=batches))
    return out


def old_save(db: sqlite3.Connection, seq: int, mons: list[ModelMonitor]) -> int:
    size = 0
    db.execute("BEGIN IMMEDIATE")
    for m in mons:
        blob = zlib.compress(json.dumps(m.state_dict(), separators=(",", ":")).encode(), 1)
        size += len(blob)
        db.execute("INSERT INTO parts VALUES (?, ?, ?)", (seq, m.model, blob))
    db.execute("DELETE FROM parts WHERE seq < ?", (seq - 1,))
    db.execute("COMMIT")
    return size


def numpy_baseline(folder: Path, mons: list[ModelMonitor]) -> tuple[float, float, int]:
    """The same arrays with numpy, one uncompressed ``.npz`` per model, each fsynced:
    seconds to write (state captures included), seconds to load every array back, bytes
    of array data."""
    folder.mkdir()
    t0 = time.perf_counter()
    nbytes = 0
    for m in mons:
        packed = pack(m.state_dict(Capture()))
        arrays = dict(packed.arrays)
        for t in packed.tables:
            arrays.update({f"{t.table}.{k}": v for k, v in t.columns.items()})
        with open(folder / f"{m.model}.npz", "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        nbytes += sum(v.nbytes for v in arrays.values())
    write_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    total = 0
    for m in mons:
        with np.load(folder / f"{m.model}.npz") as z:
            total += sum(z[k].nbytes for k in z.files)
    assert total == nbytes
    return write_s, time.perf_counter() - t0, nbytes


def fsync_rate(folder: Path, n: int = 50) -> float:
    """One-byte files written and fsynced per second."""
    folder.mkdir()
    t0 = time.perf_counter()
    for i in range(n):
        with open(folder / f"f{i}", "wb") as fh:
            fh.write(b"x")
            fh.flush()
            os.fsync(fh.fileno())
    return n / (time.perf_counter() - t0)


def checkpoint(writer: CheckpointWriter, mons: list[ModelMonitor]) -> tuple[float, object]:
    """One checkpoint as the daemon's loop takes it: capture a model whenever the writer
    has room, then the manifest; seconds from the first capture to durable."""
    store = writer.store
    t0 = time.perf_counter()
    for m in mons:
        writer.wait_ready()
        assert writer.encode(m.model, m.state_dict(store.capture(m.model)))
    writer.wait_ready()
    assert writer.save({m.model: {} for m in mons}, now=0.0, started=t0)
    writer.wait()
    if writer.error is not None:
        raise writer.error
    (done,) = writer.completed()
    return time.perf_counter() - t0, done.info


def legacy(tmp: Path, mons: list[ModelMonitor], prof: ReferenceProfile,
           spec: WindowSpec) -> tuple[float, float, int]:
    db = sqlite3.connect(tmp / "old.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE parts (seq INTEGER, model TEXT, payload BLOB)")
    t0 = time.perf_counter()
    size = old_save(db, 1, mons)
    save_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for m in mons:
        (blob,) = db.execute("SELECT payload FROM parts WHERE model = ?", (m.model,)).fetchone()
        ModelMonitor(m.model, prof, spec).load_state(json.loads(zlib.decompress(blob)))
    restore_s = time.perf_counter() - t0
    db.close()
    return save_s, restore_s, size


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", type=int, default=10)
    p.add_argument("--features", type=int, default=50)
    p.add_argument("--predictions", type=int, default=60_000)
    p.add_argument("--legacy", action="store_true",
                   help="also time the earlier JSON format (about half a minute)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args()
    rng = np.random.default_rng(7)
    n_cat = args.features // 5
    n_num = args.features - n_cat
    prof = profile(n_num, n_cat, rng)
    spec = WindowSpec(kind="count", pane_size=POLL)
    n_polls = args.predictions // POLL
    lag = n_polls // 3
    t = time.perf_counter()
    stream = polls(0, n_polls, n_num, n_cat, lag, rng)
    extra = polls(n_polls, 1, n_num, n_cat, lag, rng)
    mons = []
    for k in range(args.models):
        m = ModelMonitor(f"model{k}", prof, spec)
        for pl in stream:
            m.process(pl)
        mons.append(m)
    built = time.perf_counter() - t
    m0 = mons[0]
    held = {"labelled_rows": len(m0.labelled_buffer), "pending_features": len(
        m0.pending_features), "joiner_backlog": int(m0.joiner.backlog)}

    with tempfile.TemporaryDirectory() as folder:
        res = measure(Path(folder), args, mons, extra, prof, spec)
    res.update(models=args.models, features=args.features, held_per_model=held,
               build_s=built)
    return report(args, res)


def measure(tmp: Path, args: argparse.Namespace, mons: list[ModelMonitor],
            extra: list[Polled], prof: ReferenceProfile, spec: WindowSpec) -> dict:
    """Every figure, in one run, in the folder ``tmp``."""
    fsyncs = fsync_rate(tmp / "fsync")
    np_write_s, np_load_s, raw_bytes = numpy_baseline(tmp / "npy", mons)
    writer = CheckpointWriter(CheckpointStore(tmp / "checkpoints"))
    first_s, first = checkpoint(writer, mons)
    for m in mons:
        m.process(extra[0])
    next_s, nxt = checkpoint(writer, mons)
    writer.close()
    writer.store.close()

    t0 = time.perf_counter()
    cp = CheckpointStore(tmp / "checkpoints").load()
    assert cp is not None
    load_s = time.perf_counter() - t0
    restored = []
    for m in mons:
        r = ModelMonitor(m.model, prof, spec)
        r.load_state(cp.models[m.model])
        restored.append(r)
    restore_s = time.perf_counter() - t0
    assert all(len(r.labelled_buffer) == len(m.labelled_buffer)
               and len(r.pending_features) == len(m.pending_features)
               and r.state_dict() == m.state_dict()
               for r, m in zip(restored, mons, strict=True))

    res = {
        "fsyncs_per_s": fsyncs,
        "numpy_write_s": np_write_s, "numpy_load_s": np_load_s, "raw_array_bytes": raw_bytes,
        "first_s": first_s, "first_written_bytes": first.written_bytes,
        "next_s": next_s, "next_written_bytes": nxt.written_bytes,
        "size_bytes": nxt.size_bytes, "restore_s": restore_s, "restore_store_s": load_s,
    }
    if args.legacy:
        res["json_capture_to_durable_s"], res["json_restore_s"], res["json_size_bytes"] = \
            legacy(tmp, mons, prof, spec)
    return res


def report(args: argparse.Namespace, res: dict) -> int:
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    mib, held = 2 ** 20, res["held_per_model"]
    fsyncs, np_write_s, np_load_s = res["fsyncs_per_s"], res["numpy_write_s"], \
        res["numpy_load_s"]
    first_s, next_s, restore_s, load_s = res["first_s"], res["next_s"], res["restore_s"], \
        res["restore_store_s"]
    raw_bytes, size = res["raw_array_bytes"], res["size_bytes"]
    print(f"{args.models} models x {args.features} features; per model "
          f"{held['labelled_rows']} labelled rows, {held['pending_features']} pending "
          f"feature rows, {held['joiner_backlog']} predictions waiting for labels")
    print(f"disk                 : {fsyncs:6.0f} fsyncs/s (one-byte files)")
    print(f"numpy .npz, fsynced  : {np_write_s:6.3f} s write, {np_load_s:.3f} s load, "
          f"{raw_bytes / mib:.1f} MiB of arrays")
    print(f"first checkpoint     : {first_s:6.3f} s capture-to-durable "
          f"({first_s / np_write_s:.2f}x numpy), "
          f"{res['first_written_bytes'] / mib:.1f} MiB written")
    print(f"next checkpoint      : {next_s:6.3f} s capture-to-durable, "
          f"{res['next_written_bytes'] / mib:.1f} MiB written")
    print(f"restore              : {restore_s:6.3f} s ({restore_s / np_load_s:.2f}x numpy load;"
          f" store {load_s:.3f} s with every checksum, monitors {restore_s - load_s:.3f} s)")
    print(f"size                 : {size / mib:6.1f} MiB held "
          f"({size / raw_bytes:.2f}x the arrays' bytes)")
    if args.legacy:
        print(f"json (earlier format): {res['json_capture_to_durable_s']:6.3f} s "
              f"capture-to-durable, {res['json_restore_s']:.3f} s restore, "
              f"{res['json_size_bytes'] / mib:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
