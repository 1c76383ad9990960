"""Numbers written with their thousands grouped, read as the numbers they are: a
spreadsheet saved as CSV writes ``"1,234"`` and ``"12,345,678.5"`` where its decimal mark
is the point, ``1.234.567`` and ``1.234,5`` where it is the comma, and ``1 234`` (a space,
a no-break space or a narrow no-break space, as French exports write it) under either.

A text is such a number only when it can mean nothing else under its file's decimal mark
(:mod:`driftwatch.csvdecimal`): an optional sign; a first group of one to three digits,
then groups of exactly three, each after the same grouping character, which is never the
decimal mark; then an optional decimal part (the mark and digits). ``1,5`` and ``1,2345``
where the mark is the point group nothing (is it 1.5?), nor does ``1.5`` where it is the
comma: such text is left as it is (a ``wrong_type`` value in a numeric column, text in a
category), never guessed into another number. Every reader of a CSV reads by this rule:
the reference table and ``init``'s sample (a column whose values are all numbers, some of
them grouped, is a column of numbers: :func:`grouped_columns`), and the stream, where each
value of a column read as numbers is (:func:`ungroup_array`).

>>> ungrouped("1,234"), ungrouped("-12,345,678.5"), ungrouped("1\u00a0234"), ungrouped("1,5")
('1234', '-12345678.5', '1234', None)
>>> ungrouped("1.234.567", ","), ungrouped("1 234,5", ","), ungrouped("1,234", ",")
('1234567', '1234.5', None)
>>> ungrouped("1,234 567"), ungrouped("1234,567"), ungrouped(",234"), ungrouped("12")
(None, None, None, None)
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["GROUP_MARKS", "grouped_columns", "grouped_number", "ungroup_array", "ungrouped"]

#: The characters that may group the thousands, by the file's decimal mark: the other
#: mark, and the spaces (plain, no-break, narrow no-break)
GROUP_MARKS = {".": ", \u00a0\u202f", ",": ". \u00a0\u202f"}
_ESCAPED = {".": r"\.", ",": ","}
#: ASCII digits only, as RE2 reads ``\d`` in the stream (Python's would take "١٢٣")
_DIGITS = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?", re.ASCII)


def grouped_number(decimal: str = ".") -> str:
    """The pattern of a number whose thousands are grouped, under the decimal mark
    ``decimal`` (one grouping character throughout; RE2 reads it too)."""
    groups = "|".join(rf"\d{{1,3}}(?:{_ESCAPED.get(g, g)}\d{{3}})+" for g in GROUP_MARKS[decimal])
    return rf"[-+]?(?:{groups})(?:{_ESCAPED[decimal]}\d+)?"


_GROUPED = {d: re.compile(grouped_number(d), re.ASCII) for d in ".,"}
#: The grouping characters (and spaces around), as a character class RE2 reads too
_CLASS = {d: "[\\s" + "".join(_ESCAPED.get(g, g) for g in GROUP_MARKS[d]) + "]" for d in ".,"}
_MARKS = {d: re.compile(_CLASS[d]) for d in ".,"}


def ungrouped(text: str, decimal: str = ".") -> str | None:
    """``text`` (spaces around it allowed) as a plain number's text with a decimal point,
    when it is a number whose thousands are grouped under the decimal mark ``decimal``;
    else None."""
    t = text.strip()
    if not _GROUPED[decimal].fullmatch(t):
        return None
    return _MARKS[decimal].sub("", t).replace(",", ".")


def _number(v: Any, decimal: str) -> tuple[float | None, bool]:
    """A value of a table's text column as ``(number, grouped)``; None: no number."""
    if not isinstance(v, str):
        number = isinstance(v, int | float) and not isinstance(v, bool)
        return (float(v), False) if number else (None, False)
    if (plain := ungrouped(v, decimal)) is not None:
        return float(plain), True
    t = v.strip().replace(",", ".") if decimal == "," else v.strip()
    return (float(t), False) if _DIGITS.fullmatch(t) else (None, False)


def grouped_columns(frame: Any, decimal: str = ".") -> Any:
    """A pandas table read from a CSV whose decimal mark is ``decimal``, with each text
    column whose present values are all numbers, some of them grouped, made a column of
    numbers (as the reader made the others); any other column as it was. Missing values
    stay missing.

    >>> import pandas as pd
    >>> t = grouped_columns(pd.DataFrame({"a": ["1,234", "7", None], "b": ["1,234", "1,5", "2"]}))
    >>> t["a"].tolist()[:2], t["b"].tolist()
    ([1234.0, 7.0], ['1,234', '1,5', '2'])
    """
    import pandas as pd

    for c in frame.columns:
        col = frame[c]
        if not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)):
            continue
        present = col.dropna()
        if present.empty:
            continue
        # a text column's first value is most often no number: stop there, not after
        # reading every row (a 300,000-row reference has dozens of text columns)
        numbers: list[float] = []
        grouped = False
        for v in present:
            n, g = _number(v, decimal)
            if n is None:
                break
            numbers.append(n)
            grouped = grouped or g
        else:
            if grouped:
                out = pd.Series(float("nan"), index=col.index, dtype="float64")
                out[present.index] = numbers
                frame[c] = out
    return frame


def ungroup_array(arr: Any, decimal: str = ".") -> Any:
    """A pyarrow text array with each grouped number's grouping characters taken out
    (``"1,234.5"`` is ``"1234.5"``; ``"1.234,5"`` is ``"1234,5"`` where ``decimal`` is
    ``,``, whose comma the reader makes a point next); other text as it is.

    >>> import pyarrow as pa
    >>> ungroup_array(pa.array(["1,234.5", "1,5", None, " 1 234 "])).to_pylist()
    ['1234.5', '1,5', None, '1234']
    """
    import pyarrow.compute as pc

    hit = pc.match_substring_regex(arr, rf"^\s*{grouped_number(decimal)}\s*$")
    if not pc.any(hit).as_py():
        return arr
    bare = pc.replace_substring_regex(arr, _CLASS[decimal], "")
    return pc.if_else(pc.fill_null(hit, False), bare, arr)
