"""What a finished ``replay --execute`` leaves for people: the registry it acted on.

A replay's state folder outlives the replay. ``driftwatch approve`` on it has no daemon to
hand the approval to, so it carries the approved promotion out itself, on the registry the
replay used (``replay.json`` beside the outbox).

>>> import tempfile
>>> d = tempfile.mkdtemp()
>>> read_replay_state(d) is None
True
>>> write_replay_state(d, model="credit", tracking_uri=None, columns={"inc": "income"})
>>> read_replay_state(d)["columns"]
{'inc': 'income'}
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

__all__ = ["REPLAY_STATE", "read_replay_state", "write_replay_state"]

REPLAY_STATE = "replay.json"


def write_replay_state(
    state_dir: str | Path, *, model: str, tracking_uri: str | None, columns: Mapping[str, str],
    score_is: str = "p_bad", score_scale: str = "probability",
) -> None:
    """Leave the registry settings in ``state_dir``: the champion's columns and what it
    declares of its output (``score_scale`` written as
    :func:`~driftwatch.registry.reading.scale_name` writes it, resolved)."""
    path = Path(state_dir) / REPLAY_STATE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(
        {"model": model, "tracking_uri": tracking_uri, "columns": dict(columns),
         "score_is": score_is, "score_scale": score_scale}))
    tmp.replace(path)


def read_replay_state(state_dir: str | Path) -> dict[str, Any] | None:
    """The registry settings a replay left in ``state_dir`` (None: not a replay's)."""
    path = Path(state_dir) / REPLAY_STATE
    if not path.exists():
        return None
    return dict(orjson.loads(path.read_bytes()))
