"""Which field a name means: a reference column's stream path, or a ``--x-field`` flag's field.

>>> stream_path("income", ["id", "applicant.income"])
'applicant.income'
>>> given_field("--id-field", "id", ["txn.id", "amount"], "live.csv")
'txn.id'
>>> resolves("id", ["txn.id", "user.id"])
False
"""

from __future__ import annotations

from collections.abc import Sequence

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import leaf

__all__ = ["given_field", "resolves", "stream_path"]


def given_field(flag: str, value: str, names: Sequence[str], where: str) -> str:
    """The field ``--x-field value`` names: the same name, or the one whose last segment
    it is."""
    if value in names:
        return value
    by_leaf = [n for n in names if leaf(n) == value]
    if len(by_leaf) == 1:
        return by_leaf[0]
    raise ConfigError(f"{flag} {value!r}: no such field", file=where,
                      hint="fields: " + ", ".join(list(names)[:20]))


def resolves(value: str | None, names: Sequence[str]) -> bool:
    """Whether ``--x-field value`` names one of ``names`` (as :func:`given_field` reads
    it)."""
    return value is not None and (value in names
                                  or sum(leaf(n) == value for n in names) == 1)


def stream_path(col: str, paths: Sequence[str]) -> str | None:
    """The stream path of reference column ``col``: the same path, or the one path whose
    last segment (or whose path with '_' for '.') is the column's name."""
    if col in paths:
        return col
    for test in (lambda p: leaf(p) == col, lambda p: p.replace(".", "_") == col):
        hits = [p for p in paths if test(p)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ConfigError(f"reference column {col!r} matches several fields: "
                              + ", ".join(hits), hint="rename the column as the full path")
    return None
