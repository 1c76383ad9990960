"""The text formats a numeric feature may be written in (a connector's ``format:``), each
read by one rule in the stream and the reference table: ``percent`` (``"13.56%"``,
:mod:`driftwatch.percent`) and ``money`` (``"$60,000.00 "``, :mod:`driftwatch.money`).

>>> number_in("money", "$1,500.00 "), number_in("percent", "7.5%"), help_for("money")
(1500.0, 7.5, "a number or money text like '$60,000.00'")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from driftwatch.money import MONEY_HELP, bare_money, money_number
from driftwatch.percent import PERCENT_HELP, bare_percent, percent_number

__all__ = ["TEXT_FORMATS", "bare_text", "help_for", "number_in"]

#: format -> (the number of one value, its text as a plain number's, what it should be)
_RULES: dict[str, tuple[Callable[[Any], float | None], Callable[[str], str | None], str]] = {
    "percent": (percent_number, bare_percent, PERCENT_HELP),
    "money": (money_number, bare_money, MONEY_HELP),
}
TEXT_FORMATS = tuple(_RULES)


def number_in(fmt: str, v: Any) -> float | None:
    """The number ``v`` stands for in format ``fmt`` (None: missing); ``ValueError`` when
    it is none."""
    return _RULES[fmt][0](v)


def bare_text(fmt: str, text: str) -> str | None:
    """``text`` as a plain number's text (``''`` when blank), None when it is none."""
    return _RULES[fmt][1](text)


def help_for(fmt: str) -> str:
    """What a value of format ``fmt`` should be, for an error."""
    return _RULES[fmt][2]
