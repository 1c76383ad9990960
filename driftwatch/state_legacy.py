"""Reading checkpoints of the earlier format: compressed JSON parts in one SQLite file.

Versions before binary checkpoints wrote each model's state as zlib-compressed JSON (its
arrays as base64 text) into ``checkpoint.sqlite3``. A daemon upgraded in place restores
the newest intact one of those once; its next checkpoint is written in the binary format
and the old file is then removed. Nothing here writes the old format.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from driftwatch.errors import StateError

__all__ = ["LEGACY_FORMAT", "LegacyParts", "legacy_max_seq", "load_legacy", "remove_legacy"]

LEGACY_FORMAT = 2


class LegacyParts(Mapping[str, Any]):
    """Model name -> state, decoded when asked for (and not kept)."""

    def __init__(self, blobs: dict[str, bytes]) -> None:
        self._blobs = blobs

    def __getitem__(self, name: str) -> Any:
        return json.loads(zlib.decompress(self._blobs[name]))

    def __iter__(self) -> Iterator[str]:
        return iter(self._blobs)

    def __len__(self) -> int:
        return len(self._blobs)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        return sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise StateError(f"{path}: not a usable checkpoint database ({exc})") from exc


def legacy_max_seq(path: Path) -> int:
    """The highest sequence number in an old checkpoint file (0 when there is none)."""
    if not path.exists():
        return 0
    db = _connect(path)
    try:
        return int(db.execute("SELECT COALESCE(MAX(seq), 0) FROM checkpoints").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def load_legacy(path: Path) -> tuple[int, float, Mapping[str, Any], dict[str, Any], int] | None:
    """``(seq, created, parts, meta, size)`` of the newest intact old checkpoint, or None
    when the file holds none; :class:`StateError` when every one is damaged."""
    if not path.exists():
        return None
    db = _connect(path)
    try:
        try:
            rows = db.execute(
                "SELECT seq, created, format, meta FROM checkpoints ORDER BY seq DESC"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{path}: not a usable checkpoint database ({exc})") from exc
        problems = []
        for seq, created, fmt, meta in rows:
            if fmt != LEGACY_FORMAT:
                problems.append(f"checkpoint {seq}: format {fmt}, expected {LEGACY_FORMAT}")
                continue
            blobs: dict[str, bytes] = {}
            for model, digest, blob in db.execute(
                    "SELECT model, digest, payload FROM parts WHERE seq = ? ORDER BY model",
                    (seq,)):
                if hashlib.sha256(blob).hexdigest() != digest:
                    problems.append(f"checkpoint {seq}: part {model!r} is damaged")
                    break
                blobs[model] = blob
            else:
                return (int(seq), float(created), LegacyParts(blobs), json.loads(meta),
                        sum(len(b) for b in blobs.values()))
        if problems:
            raise StateError(f"{path}: no intact checkpoint ({'; '.join(problems)})")
        return None
    finally:
        db.close()


def remove_legacy(path: Path) -> None:
    """Delete an old checkpoint file and its journal once a newer checkpoint is durable."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
