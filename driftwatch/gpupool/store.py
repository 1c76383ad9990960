"""The pool's durable state: one SQLite table of job records, written through on every change.

The queue and the leases (the GPU ids a running record holds) live here, so a new pool on
the same state directory picks up where the last one stopped. An exclusive lock on a file
beside the database keeps a second live pool (a second daemon) off the same state, which
would lease the same GPUs twice.

>>> import tempfile, pathlib
>>> from driftwatch.gpupool.base import JobRecord, JobSpec, JobState
>>> store = JobStore(pathlib.Path(tempfile.mkdtemp()) / "pool.sqlite3")
>>> rec = JobRecord("000001-a", JobSpec("a", ["true"]), JobState.QUEUED, seq=1, submitted_at=0.0)
>>> store.save(rec)
>>> store.get("000001-a") == rec, [r.job_id for r in store.active()]
(True, ['000001-a'])
>>> store.close()
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from pathlib import Path

from driftwatch.gpupool.base import JobRecord, JobState
from driftwatch.gpupool.errors import PoolStateError

__all__ = ["SCHEMA_VERSION", "JobStore"]

SCHEMA_VERSION = 1
_FINAL = tuple(s.value for s in JobState if s.is_final)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    key TEXT UNIQUE,
    state TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state);
"""


class JobStore:
    """Job records in SQLite. Not thread-safe by itself: the pool serialises calls."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = _lock_exclusively(self.path.with_suffix(".lock"))
        try:
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if row is None:
                self._db.execute(
                    "INSERT INTO meta (name, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
                )
            elif int(row[0]) != SCHEMA_VERSION:
                raise PoolStateError(
                    f"{self.path}: pool state has schema {row[0]}, this driftwatch reads "
                    f"{SCHEMA_VERSION}"
                )
        except (sqlite3.DatabaseError, PoolStateError) as exc:
            os.close(self._lock)
            if isinstance(exc, PoolStateError):
                raise
            raise PoolStateError(f"{self.path}: cannot open the pool state: {exc}") from exc

    def next_seq(self) -> int:
        row = self._db.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs").fetchone()
        return int(row[0])

    def save(self, record: JobRecord) -> None:
        """Insert or replace ``record``; durable when this returns."""
        self._db.execute(
            "INSERT INTO jobs (job_id, seq, key, state, record) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (job_id) DO UPDATE SET state = excluded.state, record = excluded.record",
            (
                record.job_id,
                record.seq,
                record.key,
                record.state.value,
                json.dumps(record.to_dict(), sort_keys=True),
            ),
        )

    def get(self, job_id: str) -> JobRecord | None:
        row = self._db.execute("SELECT record FROM jobs WHERE job_id = ?", (job_id,)).fetchone()
        return self._load(row)

    def by_key(self, key: str) -> JobRecord | None:
        row = self._db.execute("SELECT record FROM jobs WHERE key = ?", (key,)).fetchone()
        return self._load(row)

    def active(self) -> list[JobRecord]:
        """Records not in a final state, in submission order."""
        marks = ", ".join("?" for _ in _FINAL)
        rows = self._db.execute(
            f"SELECT record FROM jobs WHERE state NOT IN ({marks}) ORDER BY seq", _FINAL
        ).fetchall()
        return [self._load_row(r) for r in rows]

    def recent_final(self, limit: int) -> list[JobRecord]:
        """The ``limit`` most recently submitted records in a final state, newest first."""
        marks = ", ".join("?" for _ in _FINAL)
        rows = self._db.execute(
            f"SELECT record FROM jobs WHERE state IN ({marks}) ORDER BY seq DESC LIMIT ?",
            (*_FINAL, int(limit)),
        ).fetchall()
        return [self._load_row(r) for r in rows]

    def close(self) -> None:
        """Close the database and release the lock; safe to call twice."""
        self._db.close()
        if self._lock >= 0:
            os.close(self._lock)  # closing the descriptor releases the lock
            self._lock = -1

    def _load(self, row: tuple[str] | None) -> JobRecord | None:
        return None if row is None else self._load_row(row)

    def _load_row(self, row: tuple[str]) -> JobRecord:
        try:
            return JobRecord.from_dict(json.loads(row[0]))
        except (ValueError, KeyError, TypeError) as exc:
            raise PoolStateError(f"{self.path}: unreadable job record: {exc}") from exc


def _lock_exclusively(path: Path) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise PoolStateError(
            f"{path.parent}: the pool state is in use by another pool (process {holder})"
        ) from None
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd
