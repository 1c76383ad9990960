"""Features that most likely leak the outcome: recorded after it, so a model trained on
them looks perfect and cannot have them when it scores.

Lending Club's ``total_rec_prncp``, ``recoveries`` or ``last_pymnt_d`` and the SBA's
``ChgOffPrinGr`` are written once a loan has ended; as features they separate the label
almost perfectly. ``driftwatch init`` warns, never drops (a person decides):

* **by values** (:func:`separation`): on rows that carry both the feature and the
  outcome, a numeric feature whose rank AUC for the bad class is at least
  :data:`LEAK_AUC` (or at most ``1 - LEAK_AUC``), or a categorical one whose levels (each
  with at least :data:`MIN_LEVEL_ROWS` rows; rarer ones pooled) predict the outcome at a
  balanced accuracy of at least :data:`LEAK_AUC`. Balanced, so a rare bad class (1%
  fraud) gives no free 99%. Each class needs :data:`MIN_CLASS_ROWS` rows with a value.
* **by name** (:func:`post_outcome_name`, weaker): a name like a value recorded after the
  outcome (:data:`POST_OUTCOME_NAMES`), unless it counts over a look-back window
  (:data:`LOOKBACK`): Lending Club's ``collections_12_mths_ex_med`` and
  ``chargeoff_within_12_mths`` are read off the credit report before the loan.

The values are read as the monitor reads them, the codes ``init`` proposes for missing
among them (999, -1: :mod:`~driftwatch.onboard.sentinels`) taken as missing
(:mod:`~driftwatch.onboard.leakwarn`).

>>> import numpy as np
>>> bad = np.arange(200) % 4 == 0
>>> separation(np.where(bad, 500.0, 0.0) + np.arange(200), bad, "numeric")
'rank AUC 1.000 for the bad class on 200 rows'
>>> [post_outcome_name(n) for n in ("total_rec_prncp", "ChgOffPrinGr", "income")]
['total_rec', 'chgoff', None]
>>> post_outcome_name("collections_12_mths_ex_med"), post_outcome_name("sent_to_collection")
(None, 'collection')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["LEAK_AUC", "LOOKBACK", "MIN_CLASS_ROWS", "MIN_LEVEL_ROWS", "POST_OUTCOME_NAMES",
           "post_outcome_name", "rank_auc", "separation"]

#: The separation (rank AUC, or balanced accuracy of levels) from which a feature leaks
LEAK_AUC = 0.98
#: Rows with a value each class needs before separation is evidence
MIN_CLASS_ROWS = 20
#: Rows a categorical level needs to predict on its own (rarer levels are pooled)
MIN_LEVEL_ROWS = 5
#: Name parts of values recorded after the outcome, each with the pattern it is read by
POST_OUTCOME_NAMES = {
    "recover": r"recover",
    "chgoff": r"chg_?off",
    "charge_off": r"charged?_?off",
    "collection": r"collection",
    "settlement": r"settlement",
    "last_pymnt": r"last_pymnt",
    "total_rec": r"total_rec",
    "out_prncp": r"out_prncp",
}

#: A count over the months before the application, as credit reports write them
#: (``_12_mths``, ``_within_12_mths``, ``_24m``, ``mths_since_``): known at origination,
#: whatever else its name says
LOOKBACK = re.compile(r"(?:^|_)(?:\d+_?(?:mths|months|m)|within_\d+|(?:mths|months)_since)"
                      r"(?:_|$)")

_HUMPS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPACES = re.compile(r"[\s\-.]+")


def post_outcome_name(name: str) -> str | None:
    """The :data:`POST_OUTCOME_NAMES` part that ``name`` (as snake_case) holds, or None;
    None too for a count over a look-back window (:data:`LOOKBACK`)."""
    snake = _SPACES.sub("_", _HUMPS.sub("_", name.strip())).lower()
    flat = name.lower()
    if LOOKBACK.search(snake):
        return None
    for part, pattern in POST_OUTCOME_NAMES.items():
        if re.search(pattern, snake) or re.search(pattern, flat):
            return part
    return None


def rank_auc(x: np.ndarray, bad: np.ndarray) -> float:
    """The probability that a bad row's ``x`` ranks above a good row's (ties count half:
    Mann-Whitney); NaN without both classes.

    >>> rank_auc(np.array([1.0, 2.0, 3.0, 4.0]), np.array([False, False, True, True]))
    1.0
    """
    nb, ng = int(bad.sum()), int((~bad).sum())
    if nb == 0 or ng == 0:
        return float("nan")
    ranks = pd.Series(x).rank().to_numpy()
    return float((ranks[bad].sum() - nb * (nb + 1) / 2) / (nb * ng))


def _level_accuracy(levels: Sequence[Any], bad: np.ndarray) -> float:
    """Balanced accuracy of predicting each row's outcome by its level's (the class more
    frequent there relative to its overall share); rare levels pooled."""
    keys = pd.Series([str(v) for v in levels])
    counts = keys.value_counts()
    keys = keys.where(keys.map(counts) >= MIN_LEVEL_ROWS, "\0rare")
    table = pd.crosstab(keys, pd.Series(bad, name="bad"))
    nb, ng = int(bad.sum()), int((~bad).sum())
    b = table.get(True, pd.Series(0, index=table.index))
    g = table.get(False, pd.Series(0, index=table.index))
    says_bad = b / nb > g / ng
    return float(0.5 * (b[says_bad].sum() / nb + g[~says_bad].sum() / ng))


def separation(values: Sequence[Any] | np.ndarray, bad: Sequence[bool] | np.ndarray,
               kind: str) -> str | None:
    """What says that a feature's ``values`` alone separate the outcome (``bad``: True for
    the bad class, row for row), or None. ``kind``: numeric (rank AUC on the rows with a
    number) or categorical (levels, a missing value one of them)."""
    y = np.asarray(bad, dtype=bool)
    if kind == "numeric":
        x = pd.to_numeric(pd.Series(list(values), dtype=object), errors="coerce").to_numpy(
            dtype=np.float64)
        ok = np.isfinite(x)
        x, y = x[ok], y[ok]
    else:
        x = np.array(["\0missing" if v is None or (isinstance(v, float) and np.isnan(v))
                      else v for v in values], dtype=object)
    nb, ng = int(y.sum()), int((~y).sum())
    if nb < MIN_CLASS_ROWS or ng < MIN_CLASS_ROWS:
        return None
    if kind == "numeric":
        if len(np.unique(x)) < 2:
            return None
        auc = rank_auc(x, y)
        if auc >= LEAK_AUC or auc <= 1 - LEAK_AUC:
            return f"rank AUC {auc:.3f} for the bad class on {nb + ng} rows"
        return None
    acc = _level_accuracy(list(x), y)
    if acc >= LEAK_AUC:
        return f"its levels predict the outcome at {acc:.1%} balanced accuracy on {nb + ng} rows"
    return None
