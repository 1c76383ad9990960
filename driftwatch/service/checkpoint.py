"""The daemon's checkpoint protocol: capture, make durable, then commit source positions.

::

    loop thread:   for each model: sync its outputs, capture its state (under the lock)
    writer thread:   write that model's part and new rows, fsync  <- the loop goes on
    writer thread: write the manifest naming every part, fsync, rename: durable
    loop thread:   checkpoint durable -> source.commit(positions it covers)

Models are captured one after the other; the loop captures the next while the writer
writes the one before, and waits when one more is already waiting, so at most two
models' states are ever held twice in memory. A capture copies only
the rows of append-only tables (labelled buffer, joiner stores) that the store does not
hold yet, so its cost follows what changed since the last checkpoint. Each model's part is
consistent with its own positions and outputs, which is all a restore needs (models do
not share sources). Offsets never move ahead of durable state (DESIGN invariant 3). At
shutdown :meth:`Checkpoints.final` does it all in a row.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftwatch import __version__
from driftwatch.clock import Clock
from driftwatch.errors import StateError
from driftwatch.metrics import Metrics
from driftwatch.service.model import ModelRuntime
from driftwatch.state import Checkpoint, CheckpointInfo, CheckpointStore, Staged

__all__ = ["CheckpointWriter", "Checkpoints", "Durable"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Durable:
    """A checkpoint that is on disk, with the source positions it covers (to commit now)."""

    info: CheckpointInfo
    positions: dict[str, dict[str, int]]
    seconds: float  # from capture to durable
    #: per model, the timeline generation the checkpoint ends in (its older segments may go)
    generations: dict[str, int] = field(default_factory=dict)


class CheckpointWriter:
    """Encodes and writes checkpoints on a background thread, one job at a time.

    The run loop captures one model's state at a time (under its lock) and hands it to
    :meth:`encode`; while this thread writes it to the store (a staged part, fsynced) the
    loop goes on, and may capture the next model, which waits its turn: a job is taken
    only while none is waiting (:attr:`ready`), so at most two models' states exist twice
    in memory. :meth:`save` then writes the
    manifest that makes every staged part one checkpoint. Once it is durable,
    :meth:`completed` gives it back to the loop, which then commits the positions it
    covers: offsets never move ahead of durable state. A failed write is kept in
    :attr:`error` and its positions are never handed back.
    """

    def __init__(self, store: CheckpointStore, *, timer: Any = time.perf_counter) -> None:
        self.store = store
        self._timer = timer
        self._cv = threading.Condition()
        self._job: tuple[Any, ...] | None = None
        self._busy = False
        self._parts: dict[str, Staged] = {}
        self._done: list[Durable] = []
        self.error: Exception | None = None
        self.failures = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="driftwatch-checkpoint",
                                        daemon=True)
        self._thread.start()

    @property
    def busy(self) -> bool:
        """A job is being written or waits."""
        with self._cv:
            return self._busy or self._job is not None

    @property
    def ready(self) -> bool:
        """A job would be taken now (none waits; one may be being written)."""
        with self._cv:
            return self._job is None and not self._closed

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until a job would be taken; False on timeout."""
        with self._cv:
            return self._cv.wait_for(lambda: self._job is None, timeout)

    def _put(self, job: tuple[Any, ...]) -> bool:
        with self._cv:
            if self._job is not None or self._closed:
                return False
            self._job = job
            self._cv.notify_all()
            return True

    def encode(self, name: str, state: Any) -> bool:
        """Stage one model's captured state; False (nothing taken) unless :attr:`ready`."""
        return self._put(("encode", name, state))

    def save(self, positions: dict[str, dict[str, int]], *, now: float, started: float,
             meta: dict[str, Any] | None = None,
             generations: dict[str, int] | None = None) -> bool:
        """Write the encoded parts as one checkpoint: one part per model of ``positions``
        (else the round fails). ``started`` is when the capture began: the reported
        duration runs from there to durable. ``generations`` come back with it."""
        return self._put(("save", positions, now, dict(meta or {}), started,
                          dict(generations or {})))

    def completed(self) -> list[Durable]:
        """Checkpoints that became durable since the last call (oldest first)."""
        with self._cv:
            done, self._done = self._done, []
            return done

    def wait(self, timeout: float | None = None) -> bool:
        """Block until nothing is in flight; False on timeout."""
        with self._cv:
            return self._cv.wait_for(lambda: not self._busy and self._job is None, timeout)

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: self._job is not None or self._closed)
                if self._job is None:
                    return
                job, self._job, self._busy = self._job, None, True
                self._cv.notify_all()  # room for the next job (``wait_ready``)
            done: Durable | None = None
            error: Exception | None = None
            try:
                if job[0] == "encode":
                    self._parts[job[1]] = self.store.stage(job[1], job[2])
                else:
                    _, positions, now, meta, started, generations = job
                    parts, self._parts = self._parts, {}
                    if set(parts) != set(positions):  # never a checkpoint missing a model
                        raise StateError(f"checkpoint parts {sorted(parts)} do not match the "
                                         f"models {sorted(positions)}")
                    info = self.store.save(parts, now=now, meta=meta)
                    done = Durable(info, positions, self._timer() - started, generations)
            except (StateError, OSError, TypeError, ValueError) as exc:
                error = exc
                self._parts = {}  # the round is void: the next one starts over
            with self._cv:
                if error is not None:
                    self.error = error
                    self.failures += 1
                elif done is not None:
                    self._done.append(done)
                    self.error = None
                self._busy = False
                self._cv.notify_all()

    def discard(self) -> None:
        """Wait for what is in flight, then forget encoded parts of an unfinished round."""
        self.wait()
        with self._cv:
            self._parts = {}

    def close(self) -> None:
        """Finish what is in flight, then stop the thread."""
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        self._thread.join()


