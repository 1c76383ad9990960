"""Reading and decoding a replay's files in a process of its own, one core beside the loop.

A replay's loop (label join, windows, detectors, policy, timeline) and its file source
(reading, JSON/CSV decoding, merging the streams in event time) are both mostly Python,
so a reading thread shares one GIL with the loop and gains little. :class:`ProcessSource`
runs the :class:`~driftwatch.connectors.file.FileSource` in a forked child instead: the
child polls it as the loop would and hands each :class:`~driftwatch.connectors.base.Polled`
over a pipe (a few polls ahead, their arrays out of band: :mod:`~driftwatch.connectors.
handover`), while the loop works on the previous one.

The polls are the very ones the source gives in the loop's own process: the same
records, order, bad records and positions, so every window, verdict and timeline line is
the same. Bad records are written to the dead-letter file by the loop's process, when it
takes the poll that holds them, as the source would have. A reading error in the child
is raised by :meth:`ProcessSource.poll` with its message.

It needs ``fork`` and a second core (by default on Linux only);
:func:`reads_in_process` says when it is worth it.

>>> from driftwatch.connectors.file_process import reads_in_process
>>> reads_in_process(total_bytes=1_000, wanted=None)
False
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from driftwatch.connectors.base import Polled
from driftwatch.connectors.file import FileSource
from driftwatch.connectors.handover import (
    ended_early,
    fork_child,
    frames,
    pipe,
    receive,
    write_frames,
)
from driftwatch.connectors.jsonscan import finish_scanner_load, leave_cores
from driftwatch.cores import usable_cores
from driftwatch.errors import DriftwatchError, SourceError

__all__ = ["MIN_PROCESS_BYTES", "ProcessSource", "input_bytes", "reads_in_process"]

#: Inputs smaller than this (decompressed) are read in the loop's process: a child's start and the
#: hand-over cost more than they save on a recording read in a second or two.
MIN_PROCESS_BYTES = 64 << 20

#: Polls the child may hold decoded ahead of the loop (memory: that many batches).
_AHEAD = 3


def input_bytes(paths: Sequence[str | Path]) -> int:
    """The bytes the inputs hold once decompressed: a gzip file's size is its trailer's
    (the size modulo 4 GiB, so never taken below the compressed size), any other's its
    own. A file that cannot be read counts nothing (opening it says why).

    >>> import gzip, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d, "a.jsonl.gz")
    ...     _ = p.write_bytes(gzip.compress(b"{}\\n" * 1000))
    ...     input_bytes([p, Path(d, "missing.jsonl")])
    3000
    """
    total = 0
    for p in map(Path, paths):
        try:
            size = p.stat().st_size
            with p.open("rb") as f:
                if f.read(2) == b"\x1f\x8b" and size >= 20:
                    f.seek(-4, 2)
                    size = max(size, int.from_bytes(f.read(4), "little"))
        except OSError:
            continue
        total += size
    return total


def reads_in_process(*, total_bytes: int, wanted: bool | None) -> bool:
    """Whether a replay reads its files in a child process: ``wanted`` when given (True
    still needs ``fork``), else on Linux with a second core and at least
    :data:`MIN_PROCESS_BYTES` of input (macOS has ``fork`` too, but system libraries
    there may not survive it)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return False
    if wanted is not None:
        return wanted
    return (sys.platform.startswith("linux") and usable_cores() >= 2
            and total_bytes >= MIN_PROCESS_BYTES)


def _serve(source: FileSource, out: int, limit: int) -> None:
    """The child: poll the source to its end, writing each poll to the pipe ``out``
    (:mod:`~driftwatch.connectors.handover`), then ``end``, or the error that stopped
    it, pickled here (an error that cannot be pickled goes as its text)."""
    leave_cores(1)
    # a file truncated while mapped ends this process with SIGBUS, which the loop's
    # process reports (ProcessSource.poll); in the loop's own process it would end the run
    source.map_files = True
    sender = _Sender(out)
    try:
        while (polled := source.poll(limit)) is not None:
            sender.put(("poll", polled))
        sender.put(("end", None))
    except BaseException as exc:  # the loop's process reports it, with its message
        try:
            payload = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            payload = None
        sender.put(("error", (payload, f"{type(exc).__name__}: {exc}",
                              isinstance(exc, DriftwatchError))))
    finally:
        sender.finish()
        source.close()


def _child(source: FileSource, read_fd: int, write_fd: int, limit: int) -> None:
    """The child's start: it lets go of the loop's end of the pipe, so that a write to
    the pipe fails once the loop's process is gone, rather than wait for a reader."""
    os.close(read_fd)
    _serve(source, write_fd, limit)


