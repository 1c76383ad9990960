"""A plain file mapped read-only into memory, for a reader that scans its bytes in place.

A mapped file is read from the page cache as it stands: no read copies its bytes into a
buffer first. The price is that a page the file no longer holds (it was truncated while
mapped) cannot be read: touching it raises ``SIGBUS``, which Python cannot catch and
which ends the process. A reader therefore maps a file only where that is survivable
(the reader process of :mod:`driftwatch.connectors.file_process`, whose death the loop's
process reports as a :class:`~driftwatch.errors.SourceError`), and asks :func:`shrank`
before each stretch it reads, so a truncation seen between stretches is an error with a
message rather than a signal.

The pages already read are let go as the reader moves on (:func:`drop_behind`): the
process would otherwise hold the whole file in its resident set by the end (a 368 MB
recording: 368 MB more), though they are the page cache's, shared and clean.

Only a regular, non-empty file is mapped; a pipe, a character device or an empty file
gives ``None`` and is read as before. Compressed files are never handed here: their
bytes are not the file's.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
from typing import IO

__all__ = ["drop_behind", "map_file", "shrank"]


def map_file(raw: IO[bytes]) -> mmap.mmap | None:
    """``raw``'s whole file mapped read-only and advised as read in order, or ``None``
    where it cannot be (not a regular file, empty, or the platform refuses).

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as f:
    ...     _ = f.write(b'{"a": 1}\\n')
    ...     f.flush()
    ...     m = map_file(f)
    ...     (m[:8], len(m))
    ...     m.close()
    (b'{"a": 1}', 9)
    """
    try:
        fd = raw.fileno()
        st = os.fstat(fd)
    except (OSError, ValueError, AttributeError):
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return None
    try:
        m = mmap.mmap(fd, st.st_size, access=mmap.ACCESS_READ)
    except (OSError, ValueError, OverflowError):
        return None
    advise = getattr(m, "madvise", None)
    sequential = getattr(mmap, "MADV_SEQUENTIAL", None)
    if advise is not None and sequential is not None:
        with contextlib.suppress(OSError):  # advice only
            advise(sequential)  # read ahead in bulk, pages behind dropped first
    return m


def shrank(raw: IO[bytes], mapped: int) -> int | None:
    """The file's size now when it holds fewer than the ``mapped`` bytes, else ``None``
    (it holds them all, or more: bytes appended after the mapping are read as before)."""
    size = os.fstat(raw.fileno()).st_size
    return size if size < mapped else None


def drop_behind(m: mmap.mmap, dropped: int, pos: int) -> int:
    """Let the process's mapping go of the whole pages of ``m`` from ``dropped`` up to
    ``pos`` (read, never read again): they leave its resident set and stay in the page
    cache, read back from there should they be touched. Returns where the pages let go
    end now (the new ``dropped``).

    >>> import tempfile
    >>> with tempfile.TemporaryFile() as f:
    ...     _ = f.write(b"x" * (3 * mmap.PAGESIZE))
    ...     f.flush()
    ...     m = map_file(f)
    ...     done = drop_behind(m, 0, 2 * mmap.PAGESIZE + 5)
    ...     (done // mmap.PAGESIZE, m[:1], m[-1:])  # still readable: refaulted
    ...     m.close()
    (2, b'x', b'x')
    """
    end = pos - pos % mmap.PAGESIZE
    advise = getattr(m, "madvise", None)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    if end <= dropped or advise is None or dontneed is None:
        return dropped
    with contextlib.suppress(OSError, ValueError):  # advice only
        advise(dontneed, dropped, end - dropped)
    return end