class Checkpoints:
    """Checkpoints of every model in one store; ``due`` is set by the scheduler."""

    def __init__(self, store: CheckpointStore, runtimes: Sequence[ModelRuntime],
                 lock: threading.RLock, metrics: Metrics, clock: Clock,
                 on_fault: Callable[[BaseException], bool] | None = None) -> None:
        self.store = store
        self.on_fault = on_fault  # a full or read-only disk: the daemon pauses (True)
        self.runtimes = runtimes
        self.lock = lock
        self.metrics = metrics
        self.clock = clock
        self.writer = CheckpointWriter(store, timer=clock.monotonic)
        self.due = False
        self.last_monotonic: float | None = None
        self.seq = 0
        self.size_bytes = 0
        self._round: list[ModelRuntime] | None = None  # models still to capture
        self._positions: dict[str, dict[str, int]] = {}
        self._generations: dict[str, int] = {}
        self._started = 0.0
        self._round_failures = 0
        self._failures = 0

    def restored(self, cp: Checkpoint) -> None:
        self.last_monotonic = self.clock.monotonic()
        self.seq, self.size_bytes = cp.seq, cp.size_bytes

    def tick(self) -> None:
        """Once per loop iteration: commit what became durable, advance a checkpoint."""
        self.commit_durable()
        if self._round is None:
            wanted = self.due or any(getattr(rt.source, "commit_requested", False)
                                     for rt in self.runtimes)
            if not wanted or self.writer.busy:
                return
            self.due = False
            self._begin()
        self._advance()

    def _begin(self) -> None:
        self._round, self._positions, self._generations = list(self.runtimes), {}, {}
        self._started, self._round_failures = self.clock.monotonic(), self.writer.failures

    def _advance(self) -> bool:
        """One step of the round; False when the round failed (and was dropped)."""
        assert self._round is not None
        if not self.writer.ready:
            return True
        if self.writer.failures > self._round_failures:  # an encode failed: start over
            self._round, self.due = None, True
            return False
        if self._round:
            rt = self._round.pop(0)
            with self.lock:
                state = rt.state(self.store.capture(rt.name))
            self._positions[rt.name] = dict(state["positions"])
            if "timeline_generation" in state:
                self._generations[rt.name] = int(state["timeline_generation"])
            self.writer.encode(rt.name, state)
            return True
        self.writer.save(self._positions, now=self.clock.now(), started=self._started,
                         meta={"version": __version__, "pid": os.getpid()},
                         generations=self._generations)
        self._round = None
        return True

    def commit_durable(self) -> None:
        """Commit the positions of checkpoints that are durable now (loop thread only)."""
        if self.writer.failures > self._failures:
            self._failures = self.writer.failures
            self.metrics.record_checkpoint(0.0, ok=False)
            err = self.writer.error
            if err is None or self.on_fault is None or not self.on_fault(err):
                log.error("checkpoint failed, offsets not committed: %s", err)
        for done in self.writer.completed():
            self.metrics.record_checkpoint(done.seconds)
            self.last_monotonic = self.clock.monotonic()
            self.seq, self.size_bytes = done.info.seq, done.info.size_bytes
            for rt in self.runtimes:
                positions = done.positions.get(rt.name)
                if positions:
                    self.metrics.record_commit(rt.name, *rt.commit(positions))
                gen = done.generations.get(rt.name)
                if gen is not None:  # a restart now cuts back to this checkpoint at most
                    rt.timeline.settle(gen)

    def final(self) -> bool:
        """At shutdown: checkpoint every model now and commit; True when it is durable."""
        self.writer.wait()
        self._begin()
        while self._round is not None:
            ok = self._advance()
            self.writer.wait()
            if not ok:
                break
        ok = self.writer.failures == self._round_failures
        self.commit_durable()
        self.writer.close()
        return ok

    def abandon(self) -> None:
        """Drop the round under way (the state folder refused a write): the next round
        captures every model again."""
        self.writer.discard()
        self._round, self._positions = None, {}
        self._failures = self.writer.failures

    def close(self) -> None:
        self.writer.close()

    def info(self) -> dict[str, Any]:
        return {"seq": self.seq, "size_bytes": self.size_bytes}
