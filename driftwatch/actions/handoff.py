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

The policy's bad labels travel too, so an approval reads a classifier's bad class as
the replay read it:

>>> write_replay_state(d, model="credit", tracking_uri=None, columns={},
...                    bad_labels=("Charged Off",))
>>> read_replay_state(d)["bad_labels"]
['Charged Off']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

__all__ = ["REPLAY_STATE", "read_replay_state", "write_replay_state"]

REPLAY_STATE = "replay.json"


def write_replay_state(
    state_dir: str | Path, *, model: str, tracking_uri: str | None, columns: Mapping[str, str],
    score_is: str = "p_bad", score_scale: str = "probability",
    bad_labels: Sequence[Any] | None = None,
) -> None:
    """Leave the registry settings in ``state_dir``: the champion's columns, what it
    declares of its output (``score_scale`` written as
    :func:`~driftwatch.registry.reading.scale_name` writes it, resolved) and the label
    values of the bad class (the policy's; None: the defaults)."""
    path = Path(state_dir) / REPLAY_STATE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(
        {"model": model, "tracking_uri": tracking_uri, "columns": dict(columns),
         "score_is": score_is, "score_scale": score_scale,
         "bad_labels": None if bad_labels is None else list(bad_labels)}))
    tmp.replace(path)


def read_replay_state(state_dir: str | Path) -> dict[str, Any] | None:
    """The registry settings a replay left in ``state_dir`` (None: not a replay's)."""
    path = Path(state_dir) / REPLAY_STATE
    if not path.exists():
        return None
    return dict(orjson.loads(path.read_bytes()))
