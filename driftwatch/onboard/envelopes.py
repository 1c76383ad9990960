"""Envelopes a sample's records come in that ``init`` reads through: Debezium's change
events, whose row is the ``after`` image.

A change event (``{"before": {...}, "after": {...}, "source": {...}, "op": "c", "ts_ms":
...}``) carries the row twice on an update: the ``before`` image and the ``after`` one.
Every column of the row is then found at two paths, so ``init`` stopped with "matches
several fields". The row a prediction stands for is ``after``; deletes (``op: d``, ``after:
null``) and truncates carry none.

>>> rows = [{"before": None, "after.id": "A1", "after.income": 5.0, "op": "c", "ts_ms": 1},
...         {"before.id": "A1", "before.income": 5.0, "after.id": "A1", "after.income": 6.0,
...          "op": "u", "ts_ms": 2},
...         {"before.id": "A1", "before.income": 6.0, "after": None, "op": "d", "ts_ms": 3}]
>>> kept, note = change_events(rows)
>>> [sorted(r) for r in kept]
[['after.id', 'after.income', 'op', 'ts_ms']]
>>> note[0]
'envelope: Debezium'
>>> change_events([{"id": 1, "op": "c"}])[1] is None  # no after image: not an envelope
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["change_events"]

#: Debezium's operations: create, read (a snapshot), update, delete, truncate
_OPS = frozenset({"c", "r", "u", "d", "t"})


def _is_change_event(row: dict[str, Any]) -> bool:
    return row.get("op") in _OPS and ("after" in row or any(k.startswith("after.")
                                                             for k in row))


def change_events(rows: Sequence[dict[str, Any]]
                  ) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    """The flat sample ``rows`` with Debezium's ``before`` image left out, and only the
    events that carry a new row (creates and snapshot reads; updates where there are
    none), with the (what, why) line ``init`` prints (an update is read as another
    prediction of its id: the label join counts it in ``duplicate_predictions``); ``rows`` unchanged and None where
    they are not all change events."""
    if not rows or not all(_is_change_event(r) for r in rows):
        return list(rows), None
    kept_ops = ("c", "r") if any(r["op"] in ("c", "r") for r in rows) else ("u",)
    kept = [{k: v for k, v in r.items() if k != "before" and not k.startswith("before.")}
            for r in rows if r["op"] in kept_ops]
    if not kept:  # deletes alone: nothing to learn the row from, said by what follows
        return list(rows), None
    counts = {op: sum(r["op"] == op for r in rows) for op in ("c", "r", "u", "d", "t")}
    seen = ", ".join(f"{n} {op}" for op, n in counts.items() if n)
    why = (f"op, before, after in every record ({seen}): fields are read from after.*, "
           "the row as it stands (before.* is the row an update replaced) and found on "
           f"the {len(kept)} of op {' or '.join(kept_ops)}; a delete (after: null) holds no "
           "row: replay counts it as a bad record (missing_id)")
    return kept, ("envelope: Debezium", why)
