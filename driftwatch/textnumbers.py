"""The text formats a numeric feature may be written in (a connector's ``format:``), each
read by one rule in the stream and the reference table: ``percent`` (``"13.56%"``,
:mod:`driftwatch.percent`) and ``money`` (``"$60,000.00 "``, :mod:`driftwatch.money`).
``decimal`` is the decimal mark of the file the text was read from (``,`` for a CSV whose
first rows write ``3644,09``: :mod:`driftwatch.csvdecimal`); money text is read with it.

>>> number_in("money", "$1,500.00 "), number_in("percent", "7.5%"), help_for("money")
(1500.0, 7.5, "a number or money text like '$60,000.00'")
>>> [number_in("percent", v) for v in ("13.56%", " 7 % ", "21", 21, "", None)]
[13.56, 7.0, 21.0, 21.0, None, None]
>>> [number_in("money", v) for v in ("-$1,234.5", "€ 12", "1234", 7, "", None)]
[-1234.5, 12.0, 1234.0, 7.0, None, None]
>>> number_in("percent", "abc%")
Traceback (most recent call last):
...
ValueError: not a number or percent text like '13.56%'
>>> number_in("money", "1.234,56 €", decimal=","), number_in("money", "1,5", decimal=",")
(1234.56, 1.5)
>>> number_in("percent", "1,234%", decimal=","), number_in("percent", "13,56%")
(1.234, 13.56)
>>> number_in("money", "$6,00.00")
Traceback (most recent call last):
...
ValueError: not a number or money text like '$60,000.00'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from driftwatch.money import MONEY_HELP, bare_money
from driftwatch.percent import PERCENT_HELP, bare_percent

__all__ = ["TEXT_FORMATS", "bare_text", "help_for", "number_in"]

#: format -> (its text as a plain number's with a decimal mark, what it should be)
_RULES: dict[str, tuple[Callable[[str, str], str | None], str]] = {
    "percent": (bare_percent, PERCENT_HELP),
    "money": (bare_money, MONEY_HELP),
}
TEXT_FORMATS = tuple(_RULES)


def number_in(fmt: str, v: Any, decimal: str = ".") -> float | None:
    """The number ``v`` stands for in format ``fmt`` (None: missing), read from a file
    whose decimal mark is ``decimal``; ``ValueError`` when it is none. A number passes as
    it is; blank text is missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str) and (t := bare_text(fmt, v, decimal)) is not None:
        if not t:
            return None
        try:
            return float(t)
        except ValueError:
            pass
    raise ValueError(f"not {help_for(fmt)}")


def bare_text(fmt: str, text: str, decimal: str = ".") -> str | None:
    """``text`` as a plain number's text (``''`` when blank), None when it is none;
    ``decimal``: the decimal mark of the file it was read from."""
    return _RULES[fmt][0](text, decimal)


def help_for(fmt: str) -> str:
    """What a value of format ``fmt`` should be, for an error."""
    return _RULES[fmt][1]
