"""Calibrated levels kept on disk between runs, one file per reference, settings and size.

Resampling a reference's null distributions takes seconds per window size (thousands of
multinomial windows per feature). The levels depend only on what
:meth:`~driftwatch.detectors.calibrate.Calibrator.key` digests (the reference, the seed,
the resampling settings, the size, the numpy version and the code that computes them), so
a replay run again on the same reference, or a daemon restarted on it, reads them back
instead: the very same float64 values, in a few milliseconds. A file that cannot be read
(truncated, from another format) counts as absent and is written again.

>>> import math, tempfile
>>> import numpy as np
>>> from driftwatch.detectors.calibrate import NullThresholds
>>> t = NullThresholds(4000, 3900, 0.01, {"ks": np.array([0.03, np.nan])}, {}, 0.004)
>>> store = LevelStore(tempfile.mkdtemp())
>>> store.load("k1") is None
True
>>> store.save("k1", {0.01: t})
>>> back = store.load("k1")[0.01]
>>> back.numeric["ks"].tolist()[0], math.isnan(back.numeric["ks"][1]), back.score_psi
(0.03, True, 0.004)
>>> (back.n, back.grid, math.isnan(back.variance_ratio))
(4000, 3900, True)
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from driftwatch.cachedir import user_cache_dir
from driftwatch.detectors.calibrate import NullThresholds

__all__ = ["LevelStore", "default_level_dir"]

log = logging.getLogger(__name__)

_FORMAT = 1
_BLOCKS = ("numeric", "categorical")
_SCALARS = ("score_psi", "variance_ratio", "approval_rate")


def default_level_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/driftwatch/levels``, else ``~/.cache/driftwatch/levels``.

    >>> default_level_dir({"XDG_CACHE_HOME": "/tmp/c"}).as_posix()
    '/tmp/c/driftwatch/levels'
    """
    return user_cache_dir("levels", environ)


class LevelStore:
    """A folder of ``<key>.npz`` files, each the levels of one size at every rate."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        #: Sizes read back and written in this process (what a benchmark reports).
        self.hits = 0
        self.writes = 0

    def __repr__(self) -> str:
        return f"LevelStore({str(self.folder)!r})"

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.npz"

    def load(self, key: str) -> dict[float, NullThresholds] | None:
        """The levels saved under ``key``, None when absent or unreadable."""
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                if meta.get("format") != _FORMAT:
                    return None
                out = {}
                for i, t in enumerate(meta["levels"]):
                    blocks = {b: {st: z[f"{i}/{b}/{st}"].copy() for st in t[b]}
                              for b in _BLOCKS}
                    sc = z[f"{i}/scalars"]
                    out[float(t["alpha"])] = NullThresholds(
                        int(t["n"]), int(t["grid"]), float(t["alpha"]), blocks["numeric"],
                        blocks["categorical"], *(float(x) for x in sc))
        except FileNotFoundError:
            return None
        except (OSError, EOFError, ValueError, KeyError, TypeError, zipfile.BadZipFile) as exc:
            log.debug("calibrated levels %s unreadable (%s): resampled again", path, exc)
            return None
        self.hits += 1
        return out

    def save(self, key: str, levels: Mapping[float, NullThresholds]) -> None:
        """Write ``levels`` under ``key`` (atomically: a reader never sees half a file).
        A folder that cannot be written only costs the next run a resampling."""
        arrays: dict[str, np.ndarray] = {}
        meta = []
        for i, t in enumerate(levels.values()):
            blocks = {"numeric": t.numeric, "categorical": t.categorical}
            for b, d in blocks.items():
                for st, v in d.items():
                    arrays[f"{i}/{b}/{st}"] = np.asarray(v, dtype=np.float64)
            arrays[f"{i}/scalars"] = np.array([getattr(t, k) for k in _SCALARS],
                                              dtype=np.float64)
            meta.append({"n": t.n, "grid": t.grid, "alpha": t.alpha,
                         **{b: list(d) for b, d in blocks.items()}})
        arrays["meta"] = np.array(json.dumps({"format": _FORMAT, "levels": meta}))
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=f".{key}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as fh:
                    np.savez(fh, **arrays)
                os.replace(tmp, self._path(key))
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cannot keep calibrated levels in %s (%s)", self.folder, exc)
            return
        self.writes += 1
