"""A category level named like a missing value: ``unknown`` in UCI Bank Marketing.

UCI's Bank Marketing table writes a missing job, marital status, education, default,
housing or loan as the level ``unknown``. ``init`` does not guess such text into a missing
value (a level ``unknown`` may be a real answer), so it stays a category and a feed whose
lookup starts failing reads as drift in that feature. :func:`missing_word_level` finds the
level so that ``init`` can say so, with the connector line that reads it as missing (its
rise is then a data-quality fault, which holds model changes).

>>> import pandas as pd
>>> missing_word_level(pd.Series(["admin.", "unknown", "blue-collar", "admin."]))
('unknown', 0.25)
>>> missing_word_level(pd.Series(["A11", "A12"])) is None
True
"""

from __future__ import annotations

import re

import pandas as pd

__all__ = ["MISSING_WORDS", "missing_word_level"]

#: Level texts (lower case, words split by spaces) that name a missing value.
MISSING_WORDS = frozenset({"unknown", "missing", "not known", "not available",
                           "not specified", "unspecified", "undisclosed", "not disclosed"})


def _words(text: str) -> str:
    return " ".join(re.split(r"[\s_\-.]+", text.strip().lower())).strip()


def missing_word_level(col: pd.Series) -> tuple[str, float] | None:
    """The level of a categorical column ``col`` named like a missing value, as written,
    with its share of the column's rows; None where no text level is (the most frequent
    where several are)."""
    counts = col.dropna().value_counts()
    for level, n in counts.items():  # most frequent first
        if isinstance(level, str) and _words(level) in MISSING_WORDS:
            return level, n / len(col)
    return None
