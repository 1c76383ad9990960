"""Which character marks a CSV's decimals: the point, or the comma of European exports.

A spreadsheet saved in much of Europe writes ``3644,09`` beside its semicolons. Read with
the decimal point such a number is text: a numeric column becomes a category with a level
per row. So each reader looks at the file's own head (its first 64 KiB, as the separator
rule does, so every read of a file agrees): when the separator is not the comma, and some
fields of those rows are numbers with one decimal comma (``-12,5``, ``1,5e3``) or with
thousands groups only the comma reads (``1.234,56``, ``1.234.567``, ``1 234,5``) while
none is a number with a decimal point or with groups only the point reads (``1,234.5``,
``12,345,678``), the mark is the comma. A currency sign
around a field is looked past (``1.234,56 €``: an amount tells the mark too), and so is
a percent sign after it (``12,5%``: a rate tells it as well). A
comma-separated file keeps the point (its numbers cannot hold a bare comma). Numbers of
both kinds keep the point, and the caller says so with the fix (:func:`csv_notes`).
Numbers whose thousands are grouped are then read as numbers under the mark
(:mod:`driftwatch.numbergroups`). A connector's ``csv: {decimal: ","}`` settles it for a
stream.

>>> text_decimal('"id";"ts";"income"\\n1;1700000000;3644,09\\n2;1700000060;-12,5\\n', ";")
... # doctest: +NORMALIZE_WHITESPACE
DecimalMark(mark=',', comma='3644,09', point=None, grouped=None, point_grouped=None,
            comma_or_group=None, point_or_group=None)
>>> text_decimal("id;x\\n1;3.5\\n", ";").mark, text_decimal('id,x\\n1,"3,5"\\n', ",").mark
('.', '.')
>>> found = text_decimal("id;x\\n1;3,5\\n2;1.234,5 €\\n", ";")
>>> found.mark, found.ambiguous, found.grouped
(',', False, '1.234,5')
>>> text_decimal("id;x\\n1;3.5\\n2;1.234,5\\n", ";").ambiguous
True
>>> text_decimal("id;rate\\n1;12,5%\\n2;7,25 %\\n", ";").mark
','
>>> found = text_decimal("id;x\\n1;3,5\\n2;12,345,678\\n", ";")
>>> found.mark, found.ambiguous, found.point_grouped
('.', True, '12,345,678')
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from driftwatch.csvsep import read_head, separator_note
from driftwatch.numbergroups import grouped_number

__all__ = ["DECIMAL_ATTR", "DecimalMark", "csv_notes", "file_decimal", "frame_decimal",
           "text_decimal"]

#: The key of a table's ``attrs`` that holds the decimal mark of the CSV it was read from
#: (money text in it is read with that mark: :mod:`driftwatch.money`)
DECIMAL_ATTR = "decimal_mark"

_EXP = r"(?:[eE][-+]?\d+)?"
_COMMA = re.compile(rf"[-+]?\d+,\d+{_EXP}")
_POINT = re.compile(rf"[-+]?\d+\.\d+{_EXP}")
_GROUPED = re.compile(rf"[-+]?\d{{1,3}}(?:\.\d{{3}})+,\d+{_EXP}")  # 1.234,56
#: Numbers whose thousands are grouped, by the decimal mark they are read under
_GROUPS = {d: re.compile(grouped_number(d), re.ASCII) for d in ".,"}


@dataclass(frozen=True)
class DecimalMark:
    """What a CSV's first rows say of its decimal mark: ``mark`` is ``,`` or ``.``; the
    others are the first numbers seen that only a decimal comma reads (``comma``:
    ``3,5``; ``grouped``: thousands groups before a decimal comma or several point groups,
    ``1.234,56``, ``1.234.567``), that only a decimal point reads (``point``: ``3.5``;
    ``point_grouped``: ``1,234.56``, ``12,345,678``), and that either reads, as a decimal
    mark or as one thousands group (``comma_or_group``: ``1,234``; ``point_or_group``:
    ``1.234``)."""

    mark: str = "."
    comma: str | None = None
    point: str | None = None
    grouped: str | None = None
    point_grouped: str | None = None
    comma_or_group: str | None = None
    point_or_group: str | None = None

    @property
    def ambiguous(self) -> bool:
        """Numbers only the comma reads beside numbers only the point reads (or, with
        neither, ``1,234`` beside ``1.234``): read with the point, and said."""
        comma, point = self.comma_only, self.point_only
        if comma or point:
            return bool(comma and point)
        return self.comma_or_group is not None and self.point_or_group is not None

    @property
    def comma_only(self) -> str | None:
        """The first number seen that only a decimal comma reads."""
        return self.comma or self.grouped

    @property
    def point_only(self) -> str | None:
        """The first number seen that only a decimal point reads."""
        return self.point or self.point_grouped


def _mark(found: DecimalMark) -> str:
    """The mark a head's numbers say: the comma where numbers only it reads are found and
    none only the point reads (a ``1.000`` among them is a thousands group), or, with
    neither, where ``1,234`` is found and no ``1.234``; else the point."""
    if found.comma_only or found.point_only:
        return "," if found.comma_only and not found.point_only else "."
    return "," if found.comma_or_group and not found.point_or_group else "."


def text_decimal(text: str, sep: str, complete: bool = True) -> DecimalMark:
    """The decimal mark of a CSV whose head (header first) is ``text``, separated by
    ``sep``; ``complete=False``: the head was cut, its last line is left out."""
    if sep == ",":
        return DecimalMark()
    lines = text.splitlines(keepends=True)[1:]
    if not complete and lines:
        lines.pop()
    seen: dict[str, str] = {}
    try:
        for row in csv.reader(io.StringIO("".join(lines)), delimiter=sep):
            for field in row:
                # an amount's currency sign, a rate's percent sign: the number inside
                # tells the mark as a bare one does (a file may write its only decimals
                # as rates, "12,5%")
                f = field.strip().removesuffix("%").strip().strip("$€£").strip()
                if f and f[-1].isdigit() and (kind := _kind(f)):
                    seen.setdefault(kind, f)
    except csv.Error:  # a line the csv module refuses: the rows before it decide
        pass
    found = DecimalMark(**seen)
    return replace(found, mark=_mark(found))


def _kind(f: str) -> str | None:
    """Which :class:`DecimalMark` field a number's text ``f`` is evidence for, if any."""
    if _GROUPED.fullmatch(f) or _only_grouped(f, ","):
        return "grouped"
    if _only_grouped(f, "."):
        return "point_grouped"
    if _COMMA.fullmatch(f):
        return "comma_or_group" if _GROUPS["."].fullmatch(f) else "comma"
    if _POINT.fullmatch(f):
        return "point_or_group" if _GROUPS[","].fullmatch(f) else "point"
    return None


