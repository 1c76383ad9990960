"""A CSV whose first line is data, not column names, or whose second line is a second
header, is refused.

UCI's German and Australian credit tables and the loan-level files of Fannie Mae and
Freddie Mac come without a header (``0.5,12,3,...``; ``F19Q10000001|012020|Y|...``); read
as a CSV, their first row becomes the column names, that row is lost, and every later
message names columns such as ``0.5`` or ``A11``. So each reader looks at the first lines:
the first is data when every cell of it is a number, or when it holds a number and its
text cells sit where the lines below hold text of their shape. A text cell is judged by
its column below: it fits when a cell below has its shape, letters and case, digits and
marks (``A11`` over ``A12``, ``Y`` over ``N``, never ``id`` over ``ID``); it does not over
a column of numbers (a name, or a rare code such as a delinquency status ``XX`` over
``0``) or over coded text of other shapes; over free text (a column whose cells below have
mostly different shapes, such as lender names) or an empty column it says nothing. The
line is data when more of its text cells fit than not, so a header, whose names sit over
numbers or over values of other shapes, never is; its numbers and blank cells say nothing
alone, since a data row has those anywhere (Freddie Mac's ``9`` among ``Y``/``N``, a blank
where the rows below have values). Names that are no numbers never match, nor does
pandas' header of column positions (``0,1,2``, after a blank index cell or not), which is
a header. The first line is data too when it holds numbers and its cells fit the columns
below: each number heads a column of numbers, each text a column of text, and more than
half its texts are values of their own column below (UCI's Credit Approval ``crx.data``:
``b,30.83,0,u,g,w,...``, where ``b`` and ``u`` come again under them; a name is not a value
of its own column; cells without a letter or digit, ``?`` or ``-``, fit any column). A
second header line (a workbook with two header rows saved as CSV) is refused
too: :func:`second_header`.

>>> header_is_data(["0.5", "12", "3"], [["1.5", "24", "1"]])
'every cell is a number'
>>> header_is_data(["A11", "6", "A34"], [["A12", "48", "A32"]])
'its cells are numbers and codes shaped as in the lines below'
>>> header_is_data(["age", "2019", "amount"], [["41", "5", "1200"]]) is None
True
>>> header_is_data(["", "0", "1", "2"], [["0", "0.5", "7", "1"]]) is None
True
>>> header_is_data(["F19Q10000001", "012020", "9", "", "Acme Bank"],
...                [["F19Q10000002", "022020", "N", "31084", "Other sellers"],
...                 ["F19Q10000003", "022020", "Y", "", "Big Bank, N.A."],
...                 ["F19Q10000004", "032020", "N", "35620", "Other sellers"]])
'its cells are numbers and codes shaped as in the lines below'
>>> header_is_data(["region", "2019"], [["north", "5"], ["south", "7"]]) is None
True
>>> pivot = [["Germany", "3.1", "2.9"], ["France", "2.5", "2.7"], ["Peru", "1", "4"]]
>>> header_is_data(["country", "1990", "1991"], pivot) is None
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

__all__ = ["REFERENCE_FIX", "header_is_data", "refuse_data_header", "second_header",
           "title_line"]

#: How a reference table without a header is fixed: its names go in the policy, where
#: every reader of the reference reads them (init writes them there).
REFERENCE_FIX = ("or name them in the policy: reference: {csv: {names: [...]}} (init: "
                 "--reference-names)")

#: The rows looked at: the header, the line after it, and the rows below that.
_ROWS = 22
_NUMBER = re.compile(r"\s*[-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][-+]?\d+)?\s*")


def _is_number(cell: str) -> bool:
    return bool(_NUMBER.fullmatch(cell))


def _shape(cell: str) -> str:
    """``number``, ``blank``, or the text with each capital an ``A``, each other letter an
    ``a`` and each digit a ``9`` (``F19Q1`` is ``A99A9``)."""
    if _is_number(cell):
        return "number"
    if _absent(cell):
        return "blank"
    return "".join("A" if ch.isupper() else "a" if ch.isalpha() else "9" if ch.isdigit()
                   else ch for ch in cell.strip())


def _positions(cells: Sequence[str]) -> bool:
    """pandas' header of a frame without names: 0, 1, ... (after a blank index cell)."""
    named = list(cells[1:]) if cells and not cells[0].strip() else list(cells)
    return [c.strip() for c in named] == [str(i) for i in range(len(named))]


