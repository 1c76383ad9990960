"""Checkpoints: the daemon's whole state, written atomically, read back on start.

A checkpoint holds, per model, the window sketches, label-joiner and engine state, the
source positions it covers and the length of the outputs written so far: one compressed
JSON part per model, all written in one transaction of a SQLite database (WAL journal,
``synchronous=FULL``). It is durable when ``save`` returns, and a crash mid-write leaves
the previous checkpoint intact. Parts are decoded one at a time, so restoring ten large
models never holds all of them twice. The order that makes restarts exact (DESIGN
invariant 3)::

    outputs.sync()                   # timeline lines on disk, their length known
    store.save(state)                # durable: sketches + positions + output lengths
    source.commit(positions)         # only now may the source forget these events

On start, :meth:`CheckpointStore.load` returns the latest intact checkpoint; outputs are
cut back to the lengths it recorded and sources seek to its positions, so every event after
it is read and counted once more, and nothing before it twice.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> store = CheckpointStore(d / "checkpoint.db")
>>> store.load() is None
True
>>> info = store.save({"credit": {"positions": {"a.jsonl": 10}, "x": float("nan")}}, now=5.0)
>>> cp = store.load()
>>> cp.seq, cp.created, cp.models["credit"]["positions"]
(1, 5.0, {'a.jsonl': 10})
>>> store.close()
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from driftwatch.errors import StateError

__all__ = [
    "Checkpoint",
    "CheckpointInfo",
    "CheckpointStore",
    "Encoded",
    "OutputLog",
    "StateDirLock",
    "encode_part",
]

FORMAT = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    seq     INTEGER PRIMARY KEY,
    created REAL    NOT NULL,
    format  INTEGER NOT NULL,
    meta    TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS parts (
    seq     INTEGER NOT NULL,
    model   TEXT    NOT NULL,
    digest  TEXT    NOT NULL,
    payload BLOB    NOT NULL,
    PRIMARY KEY (seq, model)
);
"""


class _Parts(Mapping[str, Any]):
    """Model name -> state, decoded when asked for (and not kept)."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self._blobs = blobs

    def __getitem__(self, name: str) -> Any:
        return json.loads(zlib.decompress(self._blobs[name]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


@dataclass(frozen=True)
class Checkpoint:
    """A restored checkpoint: ``models`` maps each model name to its saved state (each
    decoded on access)."""

    seq: int
    created: float
    models: Mapping[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)
    size_bytes: int = 0


@dataclass(frozen=True)
class CheckpointInfo:
    """What one ``save`` wrote: sequence number, compressed size, seconds it took."""

    seq: int
    size_bytes: int
    seconds: float


class Encoded(bytes):
    """One model's state as compressed JSON (see :func:`encode_part`)."""


