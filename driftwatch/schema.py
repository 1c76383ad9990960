"""The monitored feature set, frozen from a reference profile or declared in a connector.

Categorical values are encoded against the reference levels, so every later stage works
on integer codes:

* ``0 .. K-1``: the reference's top-K levels, in profile order;
* ``K`` (:func:`other_code`): a level the reference saw but outside its top K;
* ``K+1`` (:func:`unseen_code`): a level the reference never saw (a *new category*);
* ``-1`` (:data:`MISSING`): null, absent, or blank text.

A value is matched by its text as :func:`level_text` writes it, the same on the reference
table and on a decoded message: ``True`` is ``"true"``, ``1.0`` is ``"1"``.

>>> s = FeatureSchema(numeric=("income",), categorical=("purpose",),
...                   levels=(("car", "home"),), other=(frozenset({"boat"}),))
>>> s.encode_categorical(0, ["home", "boat", "ufo", None, "", " "]).tolist()
[1, 2, 3, -1, -1, -1]
>>> [level_text(v) for v in (True, np.bool_(False), 2.0, np.int64(3), 0.5, "a")]
['true', 'false', '2', '3', '0.5', 'a']
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.flags import flag_level, flag_levels

__all__ = ["MISSING", "OTHER_LEVEL", "PLACEHOLDER_LEVELS", "UNSEEN_LEVEL", "FeatureSchema",
           "level_text", "level_texts", "map_distinct", "other_code", "unseen_code"]

MISSING = -1
#: The text a categorical code reads back as, where the sketch kept no level: a level
#: outside the reference's top K, and one the reference never had.
OTHER_LEVEL = "__other__"
UNSEEN_LEVEL = "__unseen__"
PLACEHOLDER_LEVELS = (OTHER_LEVEL, UNSEEN_LEVEL)


def level_text(v: object) -> str:
    """Text of a scalar as a categorical level (and an id, a segment): booleans as
    ``true``/``false``, integral floats without ``.0``; numpy scalars like Python ones."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, np.integer):
        return str(int(v))
    return str(v)


#: ``infer_dtype`` kinds whose equal values (as hashed) have equal texts: not a mix of
#: booleans and numbers (``True == 1``, but their texts differ).
_DISTINCT_SAFE = frozenset({"string", "empty", "integer", "floating", "mixed-integer-float",
                            "boolean"})


def map_distinct(values: pd.Series, fn: Callable[[Any], Any], missing: Any = None
                 ) -> np.ndarray:
    """``fn`` of every value as an object array, ``missing`` where null: ``fn`` runs once
    per distinct value (a reference column of 30 000 rows holds a handful), and per value
    only where equal values could differ in text (booleans mixed with numbers).

    >>> map_distinct(pd.Series(["a", None, "a", "b"]), str.upper).tolist()
    ['A', None, 'A', 'B']
    >>> map_distinct(pd.Series([True, 1, 1.0], dtype=object), level_text).tolist()
    ['true', '1', '1']
    """
    if values.dtype == object and pd.api.types.infer_dtype(
            values, skipna=True) not in _DISTINCT_SAFE:
        na = values.isna().to_numpy()
        out = np.empty(len(values), dtype=object)
        out[:] = [missing if m else fn(v) for v, m in zip(values.tolist(), na, strict=True)]
        return out
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    table = np.empty(len(uniques) + 1, dtype=object)
    table[:-1] = [fn(u) for u in uniques.tolist()]
    table[-1] = missing  # code -1: null
    return table[codes]


def _text_or_none(v: object) -> str | None:
    t = level_text(v)
    return None if not t.strip() else t


def level_texts(values: Sequence[object] | np.ndarray | pd.Series) -> pd.Series:
    """:func:`level_text` of every value, ``None`` where null or blank (object Series)."""
    s = pd.Series(values, dtype=object, copy=False)
    return pd.Series(map_distinct(s, _text_or_none), index=s.index, dtype=object)


