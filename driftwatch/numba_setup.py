"""Whether compiled loops run, and where numba caches them: one switch for every kernel.

``DRIFTWATCH_KERNEL`` chooses: ``numba`` (required), ``numpy`` (the fallbacks) or unset
(numba when it is installed). numba's disk cache goes to ``NUMBA_CACHE_DIR`` when set,
else to the user's cache folder (``$XDG_CACHE_HOME/driftwatch/numba``), never next to the
installed sources. The window kernel (:mod:`driftwatch.windows.kernel`) and the label
join's hash index (:mod:`driftwatch.labels.hashindex`) both ask here.

>>> import os
>>> os.environ.get("DRIFTWATCH_KERNEL", "") in ("", "numba", "numpy")
True
"""

from __future__ import annotations

import os
from pathlib import Path

from driftwatch.errors import ConfigError

__all__ = ["numba_enabled"]


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "driftwatch" / "numba")


def numba_enabled() -> bool:
    """True when compiled loops run (numba installed and not switched off), with numba's
    cache folder set. Callers cache their loaded loops (and clear that to re-read)."""
    wanted = os.environ.get("DRIFTWATCH_KERNEL", "").strip().lower()
    if wanted not in ("", "numba", "numpy"):
        raise ConfigError(f"DRIFTWATCH_KERNEL must be 'numba' or 'numpy', not {wanted!r}")
    if wanted == "numpy":
        return False
    try:
        import numba
    except ImportError:
        if wanted == "numba":
            raise ConfigError("DRIFTWATCH_KERNEL=numba but numba is not installed: "
                              "pip install 'driftwatch[fast]'") from None
        return False
    if not os.environ.get("NUMBA_CACHE_DIR"):
        numba.config.CACHE_DIR = _cache_dir()
    return True
