"""Checkpoints: the daemon's whole state, written atomically, read back on start.

A checkpoint holds, per model, the window sketches, label-joiner and engine state, the
source positions it covers and the length of the outputs written so far. It lives in a
directory of binary files (:mod:`driftwatch.arrayfile`, each closed by a CRC-32C):

* one *part* per model: its state tree's JSON skeleton and its arrays, raw;
* *segments*: rows of its append-only tables (:class:`~driftwatch.statetree.Appended`),
  each written once and shared by the checkpoints after it, so a checkpoint writes only
  the rows that arrived since the one before;
* one *manifest* per checkpoint, ``cp-<seq>.json``, naming its parts and segments with
  their sizes (each file carries its own checksum); it is written to a temporary name,
  fsynced and renamed into place after every file it names is durable. The rename is
  the commit.

A crash before the rename leaves the previous checkpoint as the newest; a damaged file
(torn, truncated, a flipped bit) fails its checksum and :meth:`CheckpointStore.load`
takes the checkpoint before. Files no kept manifest names are deleted. The order that
makes restarts exact (DESIGN invariant 3)::

    outputs.sync()                   # timeline lines on disk, their length known
    store.save(state)                # durable: sketches + positions + output lengths
    source.commit(positions)         # only now may the source forget these events

On start, :meth:`CheckpointStore.load` returns the latest intact checkpoint; outputs are
cut back to the lengths it recorded and sources seek to its positions, so every event after
it is read and counted once more, and nothing before it twice. A state directory of an
earlier version (one SQLite file of JSON parts, ``legacy``) is read when no binary
checkpoint exists yet, and removed once one is durable.

>>> import tempfile, pathlib, numpy as np
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> store = CheckpointStore(d / "checkpoints")
>>> store.load() is None
True
>>> state = {"positions": {"a.jsonl": 10}, "x": float("nan"), "counts": np.arange(4)}
>>> info = store.save({"credit": state}, now=5.0)
>>> cp = CheckpointStore(d / "checkpoints").load()
>>> cp.seq, cp.created, cp.models["credit"]["positions"], cp.models["credit"]["counts"]
(1, 5.0, {'a.jsonl': 10}, array([0, 1, 2, 3]))
"""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
from pathlib import Path
from typing import IO

from driftwatch.checkpoint_store import Checkpoint, CheckpointInfo, CheckpointStore, Staged
from driftwatch.errors import StateError
from driftwatch.outputlog import OutputLog

__all__ = [
    "Checkpoint",
    "CheckpointInfo",
    "CheckpointStore",
    "OutputLog",
    "Staged",
    "StateDirLock",
    "write_fault",
]

#: errno -> why a write to the state folder failed: it is full, or it may not be written
_FAULTS = {errno.ENOSPC: "full", errno.EDQUOT: "full",
           errno.EROFS: "read_only", errno.EACCES: "read_only", errno.EPERM: "read_only"}
#: the same, as SQLite and Arrow say it (they do not always keep the errno)
_FAULT_TEXT = (("database or disk is full", "full"), ("no space left", "full"),
               ("disk quota exceeded", "full"), ("readonly database", "read_only"),
               ("read-only file system", "read_only"), ("permission denied", "read_only"))


def write_fault(exc: BaseException | None) -> str | None:
    """``"full"`` or ``"read_only"`` when ``exc`` (or an exception it was raised from)
    says the disk refused a write for lack of room or permission, else None: what the
    daemon waits out instead of stopping.

    >>> write_fault(OSError(errno.ENOSPC, "No space left on device"))
    'full'
    >>> try:
    ...     raise StateError("outbox not written") from sqlite3.OperationalError(
    ...         "attempt to write a readonly database")
    ... except StateError as err:
    ...     write_fault(err)
    'read_only'
    >>> write_fault(ValueError("bad value")) is None
    True
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FAULTS:
            return _FAULTS[exc.errno]
        if isinstance(exc, (OSError, sqlite3.Error)):
            text = str(exc).lower()
            for words, kind in _FAULT_TEXT:
                if words in text:
                    return kind
        exc = exc.__cause__ or exc.__context__
    return None


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
