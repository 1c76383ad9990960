"""The empty lines of a CSV file, so a row keeps its line number past them.

pyarrow's CSV reader skips empty lines and numbers the rows after them as if they were
not there, yet counts them among the lines it skips when a read resumes. Where a row's
line is its id (``event_id: {source: order}``), that would move every id after an empty
line by one, and an outcomes file paired with its predictions row by row would pair each
later outcome with the next application: a one-column outcomes file that pandas writes
with a missing label holds exactly such a line. In any CSV stream it would put a bad row
at the wrong line in the dead letters, and resume a checkpointed read one row early per
empty line before it, giving those rows twice. :class:`BlankLines`
knows where the empty lines are and turns pyarrow's numbers (lines counted without the
empty ones) into the file's own line numbers, and back.

>>> b = BlankLines()
>>> b.feed(b"default\\n0\\n\\n1\\r\\n\\r\\n1\\n")
>>> b.lines.tolist()  # line 3 is empty, and line 5 (a lone carriage return)
[3, 5]
>>> b.physical(np.array([2, 3, 4])).tolist()  # rows 0, 1 and 1 as pyarrow numbers them
[2, 4, 6]
>>> b.counted(6), b.counted(3)
(4, 2)
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

__all__ = ["BlankLines", "BlankTee"]

class BlankLines:
    """The line numbers (1-based, ascending) of a file's empty lines after its first
    (those with no byte but a carriage return; pyarrow takes the first line it keeps as the
    header): given, or found in the file's bytes as they are read (:meth:`feed`, as
    :class:`BlankTee` does)."""

    def __init__(self, lines: np.ndarray | None = None) -> None:
        self._set(np.zeros(0, np.int64) if lines is None else np.asarray(lines, np.int64))
        self._line, self._last_nl, self._prev, self._at = 1, -1, 0, 0  # where feed is

    def _set(self, lines: np.ndarray) -> None:
        self.lines = lines
        # a row pyarrow numbers n lies past the i-th empty line when n >= lines[i] - i
        self._after = self.lines - np.arange(len(self.lines), dtype=np.int64)

    def feed(self, block: bytes) -> None:
        """Take the file's next bytes: the empty lines they end are added to :attr:`lines`
        (a line end split from its line by the block's edge included)."""
        if not block:
            return
        buf = np.frombuffer(block, np.uint8)
        at = self._at
        nl = np.flatnonzero(buf == 10) + at
        if len(nl):
            starts = np.concatenate(([self._last_nl + 1], nl[:-1] + 1))
            length = nl - starts
            before = buf[np.maximum(nl - at - 1, 0)]  # the byte before each
            if nl[0] == at:  # the block's first byte ends a line: the last block's
                before[0] = self._prev
            empty = (length == 0) | ((length == 1) & (before == 13))
            numbers = self._line + np.flatnonzero(empty)
            if (numbers := numbers[numbers > 1]).size:
                self._set(np.concatenate((self.lines, numbers)))
            self._line += len(nl)
            self._last_nl = int(nl[-1])
        self._prev, self._at = int(buf[-1]), at + len(buf)

    @property
    def ends(self) -> int:
        """How many line ends the bytes fed so far hold."""
        return self._line - 1

    def physical(self, n: np.ndarray) -> np.ndarray:
        """The file's line numbers of lines pyarrow numbers ``n`` (empty lines skipped)."""
        if not len(self.lines):
            return n
        return n + np.searchsorted(self._after, n, side="right")

    def counted(self, line: int) -> int:
        """The number pyarrow gives the file's line ``line`` (or, for an empty line, the
        line before it): ``line`` less the empty lines up to it."""
        return line - int(np.searchsorted(self.lines, line, side="right"))


class BlankTee(io.RawIOBase):
    """A readable stream passing ``stream``'s bytes through, and the empty lines among
    them to :attr:`blanks` as they go by: a CSV reader given it finds the empty lines of
    what it has read in the same pass over the file, not by reading (and decompressing)
    it once more.

    >>> import pyarrow as pa
    >>> tee = BlankTee(pa.BufferReader(b"a\\n1\\n\\n2\\n"))
    >>> tee.read(5), tee.blanks.lines.tolist(), tee.read(), tee.blanks.lines.tolist()
    (b'a\\n1\\n\\n', [3], b'2\\n', [3])
    """

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self._stream = stream
        self.blanks = BlankLines()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read() if size is None or size < 0 else self._stream.read(size)
        data = bytes(data)
        self.blanks.feed(data)
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._stream.close()
        super().close()
