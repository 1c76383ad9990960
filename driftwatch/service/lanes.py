"""Action lanes: daemon threads that run the daemon's action work off the consume loop.

Work that may wait on something outside the process (an MLflow call, a webhook) runs in a
:class:`Lane`, never in the consume loop, the checkpoint or APScheduler's pool (whose
threads the interpreter joins at exit). A lane runs its periodic jobs, and the hand-offs
posted to it (a bounded queue: when it is full a hand-off is refused, not waited for), one
at a time. ``stop`` asks it to end and waits at most its grace; a lane still inside a call
then is *abandoned*: a daemon thread does not hold the process, and the action it was
running stays open in the outbox, resumed exactly once on the next start.

>>> import threading
>>> from driftwatch.clock import ManualClock
>>> ran, done = [], threading.Event()
>>> lane = Lane("demo", [("tick", 60.0, lambda: ran.append("tick"))], clock=ManualClock())
>>> lane.start()
>>> lane.post(lambda: (ran.append("hand-off"), done.set()))
True
>>> done.wait(5.0)
True
>>> lane.stop(timeout_s=5.0)
True
>>> ran   # the tick is due only after 60 s of the lane's clock
['hand-off']
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence

from driftwatch.clock import Clock
from driftwatch.service.scheduler import JobReport

__all__ = ["Lane", "LaneJob"]

log = logging.getLogger(__name__)

#: ``(name, every_s, func)``: ``func`` runs every ``every_s`` seconds (first after one period)
LaneJob = tuple[str, float, Callable[[], None]]


class Lane:
    """One daemon thread for periodic jobs and hand-offs (see module doc)."""

    def __init__(self, name: str, jobs: Sequence[LaneJob], *, clock: Clock,
                 report: JobReport | None = None, queue_size: int = 64) -> None:
        self.name = name
        self._jobs = list(jobs)
        self._clock = clock
        self._report = report
        self._queue: queue.Queue[Callable[[], None]] = queue.Queue(maxsize=queue_size)
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._kicked: set[str] = set()
        self._busy: str | None = None
        self._busy_since = 0.0
        self._thread = threading.Thread(target=self._main, name=f"driftwatch-{name}",
                                        daemon=True)

    @property
    def busy(self) -> str | None:
        """What the lane runs now (a job's name, ``hand-off``), None when it waits."""
        return self._busy

    @property
    def busy_for(self) -> float:
        """How long the lane has been in what it runs now, in seconds (0.0 when it waits)."""
        return self._clock.monotonic() - self._busy_since if self._busy is not None else 0.0

    def start(self) -> None:
        self._thread.start()

    def post(self, fn: Callable[[], None]) -> bool:
        """Queue ``fn`` for the lane; False (nothing queued) when the queue is full or the
        lane stops."""
        if self._stopping.is_set():
            return False
        try:
            self._queue.put_nowait(fn)
        except queue.Full:
            return False
        self._wake.set()
        return True

    def kick(self, job: str) -> None:
        """Run ``job`` as soon as the lane is free, then on its period again."""
        self._kicked.add(job)
        self._wake.set()

    def request_stop(self) -> None:
        """Ask the lane to end after what it runs now (returns at once)."""
        self._stopping.set()
        self._wake.set()

    def stop(self, timeout_s: float) -> bool:
        """End the lane, waiting at most ``timeout_s``; False when it was abandoned."""
        self.request_stop()
        if self._thread.is_alive() and self._thread.ident is not None:
            self._thread.join(max(0.0, timeout_s))
        if self._thread.is_alive():
            held = self._clock.monotonic() - self._busy_since
            log.warning("the %s thread is still in %s after %.1fs; abandoned (its action "
                        "stays open in the outbox and resumes on the next start)",
                        self.name, self._busy or "a call", held)
            return False
        return True

    # -- the thread ---------------------------------------------------------------------------
    def _main(self) -> None:
        due = {name: self._clock.monotonic() + every for name, every, _ in self._jobs}
        while not self._stopping.is_set():
            self._drain()
            for name, every, fn in self._jobs:
                if self._stopping.is_set():
                    break
                now = self._clock.monotonic()
                if now >= due[name] or name in self._kicked:
                    self._kicked.discard(name)
                    self._run(name, fn)
                    due[name] = self._clock.monotonic() + every
            if self._stopping.is_set():
                break
            wait = min(due.values(), default=60.0) - self._clock.monotonic() \
                if self._jobs else 60.0
            if self._queue.empty() and not self._kicked:
                self._wake.wait(max(0.0, min(wait, 60.0)))
            self._wake.clear()

    def _drain(self) -> None:
        while not self._stopping.is_set():
            try:
                fn = self._queue.get_nowait()
            except queue.Empty:
                return
            self._call("hand-off", fn)

    def _run(self, name: str, fn: Callable[[], None]) -> None:
        t0 = self._clock.monotonic()
        ok = self._call(name, fn)
        if self._report is not None:
            self._report(name, max(0.0, self._clock.monotonic() - t0), ok)

    def _call(self, what: str, fn: Callable[[], None]) -> bool:
        self._busy, self._busy_since = what, self._clock.monotonic()
        try:
            fn()
            return True
        except Exception:  # one failed run must not end the lane
            log.exception("%s: %s failed", self.name, what)
            return False
        finally:
            self._busy = None