def _only_grouped(f: str, decimal: str) -> bool:
    """Whether ``f`` is a grouped number under the decimal mark ``decimal`` and under no
    other reading (``1 234`` groups under either; ``1.234`` is also a decimal point's)."""
    other = "." if decimal == "," else ","
    return (_GROUPS[decimal].fullmatch(f) is not None and _GROUPS[other].fullmatch(f) is None
            and (_POINT if decimal == "," else _COMMA).fullmatch(f) is None)


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
              fix: str = "save it with decimal points, or as Parquet", header: bool = True
              ) -> list[str]:
    """The lines that say how a CSV is read: with the separator of its header
    (``sep_found``; of its first line where it has no ``header``, its names given) and the
    decimal comma of its first rows, or why its decimal commas are not read (``fix``: what
    to do then).

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
        out.append(separator_note(what, sep, "," if comma else ".", header=header))
    elif comma:
        out.append(f"{what} has decimal commas (found in its first rows): read with ','")
    if found is not None and found.ambiguous:
        commas = found.comma or found.grouped or found.comma_or_group
        points = (f"with thousands commas ({found.point_grouped!r})"
                  if found.point is None and found.point_grouped is not None else
                  f"with points ({found.point or found.point_or_group!r})")
        out.append(f"{what}: its first rows hold numbers with decimal commas "
                   f"({commas!r}) and {points}, so its decimal "
                   f"mark cannot be told; read with the point (those with a comma are text); "
                   f"{fix}")
    elif found is not None and found.grouped is not None:
        out.append(f"{what}: its first rows hold numbers with thousands groups "
                   f"({found.grouped!r}): read as the numbers they write, in every column "
                   "read as numbers")
    return out
