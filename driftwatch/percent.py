"""Percent text as numbers: Lending Club writes ``int_rate`` and ``revol_util`` as
``"13.56%"``.

A feature a connector maps with ``format: percent`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.text_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), through
:func:`driftwatch.textnumbers.number_in`, so a rate binned on the reference lands in the
same bins live: the number before the sign, spaces around allowed; a number passes as it
is; blank text is missing; anything else is not a percentage. The number is written in
digits (:data:`NUMBER`): ``"nan%"``, ``"NaN %"`` and ``"inf%"`` are not percentages, as
``"abc%"`` is not (Python's ``float`` reads the first two as NaN, which passed for a rate
and was binned as missing without a word, and the third as infinity). Blank text and the
CSV readers' missing texts (``"n/a"``, ``"NaN"``: :mod:`driftwatch.csvnulls`) are missing.

A decimal comma (``"13,56%"``, as European exports write it) reads as the decimal point
when it cannot be a thousands comma: the one comma, no point, digits on both sides and
other than exactly three after it. ``"1,234%"`` could be 1234 or 1.234, and is no
percentage rather than a guess (with or without the sign: the sign says nothing about the
comma), unless the file it was read from writes its decimals with the comma
(:mod:`driftwatch.csvdecimal`, a connector's ``csv: {decimal: ","}``): there the comma is
the decimal mark whatever follows it, and ``"1,234%"`` is 1.234.
"""

from __future__ import annotations

import re

__all__ = ["COMMA_FILE_DECIMAL", "DECIMAL_COMMA", "NUMBER", "PERCENT_HELP", "bare_percent",
           "decimal_comma"]

PERCENT_HELP = "a number or percent text like '13.56%'"
#: A number whose one comma is its decimal mark: never followed by exactly three digits,
#: which a thousands comma is (in RE2 too: the arrow path uses it)
DECIMAL_COMMA = r"([-+]?\d+),(\d{1,2}|\d{4,})"
#: A number whose one comma is its decimal mark, in a file whose decimal mark is the comma
COMMA_FILE_DECIMAL = r"([-+]?\d+),(\d+)"
_COMMAS = {".": re.compile(DECIMAL_COMMA), ",": re.compile(COMMA_FILE_DECIMAL)}
#: A number in digits: a sign, digits with an optional decimal point, an exponent (RE2
#: reads it too); no ``nan``, ``inf`` or digit separators
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(NUMBER)


def decimal_comma(decimal: str = ".") -> str:
    """The pattern of a number with a decimal comma, in a file whose decimal mark is
    ``decimal`` (its groups: the digits before and after the comma)."""
    return COMMA_FILE_DECIMAL if decimal == "," else DECIMAL_COMMA


def bare_percent(text: str, decimal: str = ".") -> str | None:
    """``text`` without the spaces around it and one trailing ``%``, a decimal comma made
    a point (``''`` when blank); None when that is no number in digits (:data:`NUMBER`).
    ``decimal``: the decimal mark of the file it was read from (``,``: any one comma is).

    >>> bare_percent(" 13.56 % "), bare_percent("13.56"), bare_percent("%"), bare_percent(" ")
    ('13.56', '13.56', None, '')
    >>> bare_percent("13,56%"), bare_percent("0,5"), bare_percent("1,234%")  # the last: no number
    ('13.56', '0.5', None)
    >>> bare_percent("1,234%", ","), bare_percent("13,56%", ","), bare_percent("1,2,3%", ",")
    ('1.234', '13.56', None)
    >>> bare_percent("nan%"), bare_percent("NaN %"), bare_percent("inf%"), bare_percent("abc%")
    (None, None, None, None)
    """
    t = text.strip()
    if t.endswith("%"):
        t = t[:-1].rstrip()
        if not t:
            return None
    if m := _COMMAS[decimal].fullmatch(t):
        return f"{m[1]}.{m[2]}"
    return t if not t or _NUMBER.fullmatch(t) else None
