"""CSV fields are read without the spaces around them, by every reader of a CSV.

Many tables pad their fields: UCI's Adult census income writes ``39, State-gov, 77516``
(a comma and a space), SAS and R exports pad to a width. Read as written, the header's
names are `` workclass`` (so no connector field ``workclass`` matches), a category is
`` State-gov`` (so a JSON stream's ``State-gov`` is a level the reference never saw, in
every window) and `` ?`` is no missing-value text. A space around a CSV field carries no
meaning in any table a model is trained on, so the reference (pandas), the samples init
reads (pandas) and a CSV stream (pyarrow) all drop it, with the same rule: names and
text values are stripped, and a stripped value that is a missing-value text
(:data:`~driftwatch.csvnulls.CSV_MISSING`) is missing. Two names that are one once
stripped (`` pad`` and ``pad``) are refused: which one a field means could not be told.

>>> import io, pandas as pd
>>> text = "age, workclass, fnlwgt\\n39, State-gov , 77516\\n50, NA, 83311\\n"
>>> frame = read_csv_trimmed(io.StringIO(text), sep=",")
>>> list(frame.columns), frame["workclass"].tolist(), frame["fnlwgt"].tolist()
(['age', 'workclass', 'fnlwgt'], ['State-gov', nan], [77516, 83311])
>>> import pyarrow as pa
>>> trimmed_table(pa.table({" c": [" a ", " NA", None]})).to_pydict()
{'c': ['a', None, None]}
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftwatch.csvnulls import CSV_MISSING
from driftwatch.csvsep import SPACE, read_head, separator_name

if TYPE_CHECKING:  # pandas and pyarrow are imported where used: commands that read no
    import pandas as pd  # CSV do not pay for them
    import pyarrow as pa

_RAGGED = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
#: pandas' names for a column with text in it (``infer_dtype``)
_TEXTS = frozenset({"string", "mixed", "mixed-integer", "mixed-integer-float"})

__all__ = ["csv_names", "header_names", "padded", "read_csv_trimmed", "trimmed_frame",
           "trimmed_table"]


def trimmed_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its column names and text values stripped of surrounding spaces; a
    value that is then a missing-value text is missing."""
    import pandas as pd

    _refuse_names_met_by_stripping(list(frame.columns))
    frame = frame.rename(columns=lambda c: c.strip() if isinstance(c, str) else c)
    for c in frame.columns:
        col = frame[c]
        if pd.api.types.infer_dtype(col, skipna=True) not in _TEXTS:
            continue  # no text in it (numbers, booleans): nothing to strip
        stripped = col.str.strip()  # not a text (a number among texts): NaN, kept below
        text = stripped.where(stripped.notna(), col)
        frame[c] = text.mask(text.isin(CSV_MISSING))
    return frame


def _refuse_names_met_by_stripping(names: Sequence[Any]) -> None:
    """Raise ``ValueError`` where two names are one without their surrounding spaces; the
    readers that call :func:`trimmed_frame` add which file it is."""
    seen: dict[Any, Any] = {}
    for name in names:
        key = name.strip() if isinstance(name, str) else name
        if key in seen:
            raise ValueError(f"columns {seen[key]!r} and {name!r} are one name, {key!r}, "
                             "once the spaces around them are dropped; rename one")
        seen[key] = name


def read_csv_trimmed(source: Any, *, sep: str, **kwargs: Any) -> pd.DataFrame:
    """``pandas.read_csv`` of a CSV, its fields read without surrounding spaces (module
    docstring). Missing-value texts are :data:`~driftwatch.csvnulls.CSV_MISSING` unless
    ``na_values`` is given."""
    import pandas as pd

    kwargs.setdefault("na_values", CSV_MISSING)
    kwargs.setdefault("keep_default_na", False)
    # leading spaces are skipped as the fields are read, so a padded number is a number;
    # not with a space separator, where a run of spaces is empty fields
    try:
        frame = pd.read_csv(source, sep=sep, skipinitialspace=sep != SPACE, **kwargs)
    except pd.errors.ParserError as exc:
        named = kwargs.get("header", "infer") is None and "names" in kwargs
        raise ValueError(_ragged(str(exc), sep, named)) from exc
    return trimmed_frame(frame)


def _ragged(message: str, sep: str, named: bool = False) -> str:
    """pandas' "Error tokenizing data. C error: Expected 2 fields in line 21, saw 3" in
    words about the file (``named``: read by names given, not by a header line).

    >>> _ragged("Error tokenizing data. C error: Expected 2 fields in line 21, saw 3\\n", ";")
    'line 21 has 3 fields where the header has 2, read with semicolon as the separator'
    >>> _ragged("C error: Expected 2 fields in line 4, saw 3", "|", named=True)[:50]
    'line 4 has 3 fields where 2 column names are given'
    """
    found = _RAGGED.search(message)
    if found is None:
        return message.strip().removeprefix("Error tokenizing data. C error: ")
    want, line, saw = found.groups()
    where = f"{want} column names are given" if named else f"the header has {want}"
    return (f"line {line} has {saw} fields where {where}, read with "
            f"{separator_name(sep)} as the separator")


def trimmed_table(table: pa.Table) -> pa.Table:
    """A table of text columns (how a CSV stream is read) with its names and values
    stripped of surrounding spaces (names by :func:`csv_names`); a value that is then a
    missing-value text is null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = pa.array(CSV_MISSING, pa.string())
    cols = []
    for col in table.columns:
        if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
            col = pc.utf8_trim_whitespace(col)
            col = pc.if_else(pc.is_in(col, value_set=missing), pa.scalar(None, col.type), col)
        cols.append(col)
    return pa.table(cols, names=csv_names(table.column_names))


def csv_names(names: Sequence[str]) -> list[str]:
    """A CSV header's names as every reader reads them, as pandas names them (the
    reference and init's samples are read by pandas): without surrounding spaces, a blank
    one ``Unnamed: i`` with ``i`` its position from 0, and a repeated one ``a.1``, ``a.2``.

    >>> csv_names([" id", "", "x ", "  ", "x", "x"])
    ['id', 'Unnamed: 1', 'x', 'Unnamed: 3', 'x.1', 'x.2']
    """
    out = [n.strip() or f"Unnamed: {i}" for i, n in enumerate(names)]
    header = set(out)
    counts: dict[str, int] = {}
    for i, old in enumerate(out):  # pandas' C parser's rule (parsers.pyx, _get_header)
        name, n = old, counts.get(old, 0)
        while n > 0:
            counts[old] = n + 1
            name = f"{old}.{n}"
            n = n + 1 if name in header else counts.get(name, 0)
        out[i] = name
        counts[name] = n + 1
    return out


def header_names(path: str | Path, sep: str) -> list[str]:
    """The names in a CSV's first line as written (spaces kept), gzip or not."""
    text, _ = read_head(path)
    row = next(csv.reader(io.StringIO(text.split("\n", 1)[0].rstrip("\r")), delimiter=sep),
               [])
    return list(row)


def padded(names: Sequence[str]) -> bool:
    """Whether any name has spaces around it."""
    return any(n != n.strip() for n in names)
