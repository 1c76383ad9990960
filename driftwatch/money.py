"""Money text as numbers: the SBA's loan tables write ``DisbursementGross`` as
``"$60,000.00 "`` (a currency sign, thousands commas, a trailing space); a European export
writes ``"1.234,56 €"`` (thousands points, a decimal comma, the sign after the amount).

A feature a connector maps with ``format: money`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.text_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), through
:func:`driftwatch.textnumbers.number_in`, so an amount binned on the reference lands in
the same bins live: an optional sign, an optional currency sign (``$``, ``€``, ``£``)
before the amount or after it (one of them at most), digits whose thousands may be
grouped, an optional decimal part, spaces around allowed; or an accountant's negative,
such an amount in brackets with no sign (``"($1,234.00)"`` is -1234); a number passes as
it is; blank text is missing; anything else is no amount.

Which mark groups the thousands and which one starts the decimals is the file's decimal
mark (:mod:`driftwatch.csvdecimal`): with the point (``decimal="."``), commas group
(``1,234.56``); with the comma (a file whose first rows write ``3644,09``), points group
(``1.234,56``). Grouping marks sit only between groups of three digits either way, so
``1,23`` is no amount with the point and ``1.23`` none with the comma.
"""

from __future__ import annotations

import re

__all__ = ["AMOUNT", "MONEY_HELP", "MONEY_TEXT", "amount", "bare_money", "money_text"]

MONEY_HELP = "a number or money text like '$60,000.00'"
_CURRENCY = "[$€£]"


def amount(decimal: str = ".") -> str:
    """An amount's digits, with ``decimal`` as the decimal mark: the other mark (``,``
    with the point, ``.`` with the comma) only between groups of three (``1,234,567``;
    ``1,23`` and ``1234,567`` are none), an optional decimal part. RE2 reads it too."""
    group, point = (r"\.", ",") if decimal == "," else (",", r"\.")
    return rf"(?:(?:\d{{1,3}}(?:{group}\d{{3}})+|\d+)(?:{point}\d*)?|{point}\d+)"


#: An amount's digits with the decimal point (:func:`amount`)
AMOUNT = amount(".")


def money_text(decimal: str = ".") -> str:
    """Money text whole, in RE2 (no back-references, no groups that capture): one sign
    at most, before or after a currency sign before the amount, or before the amount
    with a currency sign after it; or the amount in brackets, the currency sign inside
    or before them."""
    a = amount(decimal)
    return (rf"^\s*(?:(?:[-+]?\s*{_CURRENCY}?|{_CURRENCY}\s*[-+]?)\s*{a}"
            rf"|[-+]?\s*{a}\s*{_CURRENCY}"
            rf"|(?:\(\s*{_CURRENCY}?|{_CURRENCY}\s*\()\s*{a}\s*\))\s*$")


#: Money text with the decimal point (:func:`money_text`), compiled
MONEY_TEXT = re.compile(money_text("."))
_MONEY_COMMA = re.compile(money_text(","))


def bare_money(text: str, decimal: str = ".") -> str | None:
    """``text`` as a plain number's text (``''`` when blank); None when it is no amount.
    ``decimal``: the file's decimal mark (``,``: points group the thousands).

    >>> bare_money(" $60,000.00 "), bare_money("  "), bare_money("60,00"), bare_money("-$5")
    ('60000.00', '', None, '-5')
    >>> bare_money("($1,234.00)"), bare_money("$(7)"), bare_money("(-$5)"), bare_money("($5")
    ('-1234.00', '-7', None, None)
    >>> bare_money("1.234,56 €", ","), bare_money("€ -1.234,56", ","), bare_money("60,00", ",")
    ('1234.56', '-1234.56', '60.00')
    >>> bare_money("1.234,56 €"), bare_money("1.23", ","), bare_money("$5 €")
    (None, None, None)
    """
    if not text.strip():
        return ""
    if (_MONEY_COMMA if decimal == "," else MONEY_TEXT).fullmatch(text) is None:
        return None
    group = "." if decimal == "," else ","
    owed = "(" in text  # what fits with a bracket is an amount in brackets: negative
    t = re.sub(rf"[\s$€£()+{re.escape(group)}]", "", text).replace(",", ".")
    if t.startswith("-"):
        return None if owed else t
    return "-" + t if owed else t
