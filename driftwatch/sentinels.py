"""Values that stand for "missing" in a feed (sentinels): ``-9`` for "no bureau record".

Credit data codes missing or special cases as numbers (FICO HELOC: -9, -8, -7; Porto
Seguro: -1; many banks -999 or 999999). Read as numbers they put a spike far below the
reference's range and make a change in how often a feed sends them look like drift of the
value. A :class:`MissingValues` says which values are missing instead: the decoder and the
reference profile both read them as null, so they land in the missing bin and count in the
missing rate (data quality), never in a value bin nor as out of range.

A list applies to every feature; ``by_feature`` replaces it for the features it names
(``()`` there: none for that feature). A numeric feature matches the numbers of its list by
value (``-9`` is ``-9.0``) and its texts by their text (``"?"`` among numbers, as the
Polish bankruptcy data writes a missing value); a categorical feature matches every entry
by its level text (``-1`` is the level ``"-1"``, ``"NA"`` the level ``"NA"``).

>>> mv = MissingValues((-9, -8, "NA"), {"age": ()})
>>> mv.numbers("income").tolist(), mv.numbers("age").tolist(), sorted(mv.texts("purpose"))
([-9.0, -8.0], [], ['-8', '-9', 'NA'])
>>> sorted(mv.number_texts("income")), sorted(MissingValues(("?", "-9")).number_texts("x"))
(['NA'], ['?'])
>>> mv.mask_numbers(np.array([1.0, -9.0, np.nan, -8.0]), "income").tolist()
[1.0, nan, nan, nan]
>>> MissingValues().is_empty, mv.is_empty
(True, False)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from driftwatch.schema import level_text

__all__ = ["MissingValues", "is_number"]


def is_number(v: Any) -> bool:
    """Whether a declared value can match a numeric feature: a finite int or float (not a
    boolean, not text).

    >>> [is_number(v) for v in (-9, -9.5, True, "-9", float("nan"))]
    [True, True, False, False, False]
    """
    return isinstance(v, int | float) and not isinstance(v, bool) and bool(np.isfinite(v))


def _reads_as_number(v: str) -> bool:
    try:
        float(v)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class MissingValues:
    """Sentinels for every feature (``default``) and per feature (``by_feature``)."""

    default: tuple[Any, ...] = ()
    by_feature: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not self.default and not any(self.by_feature.values())

    def values(self, name: str) -> tuple[Any, ...]:
        """The declared values for feature ``name``."""
        return tuple(self.by_feature.get(name, self.default))

    def numbers(self, name: str) -> np.ndarray:
        """The numbers that are missing in numeric feature ``name`` (``float64``)."""
        return np.array(sorted({float(v) for v in self.values(name) if is_number(v)}),
                        dtype=np.float64)

    def number_texts(self, name: str) -> frozenset[str]:
        """The texts that are missing among numeric feature ``name``'s numbers (``"?"``,
        ``"Exempt"``), stripped: text that reads as no number."""
        return frozenset(v.strip() for v in self.values(name)
                         if isinstance(v, str) and not _reads_as_number(v))

    def texts(self, name: str) -> frozenset[str]:
        """The level texts that are missing in categorical feature ``name``."""
        return frozenset(level_text(v) for v in self.values(name))

    def mask_numbers(self, values: np.ndarray, name: str) -> np.ndarray:
        """``values`` with the sentinels of ``name`` set to NaN (a new array when any)."""
        nums = self.numbers(name)
        if not len(nums):
            return values
        return np.where(np.isin(values, nums), np.nan, values)

    def to_dict(self, names: Iterable[str]) -> dict[str, list[Any]]:
        """The values of each of ``names`` that has some (what a profile records)."""
        return {n: list(self.values(n)) for n in names if self.values(n)}