class _Sender:
    """Writes the child's messages to the pipe on a thread of its own, so the child
    decodes the next poll while a poll waits for the loop to read it: :data:`_AHEAD`
    polls ahead of the loop at most, the one being written included."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._waiting: queue.Queue[list[object] | None] = queue.Queue(_AHEAD - 1)
        self._thread = threading.Thread(target=self._write, name="driftwatch-read-send",
                                        daemon=True)
        self._thread.start()

    def put(self, message: object) -> None:
        # the frames are views of the poll's arrays, which nothing writes once handed out
        self._waiting.put(frames(message))

    def finish(self) -> None:
        """Wait until every message is written (or the loop's process is gone)."""
        self._waiting.put(None)
        self._thread.join()

    def _write(self) -> None:
        while (parts := self._waiting.get()) is not None:
            try:
                write_frames(self._fd, parts)
            except OSError:  # the loop's process is gone: nobody reads what is left
                os._exit(1)


class ProcessSource:
    """A :class:`~driftwatch.connectors.file.FileSource` polled in a forked child (see the
    module docstring). Poll it to its end, then :meth:`close` it; it reads from the
    source's current positions once and is not rewound (:meth:`seek` is refused)."""

    def __init__(self, source: FileSource) -> None:
        self._source = source
        # bad records are written here, in the loop's process, as the source would
        self.dead_letter = source.dead_letter
        source.dead_letter = None
        self._proc: Any = None
        self._fd = -1  # the pipe's reading end, once the child runs
        self._positions: dict[str, int] = source.positions
        self._done = False

    @property
    def positions(self) -> dict[str, int]:
        """Lines consumed per input file, as of the last poll handed out."""
        return dict(self._positions)

    def start(self, max_records: int | None = None) -> None:
        """Fork the reader now (the first :meth:`poll` does otherwise), for a caller with
        work of its own to do while the child decodes its first polls; ``max_records``
        as :meth:`poll` takes it. Started already: nothing."""
        if self._proc is None and not self._done:
            self._start(max_records or self._source.batch_size)

    def _start(self, limit: int) -> None:
        finish_scanner_load()  # the child then has the loops from its first block
        read_fd, write_fd = pipe()  # a poll in one or two writes, not two dozen
        # the reader has its own core now: the source's read-ahead thread would only
        # contend with its merging for the child's GIL
        self._source.read_ahead = False
        proc = fork_child(_child, (self._source, read_fd, write_fd, limit), "driftwatch-read",
                          ours=(read_fd,), theirs=(write_fd,))
        self._proc, self._fd = proc, read_fd

    def poll(self, max_records: int | None = None, timeout_s: float = 1.0) -> Polled | None:
        """The source's next poll, decoded in the child; ``None`` at the end. Every poll
        takes the first call's ``max_records`` (the source's batch size by default)."""
        if self._done:
            return None
        if self._proc is None:
            self._start(max_records or self._source.batch_size)
        try:
            kind, payload = receive(self._fd)
        except EOFError:  # the child ended without a last word: a signal, or exit
            self._done = True
            self._proc.join(timeout=10)
            raise SourceError(_ended(self._proc.exitcode)) from None
        if kind == "end":
            self._done = True
            return None
        if kind == "error":
            self._done = True
            raise _error(*payload)
        polled: Polled = payload
        self._positions = dict(polled.positions)
        if self.dead_letter is not None and polled.bad:
            self.dead_letter.write(polled.bad)
            self.dead_letter.flush()
        return polled

    def fileno(self) -> int:
        """The pipe's reading end in this process (-1 before the reader starts): a process
        forked later lets go of it, so the reader's writes fail once the loop is gone."""
        return self._fd

    def seek(self, positions: Mapping[str, int]) -> None:
        raise SourceError("a replay's reader process cannot seek: read the files in "
                          "the loop's process to resume from positions")

    def commit(self, positions: Mapping[str, int]) -> None:
        """Nothing to acknowledge for files."""

    def close(self) -> None:
        """Stop the child (if it still reads) and flush the dead-letter file."""
        self._done = True
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.terminate()
            self._proc.join(timeout=10)
            os.close(self._fd)
            self._proc, self._fd = None, -1
        if self.dead_letter is not None:
            self.dead_letter.flush()


def _ended(exitcode: int | None) -> str:
    """Why the reader process ended early, from its exit code (``-N``: signal ``N``).

    >>> import signal
    >>> _ended(-signal.SIGBUS).split(":")[0]
    'the file reader process was stopped by SIGBUS before the end of the files'
    >>> _ended(3)
    'the file reader process ended (exit code 3) before the end of the files'
    """
    why, name = ended_early("file reader", "the end of the files", exitcode)
    if name == "SIGBUS":  # a page of a mapped file that is no longer there
        why += (": was a file truncated while it was read? Read it again once it is "
                "written whole")
    return why


def _error(payload: bytes | None, text: str, ours: bool) -> BaseException:
    """The child's error as raised there when it pickles back whole, else a
    :class:`~driftwatch.errors.SourceError` with its text."""
    if payload is not None:
        try:
            exc = pickle.loads(payload)
        except Exception:
            exc = None
        if isinstance(exc, BaseException):
            return exc
    return SourceError(text.split(": ", 1)[1] if ours else f"reading failed: {text}")
