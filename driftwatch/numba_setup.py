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

import logging
import os
import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from driftwatch.cachedir import user_cache_dir
from driftwatch.errors import ConfigError

__all__ = ["LoadedLater", "compiled", "numba_enabled", "prewarm"]

log = logging.getLogger(__name__)
T = TypeVar("T")


def _wanted() -> str:
    """``DRIFTWATCH_KERNEL`` as set ("", "numba" or "numpy"), without importing numba."""
    wanted = os.environ.get("DRIFTWATCH_KERNEL", "").strip().lower()
    if wanted not in ("", "numba", "numpy"):
        raise ConfigError(f"DRIFTWATCH_KERNEL must be 'numba' or 'numpy', not {wanted!r}")
    return wanted


def numba_enabled() -> bool:
    """True when compiled loops run (numba installed and not switched off), with numba's
    cache folder set. Callers cache their loaded loops (and clear that to re-read)."""
    wanted = _wanted()
    if wanted == "numpy":
        return False
    try:
        import numba
    except ImportError:
        if wanted == "numba":
            raise ConfigError("DRIFTWATCH_KERNEL=numba but numba is not installed: "
                              "pip install 'driftwatch[fast]'") from None
        return False
    _cache_dir(numba)
    _lean_cache_loads()
    return True


def _cache_dir(numba: Any) -> None:
    """Point numba's disk cache at the user's cache folder (unless ``NUMBA_CACHE_DIR``
    says where): a loop compiled before this ran would cache next to its sources."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        numba.config.CACHE_DIR = str(user_cache_dir("numba"))


def compiled(*, refcounts: bool = True, **options: Any) -> Callable[[Callable[..., Any]], Any]:
    """A decorator for a compiled loop: numba's ``njit``, releasing the GIL, with numpy's
    error model and no bounds checks, cached on disk (in memory where no cache folder can
    be used). ``options`` add to or override those. Only modules imported once numba is
    known to be installed use it.

    ``refcounts=False`` compiles without numba's runtime (its ``_nrt`` option): no array
    is then counted. A loop that hands its arrays to helpers inlined per line or per value
    should: each such hand-over takes and drops an atomic reference to every array, and
    the JSON scanner spent three quarters of its time on those. Such a loop must allocate
    nothing (numba refuses to compile one that does): its caller passes the scratch.
    """
    import numba

    _cache_dir(numba)  # a module of loops imported first: its cache goes there too
    opts = {"nogil": True, "error_model": "numpy", "boundscheck": False, **options}
    if not refcounts:
        opts["_nrt"] = False

    def deco(fn: Callable[..., Any]) -> Any:
        try:
            return numba.njit(cache=True, **opts)(fn)
        except RuntimeError:  # numba found no writable cache location
            return numba.njit(cache=False, **opts)(fn)

    return deco


_PREWARM: list[threading.Thread] = []


def prewarm() -> None:
    """Import numba on a daemon thread now (about a third of a second), for a process that
    will need it soon and has other work first: whoever needs it then waits only for
    what is left of the import. Nothing where numba is off; once per process."""
    if _PREWARM or _wanted() == "numpy":
        return

    def load() -> None:
        try:
            numba_enabled()
        except Exception:  # whoever needs numba says why it cannot be had
            log.debug("numba could not be imported ahead", exc_info=True)

    _PREWARM.append(threading.Thread(target=load, name="driftwatch-import-numba",
                                     daemon=True))
    _PREWARM[0].start()


class LoadedLater(Generic[T]):
    """Compiled loops loaded on a daemon thread the first time they are asked for.

    A load from numba's disk cache takes a tenth of a second, but a machine whose cache
    does not hold the loops yet compiles them for 15 to 30 s, and a replay or a daemon
    should not stand still meanwhile: until ``load`` has returned, :meth:`get` gives
    ``None`` and callers use their fallback, which must give the same results. ``load``
    imports the loops and runs each signature once; if it raises, the fallback stays (with
    a warning naming ``what``).

    >>> later = LoadedLater("a doubling loop", lambda: (lambda x: 2 * x))
    >>> loop = later.get(wait=True)
    >>> loop is None or loop(21) == 42  # None where numba is off
    True
    """

    def __init__(self, what: str, load: Callable[[], T]) -> None:
        self._what, self._load = what, load
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._loaded: T | None = None

    def get(self, wait: bool = False) -> T | None:
        """The loaded loops, or ``None`` (numba off, still loading, or failed); ``wait``
        waits for the load."""
        with self._lock:
            if self._thread is None:
                if _wanted() == "numpy":
                    return None
                self._thread = threading.Thread(target=self._run, daemon=True,
                                                name=f"driftwatch-load-{self._what}")
                self._thread.start()
        if wait:
            self._thread.join()
        return self._loaded

    def finish(self) -> None:
        """Wait for a load under way (none started: return at once). Call it before a
        fork: a child forked while the loader runs inherits it as a thread that no longer
        runs, and never gets the loops."""
        thread = self._thread
        if thread is not None:
            thread.join()

    def settled(self) -> bool:
        """True once :meth:`get` gives its final answer: numba off, or the load over."""
        thread = self._thread
        return _wanted() == "numpy" if thread is None else not thread.is_alive()

    def _run(self) -> None:
        try:
            # numba itself is imported here too (a third of a second), not on the caller's
            if numba_enabled():
                self._loaded = self._load()
        except Exception:  # numba could not build them: the fallback serves every call
            log.warning("the compiled %s could not be loaded; the slower fallback runs "
                        "instead", self._what, exc_info=True)


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
