"""Whether compiled loops run, and where numba caches them: one switch for every kernel.

``DRIFTWATCH_KERNEL`` chooses: ``numba`` (required), ``numpy`` (the fallbacks) or unset
(numba when it is installed). numba's disk cache goes to ``NUMBA_CACHE_DIR`` when set,
else to the user's cache folder (``$XDG_CACHE_HOME/driftwatch/numba``), never next to the
installed sources. The window kernel (:mod:`driftwatch.windows.kernel`) and the label
join's hash index (:mod:`driftwatch.labels.hashindex`) both ask here.

Loading a loop from the disk cache is lean: before its first load numba fills its CPU
target's tables of every implementation it knows (importing linear algebra, random
generators, typed containers, ...: about 1 s per process), which only compiling reads.
Here a cache load starts numba's runtime (what the loaded code calls) and reads the
cached code; a loop that must really compile (no cache, or a new signature) goes
through numba's compiler, which fills those tables itself first.

>>> import os
>>> os.environ.get("DRIFTWATCH_KERNEL", "") in ("", "numba", "numpy")
True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from driftwatch.cachedir import user_cache_dir
from driftwatch.errors import ConfigError

__all__ = ["compiled", "numba_enabled"]


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
        numba.config.CACHE_DIR = str(user_cache_dir("numba"))
    _lean_cache_loads()
    return True


def compiled(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """A decorator for a compiled loop: numba's ``njit``, releasing the GIL, with numpy's
    error model and no bounds checks, cached on disk (in memory where no cache folder can
    be used). ``options`` add to or override those. Only modules imported once numba is
    known to be installed use it."""
    import numba

    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, **options}

    def deco(fn: Callable[..., Any]) -> Any:
        try:
            return numba.njit(cache=True, **opts)(fn)
        except RuntimeError:  # numba found no writable cache location
            return numba.njit(cache=False, **opts)(fn)

    return deco


def _lean_cache_loads() -> None:
    """Make numba's cache loads skip the target refresh that only compiling needs (see the
    module docstring); left as numba has it where its cache class is not the one known."""
    from numba.core import caching

    cache = caching.Cache
    if getattr(cache.load_overload, "_driftwatch_lean", False):
        return
    if not all(hasattr(cache, a) for a in ("_load_overload",
                                           "_guard_against_spurious_io_errors")):
        return
    from numba.core.runtime import rtsys

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        rtsys.initialize(target_context)  # the runtime the cached code calls into
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)
        return None  # the guard swallowed an I/O error: numba compiles instead

    load_overload._driftwatch_lean = True  # type: ignore[attr-defined]
    load_overload.__doc__ = cache.load_overload.__doc__
    cache.load_overload = load_overload
