"""Text that stands for a missing value among a reference column's numbers.

Tables exported from ARFF or R write a missing number as text: the Polish companies
bankruptcy data's ``?`` in ``Attr1`` .. ``Attr64``, HMDA's ``Exempt`` in
``property_value``. pandas then reads the whole column as text, and every number becomes a
level of its own: a column ignored as "a value per row", or a category that drifts in every
window. :func:`missing_texts` names such text so that ``driftwatch init`` types the column
numeric and writes the text into the connector's ``missing_values_by_feature``, read as
missing in the stream and the reference alike.

A text is such a code only when the column's other present values all read as numbers,
taking at least :data:`~driftwatch.onboard.sentinels.MIN_DISTINCT` distinct values, some
not whole or more than :data:`~driftwatch.onboard.infer.MAX_INT_LEVELS` of them (a few
whole numbers beside ``A`` and ``B`` are category codes), and the text is one of at most
:data:`MAX_TEXTS` such texts, none holding a digit (``20%-<30%`` is a range, not a code;
``A1`` a category).

>>> import pandas as pd
>>> col = pd.Series(["0.2", "?", "1.5", "-3", "7", "0.01", "?"], name="Attr1")
>>> texts, why, nums = missing_texts(col)
>>> texts, nums.tolist()[:3]
(['?'], [0.2, nan, 1.5])
>>> why
"'?' in 2 of 7 rows, the others numbers (-3 to 7): text for a missing value, read as missing"
>>> missing_texts(pd.Series(["A", "B", "1", "2", "3", "4", "5"])) is None
True
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.onboard.infer import MAX_INT_LEVELS
from driftwatch.onboard.sentinels import MIN_DISTINCT

__all__ = ["MAX_TEXTS", "missing_texts", "numbers_with_missing_texts"]

#: At most this many distinct texts among the numbers (``NA`` and ``Exempt``)
MAX_TEXTS = 2
_DIGIT = re.compile(r"\d")


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int | float):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v.strip().replace("_", "x"))  # float() reads 1_0; a CSV does not
        except ValueError:
            return None
    return None


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


def missing_texts(col: pd.Series) -> tuple[list[str], str, pd.Series] | None:
    """``(texts, why, numbers)`` for a reference text column of numbers in which a few texts
    without digits stand for missing values: the texts (stripped, sorted), the reason, and
    the column as float64 with them missing; None for any other column."""
    if not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)):
        return None
    present = col.dropna()
    if present.empty:
        return None
    distinct = present.unique()
    read = {v: _number(v) for v in distinct}
    texts = sorted({v.strip() for v, n in read.items() if n is None and isinstance(v, str)})
    if (not texts or len(texts) > MAX_TEXTS or any(_DIGIT.search(t) or not t for t in texts)
            or any(n is None and not isinstance(v, str) for v, n in read.items())):
        return None
    numbers = {n for n in read.values() if n is not None and np.isfinite(n)}
    if len(numbers) < MIN_DISTINCT or (len(numbers) <= MAX_INT_LEVELS
                                       and all(n.is_integer() for n in numbers)):
        return None  # a few whole numbers beside letters: category codes, not a measure
    values = present.map(read)
    nums = pd.Series(np.nan, index=col.index, dtype=np.float64, name=col.name)
    nums[values.index] = values.astype(np.float64)
    counts = present[values.isna()].map(str.strip).value_counts()
    shares = ", ".join(f"{t!r} in {counts[t]}" for t in texts)
    why = (f"{shares} of {len(col)} rows, the others numbers ({_num(min(numbers))} to "
           f"{_num(max(numbers))}): text for a missing value, read as missing")
    return texts, why, nums


def numbers_with_missing_texts(ref: pd.DataFrame
                               ) -> tuple[pd.DataFrame, dict[str, tuple[list[str], str]]]:
    """``ref`` with each column of :func:`missing_texts` read as its numbers, and those
    columns' texts and reasons by name (``ref`` itself when there is none)."""
    found: dict[str, tuple[list[str], str]] = {}
    out = ref
    for c in ref.columns:
        if (hit := missing_texts(ref[c])) is not None:
            if out is ref:
                out = ref.copy()
            out[c] = hit[2]
            found[str(c)] = (hit[0], hit[1])
    return out, found
