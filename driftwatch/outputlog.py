"""``OutputLog``: the daemon's append-only timeline, rotated into numbered segments.

A model's timeline is one active file and the segments rotated out of it::

    timeline.jsonl       the active file, generation G
    timeline.<n>.jsonl   closed segments, n < G; read in the order of n, then the active file

The active file's generation is one past the newest segment's number (1 while there is
none); it is read off the names, so nothing else has to be kept in step with them. At
least one segment is kept, so the number never goes back.

A checkpoint records the *position* of the synced log: (generation, bytes of that file).
:meth:`OutputLog.rotate` runs when a checkpoint is captured, before the log is synced:
once the active file has reached ``max_bytes`` it is fsynced and renamed to the segment
of its generation (one atomic rename: each line is in exactly one file, whether a crash
comes before or after it; after it, opening the log makes the new, empty active file),
and the checkpoint then covers the whole segment. Segments past the newest ``keep`` are
deleted, but never the one the last durable checkpoint ends in (:meth:`OutputLog.settle`):
a restart must be able to cut the timeline back to it.

:meth:`OutputLog.restore` cuts the log back to a checkpoint's position: lines written
after it are written again when their events are read again, so every line appears
exactly once. In the active file, that is a truncation; in a segment (rotations happened
after the checkpoint), the segment is truncated where the checkpoint ended, the segments
after it are deleted and the active file is emptied. Each step can be done again, so a
crash during a restore is recovered by the next one.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> log = OutputLog(d / "timeline.jsonl", max_bytes=8, keep=2)
>>> log.write(b'{"w":0}\\n'); log.rotate(); log.write(b'{"w":1}\\n'); log.sync()
True
8
>>> log.position(), [p.name for p in timeline_files(d / "timeline.jsonl")]
((2, 8), ['timeline.1.jsonl', 'timeline.jsonl'])
>>> log.restore(1, 8); [p.stat().st_size for p in timeline_files(d / "timeline.jsonl")]
[8, 0]
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from driftwatch.durable import fsync_dir
from driftwatch.errors import StateError

__all__ = [
    "OutputLog",
    "active_generation",
    "count_lines",
    "iter_lines",
    "open_generation",
    "segment_path",
    "segments",
    "timeline_files",
]

_SEGMENT = re.compile(r"\.(\d+)$")


def segment_path(path: str | Path, n: int) -> Path:
    """The segment ``n`` of the log at ``path`` (``timeline.jsonl`` -> ``timeline.3.jsonl``)."""
    p = Path(path)
    return p.with_name(f"{p.stem}.{int(n)}{p.suffix}")


def segments(path: str | Path) -> list[tuple[int, Path]]:
    """The log's segments on disk as ``(number, path)``, oldest first."""
    p = Path(path)
    out = []
    for q in p.parent.glob(f"{p.stem}.*{p.suffix}"):
        m = _SEGMENT.search(q.name[: len(q.name) - len(p.suffix)])
        if m is not None and q.name == segment_path(p, int(m.group(1))).name:
            out.append((int(m.group(1)), q))
    return sorted(out)


def active_generation(path: str | Path) -> int:
    """The active file's generation: one past the newest segment (1 when there is none)."""
    segs = segments(path)
    return segs[-1][0] + 1 if segs else 1


def timeline_files(path: str | Path) -> list[Path]:
    """Every file of the log in reading order: the segments, then the active file (when
    it exists)."""
    p = Path(path)
    return [q for _, q in segments(p)] + ([p] if p.is_file() else [])


def _open_files(path: str | Path) -> Iterator[IO[bytes]]:
    """Every file of the log in order, each open in turn (closed when the next is asked
    for); a segment deleted meanwhile (retention) is skipped."""
    for f in timeline_files(path):
        try:
            fh = f.open("rb")
        except FileNotFoundError:
            continue
        with fh:
            yield fh


def iter_lines(path: str | Path) -> Iterator[bytes]:
    """The non-blank lines of every file of the log, in order, one file open at a time."""
    for fh in _open_files(path):
        yield from (line for line in fh if line.strip())


def count_lines(path: str | Path, *, block: int = 1 << 20) -> int:
    """Newline-ended lines in every file of the log, read a block at a time."""
    n = 0
    for fh in _open_files(path):
        while chunk := fh.read(block):
            n += chunk.count(b"\n")
    return n


