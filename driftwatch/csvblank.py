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

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "o.csv"
>>> _ = p.write_bytes(b"default\\n0\\n\\n1\\r\\n\\r\\n1\\n")
>>> b = BlankLines.of(p)
>>> b.lines.tolist()  # line 3 is empty, and line 5 (a lone carriage return)
[3, 5]
>>> b.physical(np.array([2, 3, 4])).tolist()  # rows 0, 1 and 1 as pyarrow numbers them
[2, 4, 6]
>>> b.counted(6), b.counted(3)
(4, 2)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

__all__ = ["BlankLines"]

#: Bytes read at a time while looking for empty lines
_BLOCK = 1 << 24


class BlankLines:
    """The line numbers (1-based, ascending) of a file's empty lines after its first."""

    def __init__(self, lines: np.ndarray | None = None) -> None:
        self.lines = np.zeros(0, np.int64) if lines is None else np.asarray(lines, np.int64)
        # a row pyarrow numbers n lies past the i-th empty line when n >= lines[i] - i
        self._after = self.lines - np.arange(len(self.lines), dtype=np.int64)

    @classmethod
    def of(cls, path: str | Path) -> BlankLines:
        """The empty lines of the file at ``path`` (gzip and the like read through): those
        with no byte but a carriage return, after the first line (pyarrow takes the first
        line it keeps as the header)."""
        found: list[np.ndarray] = []
        line, last_nl, prev = 1, -1, 0  # the line being read, where the last ended
        at = 0
        with pa.input_stream(str(path), compression="detect") as f:
            while block := f.read(_BLOCK):
                buf = np.frombuffer(block, np.uint8)
                nl = np.flatnonzero(buf == 10) + at
                if len(nl):
                    starts = np.concatenate(([last_nl + 1], nl[:-1] + 1))
                    length = nl - starts
                    before = buf[np.maximum(nl - at - 1, 0)]  # the byte before each
                    if nl[0] == at:  # the block's first byte ends a line: the last block's
                        before[0] = prev
                    empty = (length == 0) | ((length == 1) & (before == 13))
                    numbers = line + np.flatnonzero(empty)
                    found.append(numbers[numbers > 1])
                    line += len(nl)
                    last_nl = int(nl[-1])
                prev, at = int(buf[-1]), at + len(buf)
        return cls(np.concatenate(found) if found else None)

    def physical(self, n: np.ndarray) -> np.ndarray:
        """The file's line numbers of lines pyarrow numbers ``n`` (empty lines skipped)."""
        if not len(self.lines):
            return n
        return n + np.searchsorted(self._after, n, side="right")

    def counted(self, line: int) -> int:
        """The number pyarrow gives the file's line ``line`` (or, for an empty line, the
        line before it): ``line`` less the empty lines up to it."""
        return line - int(np.searchsorted(self.lines, line, side="right"))
