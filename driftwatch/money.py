"""Money text as numbers: the SBA's loan tables write ``DisbursementGross`` as
``"$60,000.00 "`` (a currency sign, thousands commas, a trailing space).

A feature a connector maps with ``format: money`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.text_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), through
:func:`driftwatch.textnumbers.number_in`, so an amount binned on the reference lands in
the same bins live: an optional sign, an optional currency sign (``$``, ``€``, ``£``),
digits whose thousands may be grouped by commas, an optional decimal part, spaces around
allowed; a number passes as it is; blank text is missing; anything else is no amount.
"""

from __future__ import annotations

import re

__all__ = ["MONEY_HELP", "MONEY_TEXT", "bare_money"]

MONEY_HELP = "a number or money text like '$60,000.00'"
#: Money text, whole: a sign and a currency sign in either order, commas only between
#: groups of three digits
MONEY_TEXT = re.compile(r"\s*([-+]?)\s*[$€£]?\s*([-+]?)\s*"
                        r"((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)\s*")


def bare_money(text: str) -> str | None:
    """``text`` as a plain number's text (``''`` when blank); None when it is no amount.

    >>> bare_money(" $60,000.00 "), bare_money("  "), bare_money("60,00"), bare_money("-$5")
    ('60000.00', '', None, '-5')
    """
    if not text.strip():
        return ""
    m = MONEY_TEXT.fullmatch(text)
    if m is None or (m.group(1) and m.group(2)):
        return None
    return (m.group(1) or m.group(2)) + m.group(3).replace(",", "")
