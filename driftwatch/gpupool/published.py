"""The pool's GPUs as the running daemon sees them, published for ``driftwatch pool status``.

The daemon's pool may have logical GPUs (``pool.gpus: 10`` on a machine with none), so the
command cannot ask ``nvidia-smi``: the pool writes ``capacity.json`` into its folder when
it starts, and the command reads it.

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> publish_capacity(d, ["0", "1", "2"], ["2"])
>>> read_capacity(d)
(('0', '1', '2'), ('2',))
>>> read_capacity(tempfile.mkdtemp()) is None
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CAPACITY_FILE", "publish_capacity", "read_capacity"]

CAPACITY_FILE = "capacity.json"


def publish_capacity(folder: str | Path, gpu_ids: Sequence[str], reserved: Sequence[str]) -> None:
    """Write the pool's GPU ids and reserved ids (atomically: a reader sees one or the other)."""
    path = Path(folder) / CAPACITY_FILE
    tmp = path.with_name(f".{CAPACITY_FILE}.{os.getpid()}")
    tmp.write_text(json.dumps({"gpu_ids": list(gpu_ids), "reserved_ids": list(reserved)}))
    tmp.replace(path)


def read_capacity(folder: str | Path) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(gpu_ids, reserved_ids)`` a pool published in ``folder``, or None."""
    try:
        d = json.loads((Path(folder) / CAPACITY_FILE).read_text())
        return tuple(map(str, d["gpu_ids"])), tuple(map(str, d["reserved_ids"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
