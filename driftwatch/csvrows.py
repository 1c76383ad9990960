"""The first row of a CSV whose count of fields is not its header's: a ragged row.

pandas pads a row with too few fields with missing values and reads on, so one ragged row
in a sample shifts its values into other columns (a time column that reads ``2188``, an
amount) and ``init`` then fails far from the cause, on a role whose values no longer
fit; in a reference table it shifts them silently into other features. A CSV stream's
reader counts such a row as a bad record (``invalid_csv``); a sample, and a whole
reference (:func:`any_ragged` looks past its first :data:`RAGGED_ROWS` rows), are refused
with the row's ``file:line`` instead (:func:`refuse_ragged`), before their values are read.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "s.csv").write_text('id,ts,note\\n1,5,"a\\nb"\\n\\n2,7\\n3,9,c\\n')
>>> first_ragged(d / "s.csv", ",", limit=10)
RaggedRow(line=5, fields=2, want=3, text='2,7')
>>> first_ragged(d / "s.csv", ",", limit=1) is None
True
"""

from __future__ import annotations

import csv
import gzip
import io
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from driftwatch.csvsep import separator_name
from driftwatch.errors import SourceError

__all__ = ["RAGGED_ROWS", "RaggedRow", "any_ragged", "first_ragged", "refuse_ragged"]

#: The most characters of a ragged row an error shows.
_SHOWN = 120
#: The records of a reference table looked at (as many as ``init`` samples by default):
#: reading all of them again would about double the time a large reference takes to read
RAGGED_ROWS = 2000


@dataclass(frozen=True)
class RaggedRow:
    """A row of ``fields`` fields where ``want`` were expected, starting at ``line``
    (1-based, as an editor counts lines), with its text as read."""

    line: int
    fields: int
    want: int
    text: str

    def shown(self) -> str:
        """The row's text for a message: its first :data:`_SHOWN` characters."""
        return self.text if len(self.text) <= _SHOWN else self.text[:_SHOWN] + "..."


def first_ragged(path: str | Path, sep: str, limit: int,
                 names: Sequence[str] | None = None, skip: int = 0) -> RaggedRow | None:
    """The first of the CSV ``path``'s first ``limit`` records (read with ``sep``, gzip or
    not) whose count of fields differs from the header's, or from ``names`` for a file
    without a header (``skip``: the lines before its records); blank lines are no records,
    as pandas reads them. None when every one of them fits."""
    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
        raw.seek(0)
        binary = gzip.GzipFile(fileobj=raw) if gz else raw
        text = io.TextIOWrapper(binary, encoding="utf-8-sig", errors="replace", newline="")
        reader = csv.reader(text, delimiter=sep)
        want = len(names) if names is not None else None
        end, seen = 0, 0
        for _ in range(skip):
            if next(_rows(reader), None) is None:
                return None
            end = reader.line_num
        for cells in _rows(reader):
            start, end = end + 1, reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue  # a blank line
            if want is None:
                want = len(cells)
                continue
            if len(cells) != want:
                return RaggedRow(start, len(cells), want, sep.join(cells))
            seen += 1
            if seen >= limit:
                return None
    return None


def any_ragged(path: str | Path, sep: str, names: Sequence[str] | None = None,
               skip: int = 0) -> bool:
    """Whether any record of the whole CSV ``path`` has another count of fields than the
    header's (or ``names``'), found by Arrow's multi-threaded parser at a small part of
    what the csv module would take, and without converting a value. Its reading of quotes,
    blank lines and line ends is the csv module's, but :func:`first_ragged` has the last
    word on where the row is. A file Arrow cannot parse for another reason (a NUL byte,
    bad UTF-8) is no ragged row: what is wrong there is pandas' to say.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = p.write_text("a,b\\n" + "1,2\\n" * 5000 + "3\\n")
    >>> any_ragged(p, ","), first_ragged(p, ",", limit=RAGGED_ROWS) is None
    (True, True)
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    found: list[bool] = []

    def bad(_row: object) -> str:
        found.append(True)
        return "skip"

    with open(path, "rb") as raw:
        gz = raw.read(2) == b"\x1f\x8b"
    read = pacsv.ReadOptions(skip_rows=skip, column_names=list(names) if names else None,
                             block_size=1 << 24)
    parse = pacsv.ParseOptions(delimiter=sep, newlines_in_values=True,
                               invalid_row_handler=bad)
    # no column converted: a name no file has, given as a column of nulls
    convert = pacsv.ConvertOptions(include_columns=["\x00"], include_missing_columns=True)
    try:
        with pa.input_stream(str(path), compression="gzip" if gz else None) as stream:
            reader = pacsv.open_csv(stream, read_options=read, parse_options=parse,
                                    convert_options=convert)
            for _ in reader:
                if found:
                    break
    except (pa.ArrowException, OSError, ValueError):
        return False
    return bool(found)


def refuse_ragged(path: str | Path, sep: str, what: str, todo: str, *,
                  limit: int | None = RAGGED_ROWS, names: Sequence[str] | None = None,
                  skip: int = 0, given: str | None = None) -> None:
    """Raise :class:`~driftwatch.errors.SourceError` naming ``what`` (the file, as its
    reader names it) at the line of :func:`first_ragged`'s row, whose values pandas would
    read shifted into other columns; ``given``: where ``names`` were given; ``todo``: what
    the message ends with.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ref.csv"
    >>> _ = p.write_text("a|b|c\\n1|2|3\\n4|5\\n")
    >>> try:
    ...     refuse_ragged(p, "|", "ref.csv", ": fix it")
    ... except SourceError as exc:
    ...     print(str(exc)[:75])
    ref.csv:3: a ragged row: 2 fields where the header has 3, read with pipe as
    """
    row = first_ragged(path, sep, RAGGED_ROWS if limit is None else limit, names, skip)
    if row is None and limit is None and any_ragged(path, sep, names, skip):
        row = first_ragged(path, sep, sys.maxsize, names, skip)  # where it is, exactly
    if row is None:
        return
    want = (f"the header has {row.want}" if names is None else
            f"{row.want} column names are given" + (f" ({given})" if given else ""))
    raise SourceError(
        f"{what}:{row.line}: a ragged row: {row.fields} field{'' if row.fields == 1 else 's'}"
        f" where {want}, read with {separator_name(sep)} as the separator ({row.shown()!r});"
        f" its values would read shifted into other columns{todo}")


def _rows(reader: Iterator[list[str]]) -> Iterator[list[str]]:
    """``reader``'s rows up to a text the csv module cannot read (a NUL byte): what is
    wrong there is pandas' to say, as it reads the file."""
    try:
        yield from reader
    except csv.Error:
        return