def other_code(n_levels: int) -> int:
    """Code of 'known in the reference but outside the top-K levels'."""
    return n_levels


def unseen_code(n_levels: int) -> int:
    """Code of 'never seen in the reference' (a new category)."""
    return n_levels + 1


@dataclass(frozen=True)
class FeatureSchema:
    """Names of the numeric and categorical features, and the categorical levels."""

    numeric: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ()
    other: tuple[frozenset[str], ...] = ()
    _lookup: tuple[dict[str, int], ...] = field(default=(), repr=False, compare=False)
    _flags: tuple[dict[bool, str] | None, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        if len(set(self.numeric) | set(self.categorical)) != len(self.numeric) + len(
            self.categorical
        ):
            raise ValueError("feature names must be unique across numeric and categorical")
        levels = self.levels or tuple(() for _ in self.categorical)
        other = self.other or tuple(frozenset() for _ in self.categorical)
        if len(levels) != len(self.categorical) or len(other) != len(self.categorical):
            raise ValueError("levels and other must have one entry per categorical feature")
        object.__setattr__(self, "levels", tuple(tuple(map(str, lv)) for lv in levels))
        object.__setattr__(self, "other", tuple(frozenset(map(str, o)) for o in other))
        lookup = []
        for lv, oth in zip(self.levels, self.other, strict=True):
            d = {v: i for i, v in enumerate(lv)}
            k = len(lv)
            d.update({v: k for v in oth if v not in d})
            lookup.append(d)
        object.__setattr__(self, "_lookup", tuple(lookup))
        # a yes/no feature: another spelling of a flag reads as the reference's same side
        object.__setattr__(self, "_flags", tuple(
            flag_levels(lv) if not oth else None
            for lv, oth in zip(self.levels, self.other, strict=True)))

    @property
    def n_numeric(self) -> int:
        return len(self.numeric)

    @property
    def n_categorical(self) -> int:
        return len(self.categorical)

    @property
    def names(self) -> tuple[str, ...]:
        return self.numeric + self.categorical

    def encode_categorical(self, j: int, values: Sequence[object] | np.ndarray) -> np.ndarray:
        """Vectorised encoding of one categorical column to ``int32`` codes."""
        lookup = self._lookup[j]
        k = len(self.levels[j])
        as_str = level_texts(values)
        missing = as_str.isna().to_numpy()
        codes = as_str.map(lookup).to_numpy(dtype=np.float64, na_value=np.nan)
        if (sides := self._flags[j]) is not None and np.isnan(codes).any():
            codes, unseen = codes.copy(), np.isnan(codes)  # to_numpy may be read-only
            codes[unseen] = as_str[unseen].map(
                lambda v: lookup.get(flag_level(v, sides) or "", np.nan)).to_numpy(
                    dtype=np.float64, na_value=np.nan)
        out = np.where(np.isnan(codes), unseen_code(k), codes).astype(np.int32)
        out[missing] = MISSING
        return out

    def to_dict(self) -> dict[str, object]:
        return {
            "numeric": list(self.numeric),
            "categorical": list(self.categorical),
            "levels": [list(lv) for lv in self.levels],
            "other": [sorted(o) for o in self.other],
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> FeatureSchema:
        cats = tuple(d.get("categorical", ()))  # type: ignore[arg-type]
        return cls(
            numeric=tuple(d.get("numeric", ())),  # type: ignore[arg-type]
            categorical=cats,
            levels=tuple(tuple(lv) for lv in d.get("levels", ())),  # type: ignore[union-attr]
            other=tuple(frozenset(o) for o in d.get("other", ())),  # type: ignore[union-attr]
        )

    def with_levels(
        self, levels: Iterable[Sequence[str]], other: Iterable[Iterable[str]]
    ) -> FeatureSchema:
        return FeatureSchema(
            numeric=self.numeric,
            categorical=self.categorical,
            levels=tuple(tuple(lv) for lv in levels),
            other=tuple(frozenset(o) for o in other),
        )
