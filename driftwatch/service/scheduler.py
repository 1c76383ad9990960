"""Wall-clock work beside the consume loop: APScheduler 3.11 interval jobs and a hand-off inbox.

The consume loop owns the monitors (windows, joiner, engine state) and runs in the main
thread. Scheduled jobs run in APScheduler's worker thread, so a job that would touch what
the loop owns posts a closure to the :class:`LoopInbox` instead; the loop runs it between
two batches. Jobs that only read published snapshots or talk to their own thread-safe
components (pool, action executor) run in place.

Every job is added with explicit ``misfire_grace_time`` (a run later than that is
skipped: a checkpoint from ten minutes ago is no use), ``coalesce`` (missed runs collapse
into one) and ``max_instances=1`` (a slow run is never overlapped by the next).

>>> inbox = LoopInbox()
>>> inbox.post(lambda: print("ran in the loop"))
>>> inbox.drain()
ran in the loop
1
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

from driftwatch.clock import Clock, SystemClock
from driftwatch.state import write_fault

__all__ = ["JobReport", "LoopInbox", "ServiceScheduler"]

log = logging.getLogger(__name__)

#: ``(job, seconds, ok)`` after every run, for metrics.
JobReport = Callable[[str, float, bool], None]


class LoopInbox:
    """Closures handed from other threads to the consume loop, run there in order."""

    def __init__(self) -> None:
        self._q: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.wake = threading.Event()  # set on every post so a waiting loop looks at once

    def post(self, fn: Callable[[], None]) -> None:
        self._q.put(fn)
        self.wake.set()

    def drain(self) -> int:
        """Run what is queued (in the calling thread); returns how many ran."""
        n = 0
        while True:
            try:
                fn = self._q.get_nowait()
            except queue.Empty:
                return n
            try:
                fn()
            except Exception as exc:  # one failed hand-off must not stop the loop
                if write_fault(exc) is not None:  # the state folder's: the loop pauses
                    raise
                log.exception("work handed to the loop failed")
            n += 1


@dataclass(frozen=True)
class _Job:
    name: str
    every_s: float
    func: Callable[[], None]


class ServiceScheduler:
    """Named interval jobs on a :class:`BackgroundScheduler` with explicit misfire rules."""

    def __init__(
        self,
        *,
        misfire_grace_time_s: float = 30.0,
        coalesce: bool = True,
        clock: Clock | None = None,
        report: JobReport | None = None,
    ) -> None:
        self.misfire_grace_time_s = float(misfire_grace_time_s)
        self.coalesce = bool(coalesce)
        self._clock = clock or SystemClock()
        self._report = report
        self._jobs: dict[str, _Job] = {}
        self._scheduler = BackgroundScheduler(
            timezone=UTC,
            job_defaults={
                "misfire_grace_time": max(1, int(self.misfire_grace_time_s)),
                "coalesce": self.coalesce,
                "max_instances": 1,
            },
            executors={"default": {"type": "threadpool", "max_workers": 2}},
        )

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running)

    def add(self, name: str, every_s: float, func: Callable[[], None]) -> None:
        """Run ``func`` every ``every_s`` seconds of wall time (first run after one period)."""
        if name in self._jobs:
            raise ValueError(f"job {name!r} already scheduled")
        if every_s <= 0:
            raise ValueError(f"job {name!r}: interval must be positive, got {every_s}")
        job = _Job(name, float(every_s), func)
        self._jobs[name] = job
        self._scheduler.add_job(
            self._run,
            IntervalTrigger(seconds=job.every_s, timezone=UTC),
            args=(job,),
            id=name,
            name=name,
            misfire_grace_time=max(1, int(self.misfire_grace_time_s)),
            coalesce=self.coalesce,
            max_instances=1,
            replace_existing=False,
        )

    def run_now(self, name: str) -> None:
        """Run a job once in the calling thread (start-up, tests)."""
        self._run(self._jobs[name])

    def _run(self, job: _Job) -> None:
        t0 = self._clock.monotonic()
        ok = True
        try:
            job.func()
        except Exception:
            ok = False
            log.exception("scheduled job %s failed", job.name)
        if self._report is not None:
            self._report(job.name, max(0.0, self._clock.monotonic() - t0), ok)

    def start(self) -> None:
        if not self._scheduler.running:
            self._scheduler.start()

    def shutdown(self, wait: bool = True) -> None:
        """Stop scheduling; with ``wait`` a job already running is let finish."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
