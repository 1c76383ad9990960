#!/usr/bin/env python
"""Checkpoint capture-to-durable, restore and size for many models, binary vs earlier JSON.

Builds ``--models`` monitors of ``--features`` features each (four fifths numeric, one
fifth categorical), feeds each ``--predictions`` predictions and outcomes for the oldest
two thirds of them (so the labelled buffer is full and the joiner holds the rest), then
measures, in one run:

* ``binary, first``: the first checkpoint into an empty folder (every row written);
* ``binary, next``: one more poll per model (1,000 predictions and outcomes), then the
  next checkpoint: only what changed is written;
* ``binary, restore``: a new store opens the folder, checks every checksum, and every
  monitor is rebuilt from it;
* ``json``: the earlier format in the same run (the JSON-safe state, zlib level 1, one
  SQLite transaction with ``synchronous=FULL``), capture-to-durable and restore.

Capture-to-durable runs from the first state capture to the fsync of the manifest, as
in the daemon (there the loop captures the next model while the writer thread writes).

    python benchmarks/checkpoint.py [--models 10] [--features 50] [--json]
"""

from __future__ import annotations

import argparse
import json
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
from driftwatch.state import CheckpointStore  # noqa: E402
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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", type=int, default=10)
    p.add_argument("--features", type=int, default=50)
    p.add_argument("--predictions", type=int, default=60_000)
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

    tmp = Path(tempfile.mkdtemp())
    store = CheckpointStore(tmp / "checkpoints")

    def binary_checkpoint() -> tuple[float, object]:
        t0 = time.perf_counter()
        staged = {}
        for m in mons:
            staged[m.model] = store.stage(m.model, m.state_dict(store.capture(m.model)))
        info = store.save(staged, now=0.0)
        return time.perf_counter() - t0, info

    first_s, first = binary_checkpoint()
    for m in mons:
        m.process(extra[0])
    next_s, nxt = binary_checkpoint()

    t0 = time.perf_counter()
    cp = CheckpointStore(tmp / "checkpoints").load()
    assert cp is not None
    restored = []
    for m in mons:
        r = ModelMonitor(m.model, prof, spec)
        r.load_state(cp.models[m.model])
        restored.append(r)
    restore_s = time.perf_counter() - t0
    assert all(len(r.labelled_buffer) == len(m.labelled_buffer)
               and len(r.pending_features) == len(m.pending_features)
               for r, m in zip(restored, mons, strict=True))

    db = sqlite3.connect(tmp / "old.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE parts (seq INTEGER, model TEXT, payload BLOB)")
    t0 = time.perf_counter()
    old_size = old_save(db, 1, mons)
    old_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for m in mons:
        (blob,) = db.execute("SELECT payload FROM parts WHERE model = ?", (m.model,)).fetchone()
        ModelMonitor(m.model, prof, spec).load_state(json.loads(zlib.decompress(blob)))
    old_restore_s = time.perf_counter() - t0
    db.close()

    res = {
        "models": args.models, "features": args.features, "held_per_model": held,
        "build_s": built,
        "binary_first_s": first_s, "binary_first_bytes": first.written_bytes,
        "binary_next_s": next_s, "binary_next_written_bytes": nxt.written_bytes,
        "binary_size_bytes": nxt.size_bytes, "binary_restore_s": restore_s,
        "json_capture_to_durable_s": old_s, "json_restore_s": old_restore_s,
        "json_size_bytes": old_size,
    }
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    mib = 2 ** 20
    print(f"{args.models} models x {args.features} features; per model "
          f"{held['labelled_rows']} labelled rows, {held['pending_features']} pending "
          f"feature rows, {held['joiner_backlog']} predictions waiting for labels")
    print(f"binary, first checkpoint : {first_s:6.3f} s capture-to-durable, "
          f"{first.written_bytes / mib:6.1f} MiB written")
    print(f"binary, next checkpoint  : {next_s:6.3f} s capture-to-durable, "
          f"{nxt.written_bytes / mib:6.1f} MiB written, {nxt.size_bytes / mib:.1f} MiB held")
    print(f"binary, restore          : {restore_s:6.3f} s (checksums checked, monitors rebuilt)")
    print(f"json (earlier format)    : {old_s:6.3f} s capture-to-durable, "
          f"{old_restore_s:.3f} s restore, {old_size / mib:.1f} MiB")
    print(f"ratios (json / binary)   : capture-to-durable {old_s / next_s:.1f}x (next), "
          f"{old_s / first_s:.1f}x (first); restore {old_restore_s / restore_s:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
