"""Percent text as numbers: Lending Club writes ``int_rate`` and ``revol_util`` as
``"13.56%"``.

A feature a connector maps with ``format: percent`` is read by this one rule in the stream
(:func:`driftwatch.connectors.columns.text_numbers`) and in the reference table
(:func:`driftwatch.windows.conventions.build_profile`), through
:func:`driftwatch.textnumbers.number_in`, so a rate binned on the reference lands in the
same bins live: the number before the sign, spaces around allowed; a number passes as it
is; blank text is missing; anything else is not a percentage.
"""

from __future__ import annotations

__all__ = ["PERCENT_HELP", "bare_percent"]

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
