"""Which character marks a CSV's decimals: the point, or the comma of European exports.

A spreadsheet saved in much of Europe writes ``3644,09`` beside its semicolons. Read with
the decimal point such a number is text: a numeric column becomes a category with a level
per row. So each reader looks at the file's own head (its first 64 KiB, as the separator
rule does, so every read of a file agrees): when the separator is not the comma, and some
fields of those rows are numbers with one decimal comma (``-12,5``, ``1,5e3``) or with
points grouping the thousands before it (``1.234,56``, which no decimal point reads)
while none is a number with a decimal point, the mark is the comma. A currency sign
around a field is looked past (``1.234,56 €``: an amount tells the mark too), and so is
a percent sign after it (``12,5%``: a rate tells it as well). A
comma-separated file keeps the point (its numbers cannot hold a bare comma). Numbers of
both kinds keep the point, and the caller says so with the fix (:func:`csv_notes`); so
are thousands groups, which only ``format: money`` reads (:mod:`driftwatch.money`). A
connector's ``csv: {decimal: ","}`` settles it for a stream.

>>> text_decimal('"id";"ts";"income"\\n1;1700000000;3644,09\\n2;1700000060;-12,5\\n', ";")
DecimalMark(mark=',', comma='3644,09', point=None, grouped=None)
>>> text_decimal("id;x\\n1;3.5\\n", ";").mark, text_decimal('id,x\\n1,"3,5"\\n', ",").mark
('.', '.')
>>> found = text_decimal("id;x\\n1;3,5\\n2;1.234,5 €\\n", ";")
>>> found.mark, found.ambiguous, found.grouped
(',', False, '1.234,5')
>>> text_decimal("id;x\\n1;3.5\\n2;1.234,5\\n", ";").ambiguous
True
>>> text_decimal("id;rate\\n1;12,5%\\n2;7,25 %\\n", ";").mark
','
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftwatch.csvsep import read_head, separator_note

__all__ = ["DECIMAL_ATTR", "DecimalMark", "csv_notes", "file_decimal", "frame_decimal",
           "text_decimal"]

#: The key of a table's ``attrs`` that holds the decimal mark of the CSV it was read from
#: (money text in it is read with that mark: :mod:`driftwatch.money`)
DECIMAL_ATTR = "decimal_mark"

_EXP = r"(?:[eE][-+]?\d+)?"
_COMMA = re.compile(rf"[-+]?\d+,\d+{_EXP}")
_POINT = re.compile(rf"[-+]?\d+\.\d+{_EXP}")
_GROUPED = re.compile(rf"[-+]?\d{{1,3}}(?:\.\d{{3}})+,\d+{_EXP}")  # 1.234,56


@dataclass(frozen=True)
class DecimalMark:
    """What a CSV's first rows say of its decimal mark: ``mark`` is ``,`` or ``.``;
    ``comma``, ``point`` and ``grouped`` are the first numbers seen with a decimal comma,
    a decimal point, and thousands groups (``1.234,56``)."""

    mark: str = "."
    comma: str | None = None
    point: str | None = None
    grouped: str | None = None

    @property
    def ambiguous(self) -> bool:
        """Decimal commas (with thousands groups or without) beside decimal points: read
        with the point, and said."""
        return (self.comma is not None or self.grouped is not None) and self.point is not None


def text_decimal(text: str, sep: str, complete: bool = True) -> DecimalMark:
    """The decimal mark of a CSV whose head (header first) is ``text``, separated by
    ``sep``; ``complete=False``: the head was cut, its last line is left out."""
    if sep == ",":
        return DecimalMark()
    lines = text.splitlines(keepends=True)[1:]
    if not complete and lines:
        lines.pop()
    comma = point = grouped = None
    try:
        for row in csv.reader(io.StringIO("".join(lines)), delimiter=sep):
            for field in row:
                # an amount's currency sign, a rate's percent sign: the number inside
                # tells the mark as a bare one does (a file may write its only decimals
                # as rates, "12,5%")
                f = field.strip().removesuffix("%").strip().strip("$€£").strip()
                if not f or not f[-1].isdigit():
                    continue
                if _GROUPED.fullmatch(f):
                    grouped = grouped or f
                elif _COMMA.fullmatch(f):
                    comma = comma or f
                elif _POINT.fullmatch(f):
                    point = point or f
    except csv.Error:  # a line the csv module refuses: the rows before it decide
        pass
    mark = "," if (comma or grouped) and not point else "."
    return DecimalMark(mark, comma, point, grouped)


def file_decimal(path: str | Path, sep: str) -> DecimalMark:
    """:func:`text_decimal` of a file's first 64 KiB (gzip or not)."""
    if sep == ",":
        return DecimalMark()
    text, complete = read_head(path)
    return text_decimal(text, sep, complete)


def frame_decimal(frame: Any) -> str:
    """The decimal mark of the CSV a pandas table was read from (``.`` unless its
    ``attrs`` say ``,``: :data:`DECIMAL_ATTR`)."""
    return "," if getattr(frame, "attrs", {}).get(DECIMAL_ATTR) == "," else "."


def csv_notes(what: str, sep: str, found: DecimalMark | None, *, sep_found: bool = True,
              fix: str = "save it with decimal points, or as Parquet") -> list[str]:
    """The lines that say how a CSV is read: with the separator of its header
    (``sep_found``) and the decimal comma of its first rows, or why its decimal commas
    are not read (``fix``: what to do then).

    >>> print(*csv_notes("live.csv", ";", DecimalMark(",", "3,5")))
    ... # doctest: +NORMALIZE_WHITESPACE
    live.csv is semicolon-separated with decimal commas (found in its first rows):
    read with ';' and ','
    >>> csv_notes("live.csv", ",", None)
    []
    """
    comma = found is not None and found.mark == ","
    out = []
    if sep_found and sep != ",":
        out.append(separator_note(what, sep, "," if comma else "."))
    elif comma:
        out.append(f"{what} has decimal commas (found in its first rows): read with ','")
    if found is not None and found.ambiguous:
        out.append(f"{what}: its first rows hold numbers with decimal commas "
                   f"({found.comma or found.grouped!r}) and with points ({found.point!r}), "
                   f"so its decimal "
                   f"mark cannot be told; read with the point (those with a comma are text); "
                   f"{fix}")
    elif found is not None and found.grouped is not None:
        out.append(f"{what}: its first rows hold numbers with thousands groups "
                   f"({found.grouped!r}): read as amounts in a column mapped with format: "
                   "money (as init maps a column of them), as text in any other")
    return out