def encode_part(obj: Any) -> Encoded:
    """Compressed JSON for one model's state. The stdlib encoder keeps NaN and infinities
    (sketch moments of an empty pane); orjson would turn them into null."""
    return Encoded(zlib.compress(json.dumps(obj, separators=(",", ":")).encode(), 1))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class CheckpointStore:
    """Atomic checkpoints in one SQLite file; keeps the last ``keep`` of them.

    ``timer`` measures how long a save takes (``time.perf_counter`` by default; it is a
    measurement, never a decision). ``now`` is the checkpoint's timestamp, from the
    caller's clock.
    """

    def __init__(self, path: str | Path, *, keep: int = 2, timer: Any = time.perf_counter) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.keep = max(1, int(keep))
        self._timer = timer
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{self.path}: not a usable checkpoint database ({exc})") from exc
        row = self._db.execute("SELECT MAX(seq) FROM checkpoints").fetchone()
        self._seq = int(row[0] or 0)
        _fsync_dir(self.path.parent)  # the database and its WAL file exist durably

    @property
    def seq(self) -> int:
        return self._seq

    def save(
        self, models: Mapping[str, Any], *, now: float, meta: Mapping[str, Any] | None = None
    ) -> CheckpointInfo:
        """Write a new checkpoint durably; older ones beyond ``keep`` are dropped with it.

        ``models`` maps model names to JSON-safe states or to :class:`Encoded` parts."""
        t0 = self._timer()
        parts = [(str(name), v if isinstance(v, Encoded) else encode_part(v))
                 for name, v in models.items()]
        seq = self._seq + 1
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(
                    "INSERT INTO checkpoints (seq, created, format, meta) VALUES (?, ?, ?, ?)",
                    (seq, float(now), FORMAT, json.dumps(dict(meta or {}))))
                self._db.executemany(
                    "INSERT INTO parts (seq, model, digest, payload) VALUES (?, ?, ?, ?)",
                    [(seq, name, hashlib.sha256(blob).hexdigest(), blob)
                     for name, blob in parts])
                for table in ("parts", "checkpoints"):
                    self._db.execute(f"DELETE FROM {table} WHERE seq <= ?", (seq - self.keep,))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StateError(f"{self.path}: checkpoint {seq} not written ({exc})") from exc
        self._seq = seq
        size = sum(len(b) for _, b in parts)
        return CheckpointInfo(seq=seq, size_bytes=size, seconds=self._timer() - t0)

    def load(self) -> Checkpoint | None:
        """The newest intact checkpoint, or None when there is none.

        A checkpoint with a damaged part (digest mismatch) is skipped for the one before;
        if every one is damaged that is a :class:`StateError`, never a silent fresh start.
        """
        try:
            rows = self._db.execute(
                "SELECT seq, created, format, meta FROM checkpoints ORDER BY seq DESC"
            ).fetchall()
        except sqlite3.Error as exc:  # another version's layout
            raise StateError(f"{self.path}: not a checkpoint database this version of "
                             f"driftwatch reads ({exc})") from exc
        problems = []
        for seq, created, fmt, meta in rows:
            if fmt != FORMAT:
                problems.append(f"checkpoint {seq}: format {fmt}, expected {FORMAT}")
                continue
            blobs: dict[str, bytes] = {}
            for model, digest, blob in self._db.execute(
                    "SELECT model, digest, payload FROM parts WHERE seq = ? ORDER BY model",
                    (seq,)):
                if hashlib.sha256(blob).hexdigest() != digest:
                    problems.append(f"checkpoint {seq}: part {model!r} is damaged")
                    break
                blobs[model] = blob
            else:
                return Checkpoint(seq=int(seq), created=float(created), models=_Parts(blobs),
                                  meta=json.loads(meta),
                                  size_bytes=sum(len(b) for b in blobs.values()))
        if problems:
            raise StateError(f"{self.path}: no intact checkpoint ({'; '.join(problems)})")
        return None

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.close()


class OutputLog:
    """An append-only output file (the timeline) whose durable length goes in checkpoints.

    After a crash, :meth:`truncate` cuts it back to the checkpointed length: lines written
    after the last checkpoint are written again when their events are read again, so every
    line appears exactly once.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] = self.path.open("ab")

    def write(self, data: bytes) -> None:
        self._fh.write(data)

    def sync(self) -> int:
        """Flush and fsync; returns the file's length (what the checkpoint records)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return self._fh.tell()

    def truncate(self, length: int) -> None:
        """Cut the file back to ``length`` bytes (a checkpoint's record of it)."""
        self._fh.flush()
        size = self.path.stat().st_size
        if length > size:
            raise StateError(
                f"{self.path}: {size} bytes on disk but the checkpoint covers {length}"
            )
        self._fh.truncate(length)
        self._fh.seek(length)
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            self._fh.close()


class StateDirLock:
    """An exclusive lock on a state directory: one daemon per state, released on any exit.

    ``flock`` locks die with the process, so a SIGKILLed daemon never leaves a stale lock.
    """

    def __init__(self, state_dir: str | Path) -> None:
        self.path = Path(state_dir) / "driftwatch.lock"
        self._fh: IO[str] | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            raise StateError(
                f"{self.path.parent} is in use by another driftwatch process"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        self._fh = fh

    def release(self) -> None:
        if self._fh is not None:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    def __enter__(self) -> StateDirLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
