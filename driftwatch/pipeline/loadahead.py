"""Loading the label join's compiled loops ahead, while a forked reader decodes its first
polls.

numba reads a compiled loop from its disk cache on the loop's first call: a few
milliseconds each, about 60 ms for the hash index's and the cohort book's loops, which a
replay would pay in the middle of its first polls. A replay whose reader is a forked
process sits idle meanwhile, waiting for that process's first poll:
:func:`load_loops_ahead` loads them there, on a daemon thread. The loop calling one
while it loads waits for that load (numba's lock), never loads it twice, and gets the
same code either way.

It must start after the fork, never before: a child forked while the thread runs would
inherit the locks it holds, without the thread.
"""

from __future__ import annotations

import logging
import threading

from driftwatch.labels import cohort_book, hashindex

__all__ = ["load_loops_ahead"]

log = logging.getLogger(__name__)

_STARTED: list[threading.Thread] = []


def _load() -> None:
    try:
        hashindex.warm_up()
        cohort_book.warm_up()
    except Exception:  # the loop loads them itself on first use, and says why not
        log.debug("the label join's loops could not be loaded ahead", exc_info=True)


def load_loops_ahead() -> threading.Thread:
    """Start loading the loops on a daemon thread (once per process) and return it; see
    the module docstring for when to call it."""
    if not _STARTED:
        thread = threading.Thread(target=_load, name="driftwatch-load-join-loops",
                                  daemon=True)
        thread.start()
        _STARTED.append(thread)
    return _STARTED[0]
