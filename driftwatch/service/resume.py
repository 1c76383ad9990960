"""Going on after the state folder refused a write: wait for it, then back to the checkpoint.

While :class:`~driftwatch.service.disk.StateDisk` says the folder is full or read-only the
run loop calls :func:`wait_for_disk` instead of polling: nothing is consumed, no
checkpoint is written, no offset committed. Once a probe write succeeds,
:func:`rewind_runtimes` does in-process what a restart does: each model is opened afresh
and restored from the newest durable checkpoint, its timeline cut back to what that
checkpoint covers and its source sought to the checkpoint's positions. Whatever the
monitors took in after that checkpoint is dropped and read again, so no event is lost
(offsets were never committed past the checkpoint) and none is counted twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from driftwatch.metrics import Metrics
from driftwatch.pipeline import WindowResult
from driftwatch.service.checkpoint import Checkpoints
from driftwatch.service.disk import StateDisk
from driftwatch.service.model import ModelRuntime
from driftwatch.service.view import last_record, restore_view

__all__ = ["fault_site", "rewind_runtimes", "wait_for_disk"]

log = logging.getLogger(__name__)


def fault_site(exc: BaseException) -> str:
    """Which write failed, for the log and ``/readyz`` (the file when the OS names it).

    >>> import errno
    >>> fault_site(OSError(errno.ENOSPC, "No space left on device", "/s/out/timeline.jsonl"))
    'writing /s/out/timeline.jsonl'
    >>> fault_site(ValueError("x"))
    'ValueError'
    """
    while exc.__cause__ is not None and not getattr(exc, "filename", None):
        exc = exc.__cause__
    name = getattr(exc, "filename", None)
    return f"writing {name}" if name else type(exc).__name__


def wait_for_disk(disk: StateDisk, stop: threading.Event, rewind: Callable[[], None]) -> bool:
    """One paused pass of the loop: wait for the next retry (or ``stop``), probe, and
    when the folder takes writes call ``rewind``; True once resumed."""
    if not disk.retry_due():
        stop.wait(min(0.5, max(0.01, disk.seconds_to_retry())))
        return False
    if not disk.probe():
        return False
    try:
        rewind()
    except Exception as exc:
        if not disk.failed(exc, where=f"resume ({fault_site(exc)})"):
            raise
        return False
    disk.recovered()
    return True


def rewind_runtimes(
    checkpoints: Checkpoints, runtimes: list[ModelRuntime], lock: threading.RLock,
    metrics: Metrics, open_runtime: Callable[[Any], ModelRuntime],
) -> Iterator[tuple[ModelRuntime, list[WindowResult]]]:
    """Replace each runtime in ``runtimes`` by a fresh one, opened by ``open_runtime``
    from its model's configuration the way the daemon opened it at start (a group
    member stays one), and restored from the newest durable checkpoint; yields each with
    the results its restore produced (for the caller to hand to its actions)."""
    checkpoints.writer.wait()
    checkpoints.commit_durable()  # one that became durable just before the fault
    cp = checkpoints.store.load()
    saved: Any = cp.models if cp is not None else {}
    for i, old in enumerate(list(runtimes)):
        old.discard()
        rt = open_runtime(old.config)
        with lock:
            runtimes[i] = rt
            part = saved.get(rt.name)
            results = rt.restore(part)
            if part is not None:
                restore_view(metrics, rt.name, last_record(rt.timeline.path))
        yield rt, results
    if cp is not None:
        checkpoints.restored(cp)
    log.info("resumed from checkpoint %s", cp.seq if cp is not None else
             "(none yet: from the start)")
