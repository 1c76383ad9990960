"""Which field a name means: a reference column's stream path, or a ``--x-field`` flag's field.

>>> stream_path("income", ["id", "applicant.income"])
'applicant.income'
>>> given_field("--id-field", "id", ["txn.id", "amount"], "live.csv")
'txn.id'
>>> resolves("id", ["txn.id", "user.id"])
False
>>> stream_path("default payment next month", ["ID", "default.payment.next.month"])
'default.payment.next.month'
>>> label_flag("default payment next month=default.payment.next.month", ["ID"])
('default payment next month', 'default.payment.next.month')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import leaf

__all__ = ["given_field", "label_flag", "name_key", "resolves", "spelled_otherwise",
           "stream_path"]

_HUMPS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[\s\-._]+")


def name_key(name: str) -> str:
    """How a reference column and a stream field spelled otherwise are matched: in snake
    case, with spaces, hyphens and dots read as underscores (role names are read in any
    case style alike, :func:`~driftwatch.onboard.infer.name_rank`).

    >>> name_key("default payment next month"), name_key("default.payment.next.month")
    ('default_payment_next_month', 'default_payment_next_month')
    >>> name_key("isFraud"), name_key("LIMIT_BAL")
    ('is_fraud', 'limit_bal')
    """
    return _SEPARATORS.sub("_", _HUMPS.sub("_", name.strip())).lower().strip("_")


def spelled_otherwise(col: str, path: str) -> bool:
    """Whether :func:`stream_path` found ``path`` for ``col`` by :func:`name_key` alone."""
    return not (path == col or leaf(path) == col or path.replace(".", "_") == col)


def label_flag(value: str | None, cols: Sequence[str]) -> tuple[str | None, str | None]:
    """``--label-field``'s reference column and stream field: ``REF=STREAM`` names each (a
    label the outcomes spell otherwise), any other value both; a reference column whose
    name holds ``=`` is read whole."""
    if value is None or value in cols or "=" not in value:
        return value, value
    ref, _, stream = value.partition("=")
    return ref.strip(), stream.strip()


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
    last segment (or whose path with '_' for '.') is the column's name, or failing those
    the one path of the same :func:`name_key` (the name in another case, with other
    separators)."""
    if col in paths:
        return col
    key = name_key(col)
    for test in (lambda p: leaf(p) == col, lambda p: p.replace(".", "_") == col,
                 # spelled otherwise: Taiwan's 'default payment next month' in the
                 # reference, 'default.payment.next.month' in the outcomes
                 lambda p: name_key(p) == key):
        hits = [p for p in paths if test(p)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ConfigError(f"reference column {col!r} matches several fields: "
                              + ", ".join(hits), hint="rename the column as the full path")
    return None
