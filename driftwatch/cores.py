"""How many cores this process may run on: its CPU affinity where the OS has one (a
container's or ``taskset``'s limit), else every core.

>>> usable_cores() >= 1
True
"""

from __future__ import annotations

import os

__all__ = ["usable_cores"]


def usable_cores() -> int:
    """The cores this process may run on (at least one)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not on Linux
        return max(os.cpu_count() or 1, 1)
