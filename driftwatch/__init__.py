"""driftwatch: watch a production risk model for drift and repair it in tiers.

``from driftwatch import Monitor`` is the Python API (:mod:`driftwatch.replay.monitor`), imported
on first use so that ``import driftwatch`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Monitor", "__version__"]

__version__ = "0.1.0"

if TYPE_CHECKING:
    from driftwatch.replay.monitor import Monitor


def __getattr__(name: str) -> Any:
    if name == "Monitor":
        from driftwatch.replay.monitor import Monitor

        return Monitor
    raise AttributeError(f"module 'driftwatch' has no attribute {name!r}")
