"""State trees for binary checkpoints: a JSON header, named arrays, append-only tables.

A component's checkpoint state is a tree of dicts, lists and scalars as before, in which
two more kinds of leaf may appear:

* a numpy array: stored raw in the checkpoint (dtype and shape kept), read back as one;
* an :class:`Appended` table, for state that only grows at one end (the labelled buffer,
  a key store's rows): it names the rows the state holds, ``[start, stop)``, and carries
  only those the checkpoint store does not hold yet, ``[base, stop)``. The store writes
  them as a new segment, so a checkpoint costs what changed, not what is held.

A component asks a :class:`Capture` what is durable already: ``capture.durable(table)``
is the row up to which the store holds ``table``, or None. A table's id names one
numbering of its rows; a component that renumbers them (compaction, a new schema) takes a
new id (:func:`new_table_id`), and the store then starts that table afresh.

Adding state to a checkpoint needs no change of format: a component's ``to_dict``
takes ``capture: Capture | None = None``; with None it returns JSON-safe values as
always, with a capture it may return arrays (copies: the writer thread encodes them
while the loop goes on) and :class:`Appended` tables (``Appended.capture(capture, id,
start, stop, rows)`` copies only the rows the store lacks); its ``from_dict`` accepts
both forms. The monitor passes the capture down from ``ModelMonitor.state_dict``.

:func:`pack` splits a tree into its JSON-safe skeleton, its arrays and its tables;
:func:`unpack` puts them back (tables whole: ``base == start``).

>>> import numpy as np
>>> tree = {"n": 3, "x": np.arange(3.0), "rows": Appended("t1", 0, 2, 0, {"v": np.ones(2)})}
>>> p = pack(tree)
>>> p.skeleton["x"], sorted(p.arrays), [t.table for t in p.tables]
({'$array': 'a0'}, ['a0'], ['t1'])
>>> back = unpack(p.skeleton, p.arrays, {"t1": p.tables[0]})
>>> back["n"], back["x"].tolist(), back["rows"].columns["v"].tolist()
(3, [0.0, 1.0, 2.0], [1.0, 1.0])
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.errors import StateError

__all__ = ["Appended", "Capture", "Packed", "new_table_id", "pack", "unpack"]

_ARRAY, _TABLE, _DICT = "$array", "$table", "$dict"


def new_table_id() -> str:
    """A fresh id for one numbering of an append-only table's rows."""
    return secrets.token_hex(8)


class Capture:
    """What a checkpoint store already holds: rows durable per table id."""

    def __init__(self, durable: Mapping[str, int] | None = None) -> None:
        self._durable = dict(durable or {})

    def durable(self, table: str) -> int | None:
        """Rows ``[?, durable)`` of ``table`` the store holds, or None."""
        return self._durable.get(table)


@dataclass(frozen=True)
class Appended:
    """Rows ``[start, stop)`` of an append-only table; ``columns`` hold rows
    ``[base, stop)`` (``start <= base <= stop``), the rest the store holds already."""

    table: str
    start: int
    stop: int
    base: int
    columns: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.start <= self.base <= self.stop:
            raise ValueError(f"table {self.table}: rows [{self.start}, {self.stop}) with new "
                             f"rows from {self.base}")
        for k, v in self.columns.items():
            if len(v) != self.stop - self.base:
                raise ValueError(f"table {self.table}: column {k!r} has {len(v)} rows, "
                                 f"expected {self.stop - self.base}")

    @classmethod
    def capture(cls, capture: Capture | None, table: str, start: int, stop: int,
                rows: Callable[[int, int], dict[str, np.ndarray]]) -> Appended:
        """The table as ``capture`` needs it: ``rows(a, b)`` copies rows ``[a, b)``."""
        held = capture.durable(table) if capture is not None else None
        base = held if held is not None and start <= held <= stop else start
        return cls(table, start, stop, base, rows(base, stop))


@dataclass(frozen=True)
class Packed:
    """A tree split for storage: JSON-safe ``skeleton``, ``arrays`` by name, ``tables``."""

    skeleton: Any
    arrays: dict[str, np.ndarray]
    tables: list[Appended]


def pack(tree: Any) -> Packed:
    """Split ``tree`` (see the module docstring); arrays are not copied."""
    arrays: dict[str, np.ndarray] = {}
    tables: list[Appended] = []

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if any(isinstance(k, str) and k.startswith("$") for k in x):
                return {_DICT: [[k, walk(v)] for k, v in x.items()]}
            return {str(k): walk(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [walk(v) for v in x]
        if isinstance(x, np.ndarray):
            name = f"a{len(arrays)}"
            arrays[name] = x
            return {_ARRAY: name}
        if isinstance(x, Appended):
            if any(t.table == x.table for t in tables):
                raise ValueError(f"table {x.table} appears twice in one state")
            tables.append(x)
            return {_TABLE: x.table, "start": x.start, "stop": x.stop}
        if isinstance(x, np.generic):
            return x.item()
        return x

    return Packed(walk(tree), arrays, tables)


def unpack(skeleton: Any, arrays: Mapping[str, np.ndarray],
           tables: Mapping[str, Appended]) -> Any:
    """The tree :func:`pack` split; ``tables`` hold whole tables by id."""

    def walk(x: Any) -> Any:
        if isinstance(x, dict):
            if _ARRAY in x:
                return _get(arrays, x[_ARRAY], "array")
            if _TABLE in x:
                t = _get(tables, x[_TABLE], "table")
                if (t.start, t.stop) != (int(x["start"]), int(x["stop"])):
                    raise StateError(f"table {t.table}: rows [{t.start}, {t.stop}) stored, "
                                     f"[{x['start']}, {x['stop']}) expected")
                return t
            if _DICT in x:
                return {k: walk(v) for k, v in x[_DICT]}
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(skeleton)


def _get(m: Mapping[str, Any], key: str, what: str) -> Any:
    try:
        return m[key]
    except KeyError:
        raise StateError(f"checkpoint part names {what} {key!r}, which it does not hold") \
            from None
