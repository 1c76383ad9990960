"""Money text as numbers: the SBA's loan tables write ``DisbursementGross`` as
``"$60,000.00 "`` (a currency sign, thousands commas, a trailing space).

A feature a connector maps with ``format: money`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.text_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), through
:func:`driftwatch.textnumbers.number_in`, so an amount binned on the reference lands in
the same bins live: an optional sign, an optional currency sign (``$``, ``€``, ``£``),
digits whose thousands may be grouped by commas, an optional decimal part, spaces around
allowed; or an accountant's negative, such an amount in brackets with no sign
(``"($1,234.00)"`` is -1234); a number passes as it is; blank text is missing; anything
else is no amount.
"""

from __future__ import annotations

import re

__all__ = ["AMOUNT", "MONEY_HELP", "MONEY_TEXT", "bare_money"]

MONEY_HELP = "a number or money text like '$60,000.00'"
#: An amount's digits: commas only between groups of three (``1,234,567``; ``1,23`` and
#: ``1234,567`` are none), an optional decimal part
AMOUNT = r"(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)"
#: Money text, whole: a sign and a currency sign in either order (groups 1 and 2), or the
#: amount in brackets, the currency sign inside or before them (group 4: an open bracket)
MONEY_TEXT = re.compile(rf"\s*(?:([-+]?)\s*[$€£]?\s*([-+]?)\s*({AMOUNT})"
                        rf"|(\(\s*[$€£]?|[$€£]\s*\()\s*({AMOUNT})\s*\))\s*")


def bare_money(text: str) -> str | None:
    """``text`` as a plain number's text (``''`` when blank); None when it is no amount.

    >>> bare_money(" $60,000.00 "), bare_money("  "), bare_money("60,00"), bare_money("-$5")
    ('60000.00', '', None, '-5')
    >>> bare_money("($1,234.00)"), bare_money("$(7)"), bare_money("(-$5)"), bare_money("($5")
    ('-1234.00', '-7', None, None)
    """
    if not text.strip():
        return ""
    m = MONEY_TEXT.fullmatch(text)
    if m is None or (m.group(1) and m.group(2)):
        return None
    if m.group(4):  # in brackets: a negative amount
        return "-" + m.group(5).replace(",", "")
    return (m.group(1) or m.group(2)) + m.group(3).replace(",", "")
