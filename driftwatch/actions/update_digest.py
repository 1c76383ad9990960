"""What an online update learns from, as one digest: its parent, its learner, its rows.

Two mild windows in a row often hold the same labelled rows (labels arrive slowly); an
update of the same parent with the same learner on the same rows would register the same
model again. The digest is stored as the version tag ``driftwatch.update_digest``, so the
registry (the source of truth, across restarts) says whether an update was made already.

Rows are hashed by content, in window order (the order they are learned in), without the
buffer's ``seq`` (a position, not data): the same rows read again after a restart, or
exported by another action, give the same digest.

>>> import pandas as pd
>>> rows = pd.DataFrame({"x": [1.0, 2.0], "label": [0.0, 1.0], "seq": [7, 8]})
>>> a = update_digest(rows, parent="1", learner="LogitCalibrator")
>>> a == update_digest(rows.assign(seq=[1, 2]), parent="1", learner="LogitCalibrator")
True
>>> a == update_digest(rows, parent="2", learner="LogitCalibrator")
False
>>> a == update_digest(rows.iloc[:1], parent="1", learner="LogitCalibrator")
False
>>> a.startswith("sha256:")
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

__all__ = ["update_digest"]

_POSITION = ("seq",)


def update_digest(
    window: pd.DataFrame,
    *,
    parent: str | None,
    learner: str,
    settings: Mapping[str, Any] | None = None,
) -> str:
    """``sha256:<hex>`` of the parent version, the learner (and any ``settings`` that change
    what it learns) and the window's rows by content."""
    cols = sorted(c for c in window.columns if c not in _POSITION)
    head = json.dumps(
        {
            "parent": parent,
            "learner": learner,
            "settings": dict(settings or {}),
            "columns": [[c, str(window[c].dtype)] for c in cols],
            "rows": len(window),
        },
        sort_keys=True,
        default=str,
    )
    h = hashlib.sha256(head.encode())
    if cols and len(window):
        rows = pd.util.hash_pandas_object(window[cols], index=False)
        h.update(rows.to_numpy().tobytes())
    return f"sha256:{h.hexdigest()}"