def _free_text(shapes: Sequence[str]) -> bool:
    """Whether a column's text below the first line (``shapes``, blanks left out) is free
    text, mostly of different shapes, rather than codes: three cells at least."""
    return len(shapes) >= 3 and 2 * len(set(shapes)) > len(shapes)


def _text_votes(header: Sequence[str], below: Sequence[Sequence[str]]) -> tuple[int, int]:
    """(codes that fit, codes that do not) among the text cells of ``header``, judged by
    their columns in ``below``: text over a column of numbers does not fit."""
    fit = miss = 0
    for j, cell in enumerate(header):
        shape = _shape(cell)
        if shape in ("number", "blank"):
            continue
        column = [_shape(r[j]) for r in below]
        present = [c for c in column if c != "blank"]
        if not present:
            continue  # an empty column below: no evidence
        text = [c for c in present if c != "number"]
        if shape in text:
            fit += 1
        elif not text or not _free_text(text):  # over numbers: a name, or a rare code
            miss += 1
    return fit, miss


def header_is_data(header: Sequence[str], below: Sequence[Sequence[str]] = ()) -> str | None:
    """Why the first line ``header`` of a CSV reads as data (``below``: the lines after it;
    those of another length are left out), or None when it reads as column names."""
    numbers = [c for c in header if _is_number(c)]
    if not numbers or _positions(header):
        return None
    if len(numbers) == sum(1 for c in header if c.strip()):
        return "every cell is a number"
    rows = [r for r in below if len(r) == len(header)]
    if rows and (votes := _text_votes(header, rows))[0] > votes[1]:
        return "its cells are numbers and codes shaped as in the lines below"
    if rows and _fits_columns(header, rows):
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


def _count(line: str, sep: str) -> int:
    try:
        return len(next(csv.reader([line], delimiter=sep), []))
    except csv.Error:
        return 1


def title_line(first: str, second: str, sep: str) -> bool:
    """Whether ``first``, a CSV's first line read with ``sep``, is a title above the header
    ``second``: it holds no comma-separated fields while the line below splits on commas
    into three or more, and not into as many fields on ``sep`` as it does (Lending Club's
    downloads open with ``Notes offered by Prospectus (https://...)``, whose spaces made it
    read as a space-separated header of five names).

    >>> title_line("Notes offered by Prospectus (x)", "id,member_id,loan_amnt,term", " ")
    True
    >>> title_line("age;balance;y", "30;3644,09;1,5", ";")  # decimal commas below
    False
    >>> title_line("score", "0.5", ",")
    False
    """
    first, second = first.rstrip("\r"), second.rstrip("\r")
    return (_count(first, ",") == 1 and _count(second, ",") >= 3
            and _count(second, sep) != _count(first, sep))


def refuse_data_header(path: str | Path, sep: str, what: str, fix: str) -> None:
    """Raise :class:`~driftwatch.errors.SourceError` naming ``what`` when the CSV ``path``
    (read with ``sep``) has data on its first line instead of column names; ``fix`` ends
    the message: how the reader at hand takes the names without a header line
    (:mod:`driftwatch.csvnames`)."""
    text, whole = read_head(path)
    if not whole:  # a line cut at the end of the head is no line to compare with
        text = text[:text.rfind("\n") + 1]
    try:
        rows = [r for r in csv.reader(io.StringIO(text), delimiter=sep) if r][:_ROWS]
    except csv.Error:  # not CSV text: the reader says what is wrong with it
        return
    if not rows:
        return
    lines = text.split("\n", 2)
    if len(lines) > 2 and title_line(lines[0], lines[1], sep):
        shown = lines[0].rstrip("\r")
        shown = shown if len(shown) <= 60 else shown[:60] + "..."
        raise SourceError(f"{what}: its first line ({shown!r}) is a title above the header, "
                          f"not column names: the line below splits on commas into "
                          f"{_count(lines[1], ',')} fields; remove the first line")
    if (names := second_header(rows)) is not None:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise SourceError(f"{what}: its second line is a second header ({shown}), not "
                          "data: the columns below it hold numbers; keep one header line, "
                          "the column names (a workbook with two header rows, saved as CSV?)")
    why = header_is_data(rows[0], rows[1:])
    if why is None:
        return
    first = sep.join(rows[0])
    shown = first if len(first) <= 60 else first[:60] + "..."
    raise SourceError(f"{what}: its first line reads as data, not column names ({why}: "
                      f"{shown!r}); add a header line with the column names "
                      f"({len(rows[0])} of them, separated by {sep!r}), {fix}")
