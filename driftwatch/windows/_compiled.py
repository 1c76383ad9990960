"""Loads the numba loop behind :mod:`driftwatch.windows.kernel`, once, on first use.

``DRIFTWATCH_KERNEL`` chooses: ``numba`` (required), ``numpy`` (the fallback) or unset
(numba when it is installed). The disk cache goes to ``NUMBA_CACHE_DIR`` when set, else to
the user's cache folder, never next to the installed sources.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from driftwatch.errors import ConfigError

__all__ = ["loop"]


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "driftwatch" / "numba")


@functools.cache
def loop() -> Any | None:
    """The compiled ``count_rows``, or ``None`` when the numpy fallback counts."""
    wanted = os.environ.get("DRIFTWATCH_KERNEL", "").strip().lower()
    if wanted not in ("", "numba", "numpy"):
        raise ConfigError(f"DRIFTWATCH_KERNEL must be 'numba' or 'numpy', not {wanted!r}")
    if wanted == "numpy":
        return None
    try:
        import numba
    except ImportError:
        if wanted == "numba":
            raise ConfigError(
                "DRIFTWATCH_KERNEL=numba but numba is not installed: "
                "pip install 'driftwatch[fast]'"
            ) from None
        return None
    if not os.environ.get("NUMBA_CACHE_DIR"):
        numba.config.CACHE_DIR = _cache_dir()
    from driftwatch.windows import _loops

    return _loops.count_rows
