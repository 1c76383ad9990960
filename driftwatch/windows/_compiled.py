"""Loads the numba loop behind :mod:`driftwatch.windows.kernel`, once, on first use.

``DRIFTWATCH_KERNEL`` chooses, and numba caches its code where
:mod:`driftwatch.numba_setup` says.
"""

from __future__ import annotations

import functools
from typing import Any

from driftwatch.numba_setup import numba_enabled

__all__ = ["loop"]


@functools.cache
def loop() -> Any | None:
    """The compiled ``count_rows``, or ``None`` when the numpy fallback counts."""
    if not numba_enabled():
        return None
    from driftwatch.windows import _loops

    return _loops.count_rows
