"""The user's cache folder for driftwatch: compiled loops, calibrated levels.

>>> user_cache_dir("levels", environ={"XDG_CACHE_HOME": "/tmp/c"}).as_posix()
'/tmp/c/driftwatch/levels'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["user_cache_dir"]


def user_cache_dir(name: str, environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/driftwatch/<name>``, else ``~/.cache/driftwatch/<name>``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "driftwatch" / name