def open_generation(path: str | Path, generation: int) -> IO[bytes]:
    """The file that holds ``generation`` of the log, open for reading, even while the
    daemon rotates it: the segment when it exists, else the active file (checked again
    after opening it: a rename in between means the segment is the one)."""
    seg = segment_path(path, generation)
    try:
        return seg.open("rb")
    except FileNotFoundError:
        pass
    fh = Path(path).open("rb")  # noqa: SIM115 - handed to the caller, who closes it
    if seg.exists():  # rotated between the two opens: the active file is a newer one
        fh.close()
        return seg.open("rb")
    return fh


class OutputLog:
    """An append-only output file (the timeline) whose durable position goes in
    checkpoints, rotated into segments (see the module docstring).

    ``max_bytes`` None never rotates; ``keep`` (at least 1) segments stay.
    """

    def __init__(self, path: str | Path, *, max_bytes: int | None = None,
                 keep: int = 8) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1 segment, not {keep}")
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.keep = int(keep)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.generation = active_generation(self.path)
        #: generation the last durable checkpoint ends in: its segment is never deleted
        self.settled = self.generation
        self._fh: IO[bytes] = self._open()

    def _open(self) -> IO[bytes]:
        # unbuffered: a write the disk refuses fails at once, and nothing is left in a
        # buffer for a later flush to write behind the checkpoint's back
        return self.path.open("ab", buffering=0)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = self._fh.write(view)
            view = view[n or 0:]

    def sync(self) -> int:
        """Fsync; returns the active file's length (what the checkpoint records)."""
        os.fsync(self._fh.fileno())
        return self._fh.tell()

    def position(self) -> tuple[int, int]:
        """(generation, bytes) of the log's end, as :meth:`sync` left it."""
        return self.generation, self._fh.tell()

    def rotate(self) -> bool:
        """Close the active file into its segment when it has reached ``max_bytes`` (and
        start an empty one); True when it did. Called before a checkpoint syncs the log."""
        if self.max_bytes is None or self._fh.tell() < self.max_bytes:
            return False
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.path, segment_path(self.path, self.generation))
        fsync_dir(self.path.parent)  # the rename is durable: the segment is closed
        self.generation += 1
        self._fh = self._open()
        fsync_dir(self.path.parent)
        self._prune()
        return True

    def settle(self, generation: int) -> None:
        """A checkpoint ending in ``generation`` is durable: older segments may go."""
        self.settled = max(self.settled, int(generation))
        self._prune()

    def _prune(self) -> None:
        segs = segments(self.path)
        for n, p in segs[: max(0, len(segs) - self.keep)]:
            if n < self.settled:
                p.unlink(missing_ok=True)

    def truncate(self, length: int) -> None:
        """Cut the active file back to ``length`` bytes."""
        self.restore(self.generation, length)

    def restore(self, generation: int, length: int) -> None:
        """Cut the log back to a checkpoint's position (see the module docstring)."""
        generation = int(generation)
        if generation > self.generation or (generation < self.generation and not
                                            segment_path(self.path, generation).exists()):
            have = [n for n, _ in segments(self.path)]
            raise StateError(
                f"{self.path}: the checkpoint ends in generation {generation} of the "
                f"timeline, but the folder holds the active file (generation "
                f"{self.generation}) and segments {have or 'none'}; restore the state "
                "folder as it was, or start from an empty one")
        if generation == self.generation:
            self._cut(self.path, length, self._fh)
        else:
            seg = segment_path(self.path, generation)
            with seg.open("r+b") as fh:
                self._cut(seg, length, fh)
            for n, p in reversed(segments(self.path)):
                if n > generation:
                    p.unlink()
            self._cut(self.path, 0, self._fh)
            fsync_dir(self.path.parent)
            self.generation = generation + 1
        self.settled = generation  # the checkpoint restored is the durable one

    def _cut(self, path: Path, length: int, fh: IO[bytes]) -> None:
        size = path.stat().st_size
        if length > size:
            raise StateError(
                f"{path}: {size} bytes on disk but the checkpoint covers {length}"
            )
        fh.truncate(length)
        fh.seek(length)
        os.fsync(fh.fileno())

    def clear(self) -> None:
        """A fresh start: every segment deleted, the active file emptied (generation 1)."""
        for _, p in reversed(segments(self.path)):
            p.unlink()
        self._cut(self.path, 0, self._fh)
        fsync_dir(self.path.parent)
        self.generation = self.settled = 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

