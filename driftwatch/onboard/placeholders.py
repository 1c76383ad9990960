"""Levels that stand for no value in a text category: Home Credit's ``XNA`` (not
available) and ``XAP`` (not applicable).

``init`` keeps such a level as a category (in Home Credit's ``ORGANIZATION_TYPE``, ``XNA``
marks the pensioners, a group of its own), but says so on the feature's ``placeholder:``
line: kept as a level, a feed that starts filling a field with it reads as drift, not as
missing values, so the data-quality gate does not hold model changes. Listing it under the
connector's ``missing_values_by_feature`` reads it as missing in the stream and the
reference alike. Only these spellings are named: ``unknown`` and ``other`` are often real
answers.

>>> import pandas as pd
>>> placeholder_note(pd.Series(["M", "F", "XNA", "F"]), ())
('XNA', "'XNA' in 1 of 4 rows: a placeholder for no value, kept as a level (more of it \
reads as drift, not as missing values); to read it as missing, add it to the connector's \
missing_values_by_feature")
>>> placeholder_note(pd.Series(["M", "F"]), ()) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = ["PLACEHOLDERS", "placeholder_note"]

#: Level texts that say "no value", as Home Credit's tables write them
PLACEHOLDERS = frozenset({"XNA", "XAP"})


def placeholder_note(col: pd.Series, missing: Sequence[Any]) -> tuple[str, str] | None:
    """The placeholder levels of reference column ``col`` that ``missing`` (the codes
    already read as missing) leaves as levels, and what ``init`` says of them; None
    without any."""
    present = col.dropna()
    if not len(present):
        return None
    counts = present.map(lambda v: v.strip() if isinstance(v, str) else v).value_counts()
    found = [v for v in counts.index
             if isinstance(v, str) and v in PLACEHOLDERS and v not in set(map(str, missing))]
    if not found:
        return None
    shares = ", ".join(f"{v!r} in {counts[v]}" for v in found)
    return (", ".join(found), f"{shares} of {len(col)} rows: a placeholder for no value, kept as a "
            "level (more of it reads as drift, not as missing values); to read it as "
            "missing, add it to the connector's missing_values_by_feature")
