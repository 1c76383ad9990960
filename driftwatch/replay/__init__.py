"""Replay (``driftwatch replay``): the daemon's pipeline on a recording, in event time.

:mod:`~driftwatch.replay.run` (the run and its summary), :mod:`~driftwatch.replay.cli`,
:mod:`~driftwatch.replay.execute` (``--execute``: the actions on the embedded defaults),
:mod:`~driftwatch.replay.timeline` (one JSON line per window) and
:mod:`~driftwatch.replay.monitor` (the Python API on the same path). The names below are
imported on first use.
"""

from __future__ import annotations

from driftwatch.lazy import lazy_attributes

__all__ = [
    "RUN_FILES",
    "ReplayResult",
    "build_monitor",
    "clear_previous_run",
    "monitor_for",
    "nothing_read_error",
    "replay",
    "slim_record",
    "summarise",
]


__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "driftwatch.replay.run"))
