"""The replay loop runs with what was built before it frozen out of the garbage collector.

By the loop, the process holds some hundred thousand long-lived objects (modules, the
policy, the reference profile, the monitor); they live until the replay ends. Each window
leaves a few containers behind (its slim record, the engine state), so the collector's
oldest generation is due every few hundred windows, and each such pass walked every one
of those objects again (some 60 ms a pass on the benchmark). :func:`gc.freeze` moves them
to the permanent generation for the loop's duration; :func:`gc.unfreeze` hands them back
after it, where the next collection sees them as before. Nothing is freed later than it
would be: an object built before the loop is in use until the loop ends anyway, or, if a
cycle of them is let go meanwhile, it is collected after the loop.

The youngest generation is collected every :data:`YOUNG` new containers in the block,
not every 700: a window builds some hundred short-lived ones (its signals, their details),
which reference counting frees, and a replay of 1,000 windows ran some 800 young and 70
middle collections for them, 0.15 s of its loop. The thresholds are put back after it.

A process that froze objects itself (a caller's own ``gc.freeze()``) keeps its choice:
the replay freezes nothing then, and unfreezes nothing; nor does it lower a threshold a
caller raised.

>>> import gc
>>> before = gc.get_threshold()
>>> with setup_frozen():
...     gc.get_freeze_count() > 0, gc.get_threshold()[0] >= YOUNG
(True, True)
>>> gc.get_freeze_count(), gc.get_threshold() == before
(0, True)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["YOUNG", "setup_frozen"]

#: New containers between two collections of the youngest generation, in the block.
YOUNG = 10_000


@contextlib.contextmanager
def setup_frozen() -> Iterator[None]:
    """Freeze the objects alive now for the duration of the block, unless the process
    has frozen objects already, and collect the youngest generation less often."""
    thresholds = gc.get_threshold()
    gc.set_threshold(max(thresholds[0], YOUNG), *thresholds[1:])
    try:
        if gc.get_freeze_count():
            yield
            return
        gc.freeze()
        try:
            yield
        finally:
            gc.unfreeze()
    finally:
        gc.set_threshold(*thresholds)
