"""Broker waits that a shutdown can cut short.

kafka-python's blocking calls (an offset commit, a producer's flush) take one timeout and
hold the calling thread until it passes. The daemon's shutdown bound is 10 s, and the
defaults for those waits are 30 s: a SIGTERM that arrives while the loop waits on a broker
that is down would wait that out. :func:`wait_in_slices` makes one such wait a series of
calls of at most :data:`STOP_WAIT_S` each, and ends it after the slice in which shutdown
began. The calls it repeats must be the same request again (committing the same offsets,
flushing the same producer).

>>> calls = []
>>> def call(timeout_s):
...     calls.append(timeout_s)
...     raise TimeoutError
>>> try:
...     wait_in_slices(call, 2.5, lambda: len(calls) >= 2, TimeoutError)
... except TimeoutError:
...     calls
[1.0, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Callable

__all__ = ["STOP_WAIT_S", "wait_in_slices"]

#: On shutdown, the longest one broker call may wait (a commit, a flush, a close): five
#: such calls fit the daemon's 10 s shutdown bound with room to spare. Waits made before
#: shutdown are cut in slices of this length (:func:`wait_in_slices`).
STOP_WAIT_S = 1.0


def wait_in_slices(call: Callable[[float], object], total_s: float,
                   stopping: Callable[[], bool], timeout: type[BaseException]) -> None:
    """Call ``call(seconds)`` with slices of ``total_s`` (at most :data:`STOP_WAIT_S`
    each) until one returns without raising ``timeout``; the slice's ``timeout`` is
    raised again after the last slice, or after the slice in which ``stopping()`` turned
    true."""
    slices = max(1, math.ceil(total_s / STOP_WAIT_S))
    for i in range(slices):
        try:
            call(max(min(STOP_WAIT_S, total_s - i * STOP_WAIT_S), 0.001))
            return
        except timeout:
            if stopping() or i == slices - 1:
                raise
