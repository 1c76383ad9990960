"""Envelopes a sample's records come in that ``init`` reads through: Debezium's change
events, whose row is the ``after`` image.

A change event (``{"before": {...}, "after": {...}, "source": {...}, "op": "c", "ts_ms":
...}``) carries the row twice on an update: the ``before`` image and the ``after`` one.
Every column of the row is then found at two paths, so ``init`` stopped with "matches
several fields". The row a prediction stands for is ``after``; deletes (``op: d``, ``after:
null``) and truncates carry none.

Two shapes are not read, and :func:`refuse_unread_shapes` says so where the reference's
columns are inside one: a JSON object written as text in a field (double-encoded, as
Kafka Connect's ``StringConverter`` or some loggers write it) and features as a list of
``{"name": ..., "value": ...}`` pairs. Paths follow objects; reading either would need
every decoder (the compiled scanner, pyarrow, orjson) to parse inside values.

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

import orjson

from driftwatch.errors import ConfigError

__all__ = ["change_events", "refuse_unread_shapes"]

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
    prediction of its id: the label join counts it in ``duplicate_predictions``);
    ``rows`` unchanged and None where they are not all change events."""
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


def _pairs_names(v: Any) -> list[str] | None:
    """The names of a list of ``{"name"|"key": ..., "value": ...}`` pairs, else None."""
    if not isinstance(v, list) or not v or not all(
            isinstance(e, dict) and "value" in e and isinstance(e.get("name", e.get("key")), str)
            for e in v):
        return None
    return [e.get("name", e.get("key")) for e in v]


def _text_keys(v: Any) -> list[str] | None:
    """The keys of a JSON object written as text, else None."""
    if not isinstance(v, str) or not v.lstrip().startswith("{"):
        return None
    try:
        inner = orjson.loads(v)
    except orjson.JSONDecodeError:
        return None
    return list(inner) if isinstance(inner, dict) else None


def refuse_unread_shapes(rows: Sequence[dict[str, Any]], columns: Sequence[str],
                         where: str) -> None:
    """Stop, naming the field and the fix, where the first sample record holds reference
    ``columns`` that none of its paths carries inside a JSON object written as text or a
    list of name/value pairs: shapes replay does not read (each record a ``wrong_type``).

    >>> refuse_unread_shapes([{"key": "A1", "payload": '{"income": 5}'}], ["income"], "s")
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    driftwatch.errors.ConfigError: ...payload holds a JSON object written as text...
    """
    if not rows:
        return
    first = rows[0]
    leaves = {p.rsplit(".", 1)[-1] for r in rows[:50] for p in r}
    for path, v in first.items():
        if (keys := _text_keys(v)) is not None:
            shape = "a JSON object written as text (double-encoded)"
            fix = (f"decode it upstream, so {path} is an object (Kafka Connect: "
                   f"JsonConverter with schemas.enable=false; a file: jq -c "
                   f"'.{path} |= fromjson'), then map {path}.<name>")
        elif (keys := _pairs_names(v)) is not None:
            shape = "a list of name/value pairs"
            fix = (f"flatten it upstream into an object of name: value (jq -c '.{path} |= "
                   f"(map({{(.name): .value}}) | add)'), then map {path}.<name>")
        else:
            continue
        inside = [c for c in columns if c in keys and c not in leaves]
        if inside:
            shown = ", ".join(inside[:5]) + (", ..." if len(inside) > 5 else "")
            raise ConfigError(
                f"{path} holds {shape}: the reference's {shown} are inside it, and "
                f"driftwatch reads paths through JSON objects only, not inside text or "
                f"list entries, so replay would read none of them (wrong_type)",
                file=where, hint=fix)
