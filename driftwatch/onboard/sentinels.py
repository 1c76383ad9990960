"""Numbers in a reference column that most likely mean "missing" (sentinel codes).

Bureau data codes special cases as numbers: FICO HELOC writes -9 (no bureau record), -8
(no usable trades) and -7 (condition not met) into otherwise non-negative columns; banks
use -999, 9999 or 999999. :func:`likely_missing_values` names such codes so that
``driftwatch init`` can write them into the connector, with the reason, for a person to
confirm. It errs on the side of saying nothing: a value is a code only when it is

* an integer found in at least :data:`MIN_SHARE` of the rows and :data:`MIN_ROWS` rows (a
  spike, not a stray value),
* and either a few (at most :data:`MAX_NEGATIVE_CODES`) negative integers in a column whose
  other values are all >= 0, set apart from them (a gap of an unused integer, or each code
  at least twice as frequent as the smallest real value, which no tail explains);
* or an all-nines number (-999, 9999, 999999, ...) outside the range of the other values
  and set apart from them: the nearest of them at least half its size away
  (:data:`NINES_GAP`; 9999 above values up to 400 is a code, 99 atop a dense 0..98, the
  top of a two-digit code range, is not);
* or the one positive value, an integer in at least :data:`MIN_FAR_SHARE` of the rows, of a
  column whose other values are all <= 0, above them by at least :data:`FAR_SPANS` times
  their own span (Home Credit's ``DAYS_EMPLOYED``: 365243 in 18% of rows, the others -17912
  to 0);

and the other values still take at least :data:`MIN_DISTINCT` distinct values. A column
with genuine negative values (a balance, a change) has many distinct negatives, or small
ones that continue its distribution, and is left alone.

A column of category codes (``codes``: named so, Porto Seguro's ``ps_car_07_cat``) has no
order, so no distribution for a negative code to continue: there the one negative value, an
integer in the same share of rows, of a column whose other values are integers >= 0 taking
at least two distinct values, is a code whether or not it is set apart (Porto's -1, its
documented "missing", beside codes 0 and 1).

>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> x = rng.integers(30, 95, 1000).astype(float)
>>> x[:60], x[60:80] = -9, -8
>>> likely_missing_values(pd.Series(x))[0]
[-9, -8]
>>> likely_missing_values(pd.Series(rng.normal(0, 500, 1000).round(2))) is None
True
>>> days = -rng.integers(0, 18000, 1000).astype(float)
>>> days[:180] = 365243
>>> likely_missing_values(pd.Series(days))[0]
[365243]
>>> car = rng.choice([-1, 0, 1], 1000, p=[0.02, 0.05, 0.93])
>>> likely_missing_values(pd.Series(car)), likely_missing_values(pd.Series(car), codes=True)[0]
(None, [-1])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["FAR_SPANS", "MAX_NEGATIVE_CODES", "MIN_DISTINCT", "MIN_FAR_SHARE", "MIN_ROWS",
           "MIN_SHARE", "NINES_GAP", "likely_missing_values"]

MIN_SHARE = 0.005
MIN_ROWS = 5
MAX_NEGATIVE_CODES = 3
MIN_DISTINCT = 5
_LEAST_ROWS = 50
#: A positive code above non-positive values: its least share of rows, and how many times
#: the other values' span it must lie above their largest
MIN_FAR_SHARE = 0.01
FAR_SPANS = 10.0
#: How far (a share of its own size) an all-nines code lies from the nearest other value
NINES_GAP = 0.5


def _nines(v: float) -> bool:
    a = abs(v)
    return a >= 99 and float(a).is_integer() and set(str(int(a))) == {"9"}


def _num(v: float) -> int | float:
    return int(v) if float(v).is_integer() else float(v)


def _far_above(rest: pd.Series, share: pd.Series, least: float) -> float | None:
    """The one positive value of ``rest`` when it is a code far above values all <= 0."""
    pos = np.unique(rest[rest > 0].to_numpy())
    if len(pos) != 1 or not float(pos[0]).is_integer():
        return None
    v = float(pos[0])
    others = rest[rest <= 0]
    if others.empty or share[v] < max(MIN_FAR_SHARE, least):
        return None
    lo, hi = float(others.min()), float(others.max())
    return v if v - hi >= FAR_SPANS * (hi - lo) > 0 else None


def _one_below(rest: pd.Series, share: pd.Series, least: float) -> float | None:
    """The one negative value of ``rest``, an integer in ``least`` of the rows, when the
    other values are integers >= 0 taking two distinct values at least: a code among
    category codes."""
    neg = np.unique(rest[rest < 0].to_numpy())
    others = rest[rest >= 0]
    if (len(neg) != 1 or not float(neg[0]).is_integer() or share[neg[0]] < least
            or others.nunique() < 2 or not (np.mod(others, 1) == 0).all()):
        return None
    return float(neg[0])


def likely_missing_values(col: pd.Series, codes: bool = False
                          ) -> tuple[list[int | float], str] | None:
    """``(codes, why)`` for a numeric reference column that holds likely sentinel codes
    (in ascending order, as people write them: -9, -8, -7), else None. ``codes``: the
    column holds category codes (its name says so), whose one negative code need not be
    set apart."""
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        return None
    s = col.dropna().astype(np.float64)
    s = s[np.isfinite(s)]
    n = len(s)
    if n < _LEAST_ROWS:
        return None
    share = s.value_counts() / n
    least = max(MIN_SHARE, MIN_ROWS / n)
    common = share[share >= least]  # few values: a column of amounts has thousands
    nines = [float(v) for v in common.index if _nines(float(v))]
    rest = s[~s.isin(nines)]
    if rest.empty:
        return None
    lo, hi = float(rest.min()), float(rest.max())
    found = [v for v in nines if (v < lo and lo - v >= NINES_GAP * abs(v))
             or (v > hi and v - hi >= NINES_GAP * abs(v))]
    rest = s[~s.isin(found)]
    if (far := _far_above(rest, share, least)) is not None:
        found.append(far)  # the other values are all <= 0: their negatives are real
        rest = rest[rest != far]
    elif codes and (below := _one_below(rest, share, least)) is not None:
        found.append(below)
        return _said(found, share, rest[rest != below], "the one negative value among "
                     "category codes")
    elif len(neg := np.unique(rest[rest < 0].to_numpy())):
        if (len(neg) > MAX_NEGATIVE_CODES or not all(float(v).is_integer() for v in neg)
                or any(share[v] < least for v in neg)):
            return None  # genuine negative values: a balance, a change, a rare stray
        pos = rest[rest >= 0]
        if pos.empty:
            return None
        lo = float(pos.min())
        apart = float(neg.max()) <= lo - 2 or all(share[v] >= 2 * share[lo] for v in neg)
        if not apart:
            return None  # the tail of the values below zero, not a code
        found += [float(v) for v in neg]
        rest = pos
    if not found or rest.nunique() < MIN_DISTINCT:
        return None
    return _said(found, share, rest)


def _said(found: list[float], share: pd.Series, rest: pd.Series,
          how: str = "apart from the other values") -> tuple[list[int | float], str]:
    """The codes ``found``, ascending, and why: their shares, ``how`` they stand to the
    other values, and those values' range."""
    codes = sorted(set(found))
    shares = ", ".join(f"{_num(v)} in {share[v]:.1%}" for v in codes)
    why = (f"{shares} of rows, {how} ({_num(float(rest.min()))} to "
           f"{_num(float(rest.max()))}): a code, read as missing")
    return [_num(v) for v in codes], why
