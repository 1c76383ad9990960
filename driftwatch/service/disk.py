"""The state folder's health: a full or read-only disk pauses the daemon, never stops it.

Any thread that finds a write to the state folder refused for lack of room or permission
(:func:`~driftwatch.state.write_fault`) calls :meth:`StateDisk.failed`. From then on the
run loop consumes nothing and commits nothing; at growing intervals (``first_retry_s``
doubling up to ``max_retry_s``, on the injected clock) it :meth:`probes <StateDisk.probe>`
the folder with a real write and fsync. Once a probe succeeds the loop goes back to the
last durable checkpoint (as a restart would) and calls :meth:`StateDisk.recovered`.
Each change of state is logged once; every refused write is counted by reason.

:meth:`StateDisk.readiness` is the one hook readiness reads: ``(writable, reason)``.

>>> import errno, tempfile
>>> from driftwatch.clock import ManualClock
>>> clock = ManualClock(0.0)
>>> disk = StateDisk(tempfile.mkdtemp(), clock=clock, first_retry_s=1.0, max_retry_s=4.0)
>>> disk.readiness()
(True, None)
>>> disk.failed(OSError(errno.ENOSPC, "No space left on device"), where="timeline")
True
>>> disk.readiness()
(False, 'state folder full: timeline: [Errno 28] No space left on device')
>>> disk.retry_due(), disk.seconds_to_retry()
(False, 1.0)
>>> clock.advance(1.0)
>>> disk.retry_due(), disk.probe()
(True, True)
>>> disk.recovered()
>>> disk.readiness(), disk.failures
((True, None), {'full': 1})
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path

from driftwatch.clock import Clock
from driftwatch.metrics import Metrics
from driftwatch.state import write_fault

__all__ = ["PROBE_FILE", "StateDisk"]

log = logging.getLogger(__name__)

PROBE_FILE = ".write-probe"
_WORDS = {"full": "full", "read_only": "read-only"}


class StateDisk:
    """Whether the state folder takes writes, why not, and when to try again (module doc).

    Thread-safe: the loop, the checkpoint writer and the actions' scheduler job all report.
    ``probe_bytes`` are written (and fsynced) by each probe, so a folder with a few free
    blocks is not taken for one with room for a checkpoint.
    """

    def __init__(self, state_dir: str | Path, *, clock: Clock, metrics: Metrics | None = None,
                 first_retry_s: float = 1.0, max_retry_s: float = 60.0,
                 probe_bytes: int = 256 * 1024) -> None:
        self.state_dir = Path(state_dir)
        self.clock = clock
        self.metrics = metrics
        self.first_retry_s = float(first_retry_s)
        self.max_retry_s = float(max_retry_s)
        self.probe_bytes = int(probe_bytes)
        self.failures: dict[str, int] = {}
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._since = 0.0
        self._delay = self.first_retry_s
        self._retry_at = 0.0

    # -- what readiness and the loop read -------------------------------------------------------
    @property
    def writable(self) -> bool:
        with self._lock:
            return self._reason is None

    def readiness(self) -> tuple[bool, str | None]:
        """``(True, None)`` while writes work, else ``(False, why)``: the readiness hook."""
        with self._lock:
            return self._reason is None, self._reason

    def retry_due(self) -> bool:
        """Paused and the next probe is due."""
        with self._lock:
            return self._reason is not None and self.clock.monotonic() >= self._retry_at

    def seconds_to_retry(self) -> float:
        with self._lock:
            return max(0.0, self._retry_at - self.clock.monotonic())

    # -- what writers report --------------------------------------------------------------------
    def failed(self, exc: BaseException, *, where: str) -> bool:
        """Report an exception from a write; True when it is a disk fault (now paused,
        counted, logged on the change), False when it is something else (the caller's)."""
        kind = write_fault(exc)
        if kind is None:
            return False
        now = self.clock.monotonic()
        with self._lock:
            self.failures[kind] = self.failures.get(kind, 0) + 1
            first = self._reason is None
            if first:
                self._since = now
                self._delay = self.first_retry_s
            else:  # a failed retry: wait twice as long next time
                self._delay = min(self._delay * 2, self.max_retry_s)
            self._reason = f"state folder {_WORDS[kind]}: {where}: {_brief(exc)}"
            self._retry_at = now + self._delay
            reason = self._reason
        if self.metrics is not None:
            self.metrics["state_write_failures_total"].labels(reason=kind).inc()
            self.metrics["state_writable"].set(0)
        if first:
            log.error("%s; consumption paused, nothing is committed; retrying with backoff "
                      "(up to every %.0fs) and resuming from the last checkpoint once "
                      "writes work", reason, self.max_retry_s)
        else:
            log.debug("still paused: %s", reason)
        return True

    def probe(self) -> bool:
        """Write, fsync and remove a probe file; False (a failure reported) when refused."""
        path = self.state_dir / PROBE_FILE
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(bytes(self.probe_bytes))
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            path.unlink()
        except OSError as exc:
            with contextlib.suppress(OSError):
                path.unlink(missing_ok=True)
            if not self.failed(exc, where="probe"):
                raise
            return False
        return True

    def recovered(self) -> None:
        """Writes work again and the loop resumed: log it once, clear the reason."""
        with self._lock:
            if self._reason is None:
                return
            self._reason = None
            paused = self.clock.monotonic() - self._since
        if self.metrics is not None:
            self.metrics["state_writable"].set(1)
        log.warning("state folder writable again after %.0fs; resumed from the last "
                    "durable checkpoint", paused)


def _brief(exc: BaseException) -> str:
    """The innermost cause's text (SQLite's or the OS's words, not the wrapper's)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    return str(exc) or type(exc).__name__
