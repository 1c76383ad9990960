"""Which character separates a CSV file's fields: the comma, or one found in its header.

Many real tables are not comma-separated: spreadsheets in much of Europe write semicolons
(UCI's Bank Marketing ``bank-full.csv`` among them), dumps write tabs or pipes. Read with
commas such a file is one column whose name is the whole header, and every later error
would hide the cause. So each reader looks at the header: when it is one column with
commas and splits on exactly one of ``;``, tab, ``|`` (quotes respected), or on none of
them but on single spaces (UCI's ``german.data`` with a header line added), the file is
read with that separator and the caller says so in one line; columns aligned with runs of
spaces are refused, as their empty fields cannot be told. A header that splits on several
of them is refused with the reason (a connector's ``csv: {delimiter:}`` settles it). A
header that splits on commas and on one other separator (a tab-separated file with a column
named ``a,b``) is read with the other one when only it gives every first row as many fields
as the header. The rule looks at the file's own first bytes only, so it is the same on
every read.

>>> header_separator('"age";"job";"y"'), header_separator("id,ts"), header_separator("a")
(';', ',', ',')
>>> header_separator('"a;b"|c'), separator_name("\\t"), header_separator("status duration")
('|', 'tab', ' ')
>>> try:
...     header_separator("id;ts|x", "live.csv")
... except SourceError as exc:
...     print(str(exc)[:60])
live.csv: its header splits on semicolon and on pipe, not on
"""

from __future__ import annotations

import csv
import gzip
import io
import zlib
from pathlib import Path

from driftwatch.errors import SourceError

__all__ = ["SEPARATORS", "SPACE", "file_separator", "header_separator", "read_head",
           "rows_separator", "separator_name", "separator_note"]

#: Each separator a CSV may use and its name; the comma is the default.
SEPARATORS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe"}
_HEAD = 1 << 16
_ROWS = 50  # the first rows whose field counts settle a header with commas in a name
_FIX = "save it with commas, or as Parquet"


#: The last resort: a header with none of the others that splits on single spaces (UCI's
#: ``german.data`` and ``australian.dat`` with a header line added)
SPACE = " "


def separator_name(sep: str) -> str:
    """``semicolon`` for ``;``; a separator without a name is shown quoted."""
    return "space" if sep == SPACE else SEPARATORS.get(sep, repr(sep))


def _columns(header: str, sep: str) -> int:
    try:
        return len(next(csv.reader([header], delimiter=sep), []))
    except csv.Error:  # not CSV text (a binary file): one column, read as it is
        return 1


def header_separator(header: str, what: str = "the file", fix: str = _FIX) -> str:
    """The separator of a CSV whose first line is ``header``: ``,`` unless the header is
    one column with commas and splits on exactly one other separator, or on none of them
    but on single spaces (then `` ``; runs of spaces are refused). Raises
    :class:`~driftwatch.errors.SourceError` naming ``what`` (and ``fix``, what to do) when
    it splits on several."""
    header = header.rstrip("\r\n")
    if _columns(header, ",") != 1:
        return ","
    found = [s for s in SEPARATORS if s != "," and _columns(header, s) > 1]
    if not found and _columns(header, SPACE) > 1:
        if "  " in header.strip() or header != header.strip():
            raise SourceError(f"{what}: its header splits on runs of spaces, not on commas "
                              f"({header[:60]!r}): columns aligned with spaces cannot be "
                              f"told apart from empty fields; {fix}")
        return SPACE
    if len(found) > 1:
        names = " and on ".join(separator_name(s) for s in found)
        head = header if len(header) <= 60 else header[:60] + "..."
        raise SourceError(f"{what}: its header splits on {names}, not on commas "
                          f"({head!r}), so its separator cannot be told; {fix}")
    return found[0] if found else ","


def read_head(path: str | Path, size: int = _HEAD) -> tuple[str, bool]:
    """The text of a file's first ``size`` bytes (gzip or not, decompressed) and whether
    that is the whole file: what the CSV rules look at, so every read agrees."""
    p = Path(path)
    try:
        with open(p, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            f = gzip.GzipFile(fileobj=raw) if gz else raw
            try:
                data = f.read(size + 1)
            except (OSError, EOFError, zlib.error):  # magic bytes, but not gzip
                raw.seek(0)
                data = raw.read(size + 1)
    except OSError as exc:
        raise SourceError(f"cannot read {p}: {exc}") from exc
    text = data[:size].decode("utf-8", "replace").lstrip("\ufeff")
    return text, len(data) <= size


def _fits(text: str, sep: str) -> bool:
    """Whether the first records of ``text`` (whole lines) all have as many fields as its
    header, more than one, under ``sep``."""
    try:
        counts = [len(r) for r, _ in zip(csv.reader(io.StringIO(text), delimiter=sep),
                                         range(_ROWS), strict=False) if r]
    except csv.Error:
        return False
    return len(counts) > 1 and counts[0] > 1 and len(set(counts)) == 1


def rows_separator(text: str, whole: bool) -> str | None:
    """The one separator other than the comma under which the first rows of ``text`` have
    as many fields as the header, where they do not under commas; else None.

    >>> rows_separator("a,b\\tc\\n1\\t2\\nx,y\\t3\\n", True)
    '\\t'
    >>> rows_separator("a,b\\tc\\n1,2\\tz\\n", True) is None  # commas fit: the comma stays
    True
    """
    if not whole:  # the last line may be cut off
        text = text[:text.rfind("\n") + 1]
    if _fits(text, ","):
        return None
    found = [s for s in SEPARATORS if s != "," and _fits(text, s)]
    return found[0] if len(found) == 1 else None


def file_separator(path: str | Path, what: str | None = None, fix: str = _FIX) -> str:
    """:func:`header_separator` of a file's first line (gzip or not), or, where that is
    the comma but the first rows say otherwise, :func:`rows_separator`."""
    text, whole = read_head(path)
    header = text.split("\n", 1)[0]
    sep = header_separator(header, what or str(path), fix)
    if sep == "," and _columns(header.rstrip("\r"), ",") > 1:
        sep = rows_separator(text, whole) or sep
    return sep


def separator_note(what: str, sep: str, decimal: str = ".", *, header: bool = True) -> str:
    """The line that says a file is read with a separator found in its header (its first
    line, where ``header`` is false: a file without a header line, whose names are given)
    and with the decimal comma its first rows show, when ``decimal`` is ``,``.

    >>> separator_note("ref.txt", "|", header=False)
    "ref.txt is pipe-separated (found in its first line): read with '|'"
    """
    if decimal == ",":
        return (f"{what} is {separator_name(sep)}-separated with decimal commas (found in "
                f"its first rows): read with {sep!r} and ','")
    where = "its header" if header else "its first line"
    return f"{what} is {separator_name(sep)}-separated (found in {where}): read with {sep!r}"
