"""Dead letters for files: every bad record as one JSON line, counted by reason.

Each line is ``{"reason", "detail", "source", "position", "partition", "stream", "raw"}``;
``raw`` is the record's bytes as text, or ``raw_b64`` (base64) when they are not UTF-8.
Lines are buffered and reach the file on :meth:`DeadLetterWriter.flush` (the run loop
flushes before a checkpoint, so a checkpoint never covers a record the file lacks).

>>> import tempfile, pathlib
>>> from driftwatch.connectors.base import BadRecord
>>> path = pathlib.Path(tempfile.mkdtemp()) / "dead.jsonl"
>>> w = DeadLetterWriter(path)
>>> w.write([BadRecord("invalid_json", "unexpected character", "in.jsonl", 3, b"{oops")])
>>> w.counts
{'invalid_json': 1}
>>> w.flush(); w.close()
>>> read_dead_letters(path)[0]["position"]
3
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import orjson

from driftwatch.connectors.base import BadRecord
from driftwatch.errors import SourceError

__all__ = ["DeadLetterWriter", "dead_letter_line", "read_dead_letters"]


def dead_letter_line(b: BadRecord) -> bytes:
    """One dead-letter JSON line (with its newline)."""
    d: dict[str, Any] = {
        "reason": b.reason,
        "detail": b.detail,
        "source": b.source,
        "position": b.position,
        "partition": b.partition,
        "stream": b.stream,
    }
    try:
        d["raw"] = b.raw.decode("utf-8")
    except UnicodeDecodeError:
        d["raw_b64"] = base64.b64encode(b.raw).decode("ascii")
    return orjson.dumps(d) + b"\n"


def read_dead_letters(path: str | Path) -> list[dict[str, Any]]:
    """All dead letters in a file (for tests and tools)."""
    with open(path, "rb") as f:
        return [orjson.loads(line) for line in f if line.strip()]


class DeadLetterWriter:
    """Appends bad records to a JSON-lines file; ``counts`` holds totals by reason."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.counts: dict[str, int] = {}
        self._buf: list[bytes] = []
        self._f: IO[bytes] | None = None

    def write(self, records: Iterable[BadRecord]) -> None:
        for b in records:
            self._buf.append(dead_letter_line(b))
            self.counts[b.reason] = self.counts.get(b.reason, 0) + 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def flush(self) -> None:
        """Write what is buffered and push it to the disk."""
        if not self._buf:
            return
        try:
            if self._f is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._f = open(self.path, "ab")  # noqa: SIM115 - kept open across flushes
            self._f.write(b"".join(self._buf))
            self._f.flush()
            os.fsync(self._f.fileno())
        except OSError as exc:
            raise SourceError(f"cannot write dead letters to {self.path}: {exc}") from exc
        self._buf.clear()

    def close(self) -> None:
        self.flush()
        if self._f is not None:
            self._f.close()
            self._f = None

    def discard(self) -> None:
        """Drop what is buffered and close without writing it (the events behind these
        lines are read again from a checkpoint, and dead-lettered again then)."""
        self._buf.clear()
        if self._f is not None:
            # what a refused write left in the file's buffer is dropped
            with contextlib.suppress(OSError):
                self._f.close()
            self._f = None

    def __enter__(self) -> DeadLetterWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
