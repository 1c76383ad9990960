"""Where the lines of a file's bytes end: the offsets of their newline bytes.

A file reader finds them once per byte read (:class:`~driftwatch.connectors.readers.
FileReader`), to cut blocks of whole lines and to hand the decoder each line's end. A
compiled loop makes one pass over the bytes (:mod:`driftwatch.connectors._lineloops`,
loaded with the JSON scanner's loops); without it, numpy makes two, with a mask as long
as the bytes between them. Both give the same offsets.

>>> data = np.frombuffer(b'{"a": 1}\\n{"a": 2}\\n{"a"', np.uint8)
>>> line_ends(data, 0, data.size).tolist()
[8, 17]
>>> line_ends(data, 9, 9).tolist()  # offsets into the whole of data
[17]
"""

from __future__ import annotations

import numpy as np

from driftwatch.connectors.jsonscan import line_finder

__all__ = ["line_ends"]


def line_ends(data: np.ndarray, start: int, count: int) -> np.ndarray:
    """The offsets (``int64``, ascending, into ``data``) of the newlines among the
    ``count`` bytes of ``data`` (``uint8``) from ``start``."""
    loop = line_finder()
    if loop is None:
        return np.flatnonzero(data[start : start + count] == 10) + start
    out = np.empty(count, np.int64)  # pages past the newlines found are never touched
    return out[: loop(data, start, count, out)].copy()
