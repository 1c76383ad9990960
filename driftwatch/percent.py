"""Percent text as numbers: Lending Club writes ``int_rate`` and ``revol_util`` as
``"13.56%"``.

A feature a connector maps with ``format: percent`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.percent_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), so a rate binned on the reference
lands in the same bins live: the number before the sign, spaces around allowed; a number
passes as it is; blank text is missing; anything else is not a percentage.

>>> [percent_number(v) for v in ("13.56%", " 7 % ", "21", 21, "", None)]
[13.56, 7.0, 21.0, 21.0, None, None]
>>> percent_number("abc%")
Traceback (most recent call last):
...
ValueError: not a number or percent text like '13.56%'
"""

from __future__ import annotations

import math
import numbers
from typing import Any

__all__ = ["PERCENT_HELP", "bare_percent", "percent_number"]

PERCENT_HELP = "a number or percent text like '13.56%'"


def bare_percent(text: str) -> str | None:
    """``text`` without the spaces around it and one trailing ``%``; None for a sign with
    no number before it.

    >>> bare_percent(" 13.56 % "), bare_percent("13.56"), bare_percent("%")
    ('13.56', '13.56', None)
    """
    t = text.strip()
    if not t.endswith("%"):
        return t
    t = t[:-1].rstrip()
    return t or None


def percent_number(v: Any) -> float | None:
    """The number ``v`` stands for (None: missing); ``ValueError`` when it is none."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        t = bare_percent(v)
        if t == "":
            return None
        if t is not None:
            try:
                return float(t)
            except ValueError:
                pass
    raise ValueError(f"not {PERCENT_HELP}")
