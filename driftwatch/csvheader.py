"""A CSV whose first line is data, not column names, or whose second line is a second
header, is refused.

UCI's German and Australian credit tables come without a header (``0.5,12,3,...``); read
as a CSV, their first row becomes the column names, that row is lost, and every later
message names columns such as ``0.5`` or ``A11``. So each reader looks at the first lines:
the first is data when every cell of it is a number, or when it holds numbers and
each of its cells has the shape of the second line's cell below it (both numbers, both
blank, or text with the same letters-and-digits pattern: ``A11`` over ``A12``), or when it
holds numbers and its cells fit the columns below: each number heads a column of numbers,
each text a column of text, and more than half its texts are values of their own column
below (UCI's Credit Approval ``crx.data``: ``b,30.83,0,u,g,w,...``, where ``b`` and ``u``
come again under them; a name is not a value of its own column). Cells without a letter
or digit (``?``, ``-``) and blank ones fit any column. Names that are no numbers never
match, nor does pandas' header of column positions (``0,1,2``, after a blank index cell
or not), which is a header. A second header line (a workbook with two header rows saved
as CSV) is refused too: :func:`second_header`.

>>> header_is_data(["0.5", "12", "3"], ["1.5", "24", "1"])
'every cell is a number'
>>> header_is_data(["A11", "6", "A34"], ["A12", "48", "A32"])
'its cells are numbers and codes shaped as in the second line'
>>> header_is_data(["b", "30.83", "u", "+"], ["a", "58.67", "u", "-"], [["b", "24.5", "y", "+"]])
'its numbers head columns of numbers and its texts are values of their columns below'
>>> header_is_data(["region", "2019"], ["north", "5"], [["south", "7"]]) is None
True
>>> header_is_data(["age", "2019", "amount"], ["41", "5", "1200"]) is None
True
>>> header_is_data(["", "0", "1", "2"], ["0", "0.5", "7", "1"]) is None
True
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path

from driftwatch.csvnulls import CSV_MISSING
from driftwatch.csvsep import read_head
from driftwatch.errors import SourceError

__all__ = ["header_is_data", "refuse_data_header", "second_header"]

#: The rows looked at: the header, the line after it, and the rows below that.
_ROWS = 22
_NUMBER = re.compile(r"\s*[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?\s*")


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell))


def _shape(cell: str) -> str:
    """``number``, ``blank``, or the text with each letter an ``a`` and each digit a ``9``."""
    if _is_number(cell):
        return "number"
    if not cell.strip():
        return "blank"
    return "".join("a" if ch.isalpha() else "9" if ch.isdigit() else ch for ch in cell)


def _positions(cells: Sequence[str]) -> bool:
    """pandas' header of a frame without names: 0, 1, ... (after a blank index cell)."""
    named = list(cells[1:]) if cells and not cells[0].strip() else list(cells)
    return [c.strip() for c in named] == [str(i) for i in range(len(named))]


def header_is_data(header: Sequence[str], second: Sequence[str] | None = None,
                   rest: Sequence[Sequence[str]] = ()) -> str | None:
    """Why the first line ``header`` of a CSV reads as data (``second``: the line after it,
    when there is one; ``rest``: the lines after that), or None when it reads as column
    names."""
    numbers = [c for c in header if _is_number(c)]
    if not numbers or _positions(header):
        return None
    if len(numbers) == sum(1 for c in header if c.strip()):
        return "every cell is a number"
    if second is None:
        return None
    if len(second) == len(header) and all(
            _shape(h) == _shape(s) for h, s in zip(header, second, strict=True)):
        return "its cells are numbers and codes shaped as in the second line"
    below = [r for r in (second, *rest) if len(r) == len(header)]
    if below and _fits_columns(header, below):
        return "its numbers head columns of numbers and its texts are values of their columns below"
    return None


def _neutral(cell: str) -> bool:
    """Blank, or no letter or digit in it (``?``, ``-``): a missing code or a sign, no name."""
    return not any(ch.isalnum() for ch in cell)


def _fits_columns(header: Sequence[str], below: Sequence[Sequence[str]]) -> bool:
    """Whether each cell of ``header`` fits its column in the rows ``below`` (a number over
    mostly numbers, a text over mostly text) and more than half its texts
    are values of their own column below."""
    texts = matched = 0
    for j, h in enumerate(c.strip() for c in header):
        if _neutral(h):
            continue
        column = [r[j].strip() for r in below if not _absent(r[j]) and not _neutral(r[j])]
        mostly_numbers = 2 * sum(map(_is_number, column)) > len(column)
        if _is_number(h):
            if not mostly_numbers:
                return False
            continue
        if mostly_numbers:
            return False
        texts += 1
        matched += h in column
    return texts > 0 and 2 * matched > texts


def _absent(cell: str) -> bool:
    return not cell.strip() or cell.strip() in CSV_MISSING


def second_header(rows: Sequence[Sequence[str]]) -> list[str] | None:
    """The names of a CSV's second line when it is a second header (the first rows
    ``rows``, header first): no number in it, and in at least two of its named columns,
    half of them or more, every row below holds a number or nothing. Such a file comes
    from a workbook with two header rows (UCI's "default of credit card clients":
    ``X1, X2, ...`` above ``LIMIT_BAL, SEX, ...``); read as it is, every number column
    holds the text of a name and is a category.

    >>> second_header([["", "X1", "X2", "Y"], ["ID", "LIMIT_BAL", "SEX", "default"],
    ...                ["1", "20000", "2", "1"], ["2", "120000", "2", "1"]])
    ['ID', 'LIMIT_BAL', 'SEX', 'default']
    >>> second_header([["id", "job", "n"], ["a", "admin.", "3"], ["b", "NA", "4"]]) is None
    True
    """
    if len(rows) < 3 or len(rows[1]) != len(rows[0]):
        return None
    second, below = rows[1], [r for r in rows[2:] if len(r) == len(rows[1])]
    if not below or any(_is_number(c) for c in second):
        return None
    named = [j for j, c in enumerate(second) if not _absent(c)]
    numbers = [j for j in named
               if all(_is_number(r[j]) or _absent(r[j]) for r in below)
               and any(_is_number(r[j]) for r in below)]
    if len(numbers) >= 2 and 2 * len(numbers) >= len(named):
        return [c.strip() for c in second]
    return None


def refuse_data_header(path: str | Path, sep: str, what: str) -> None:
    """Raise :class:`~driftwatch.errors.SourceError` naming ``what`` when the CSV ``path``
    (read with ``sep``) has data on its first line instead of column names."""
    text, whole = read_head(path)
    if not whole:  # a line cut at the end of the head is no line to compare with
        text = text[:text.rfind("\n") + 1]
    try:
        rows = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if r][:_ROWS]
    except csv.Error:  # not CSV text: the reader says what is wrong with it
        return
    if not rows:
        return
    if (names := second_header(rows)) is not None:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise SourceError(f"{what}: its second line is a second header ({shown}), not "
                          "data: the columns below it hold numbers; keep one header line, "
                          "the column names (a workbook with two header rows, saved as CSV?)")
    why = header_is_data(rows[0], rows[1] if len(rows) > 1 else None, rows[2:])
    if why is None:
        return
    first = sep.join(rows[0])
    shown = first if len(first) <= 60 else first[:60] + "..."
    raise SourceError(f"{what}: its first line reads as data, not column names ({why}: "
                      f"{shown!r}); add a header line with the column names")
