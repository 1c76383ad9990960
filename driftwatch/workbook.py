"""Spreadsheet and Arrow files given where a table is read: refused with the fix, by
their first bytes, before a CSV reader fails on them with a codec error (or, reading a
stream, with a parser's traceback).

An ``.xlsx`` workbook is a zip archive (``PK\\x03\\x04``); an ``.xls`` one, such as UCI's
"default of credit card clients", is an OLE2 compound file (``D0 CF 11 E0``). pandas'
``to_feather`` writes an Arrow IPC file (``ARROW1`` and two zero bytes: a CSV header may
start ``ARROW1,``), and an Arrow stream starts with the continuation marker ``FF FF FF FF``.
A gzipped one is told by its first bytes once decompressed (:func:`file_kind`), as a
gzipped CSV is read.

>>> workbook_kind(b"PK\\x03\\x04rest"), workbook_kind(bytes.fromhex("d0cf11e0a1b11ae1"))
('a zip archive (an Excel .xlsx workbook?)', 'an Excel .xls workbook')
>>> workbook_kind(b"ARROW1\\x00\\x00")
'an Arrow IPC (Feather) file'
>>> workbook_kind(b"id,ts\\n") is None
True
"""

from __future__ import annotations

import contextlib
import gzip
import zlib
from pathlib import Path

from driftwatch.errors import SourceError

__all__ = ["SAVE_AS", "file_head", "file_kind", "json_head", "refuse_as_text", "workbook_kind"]

#: What to do with one.
SAVE_AS = "save it as CSV or Parquet (one header line with the column names)"

_KINDS = ((b"PK\x03\x04", "a zip archive (an Excel .xlsx workbook?)"),
          (bytes.fromhex("d0cf11e0a1b11ae1"), "an Excel .xls workbook"),
          (b"ARROW1\x00\x00", "an Arrow IPC (Feather) file"),
          (b"\xff\xff\xff\xff", "an Arrow IPC stream"))


def workbook_kind(head: bytes) -> str | None:
    """What a file starting with ``head`` is, when it is a workbook (or a zip) or an Arrow
    file; else None."""
    for magic, kind in _KINDS:
        if head.startswith(magic):
            return kind
    return None


def file_kind(path: str | Path) -> str | None:
    """:func:`workbook_kind` of a file's first bytes, decompressed when it is gzip (a
    ``.feather.gz`` is an Arrow file all the same); ``OSError`` when it cannot be read."""
    return workbook_kind(file_head(path))


def file_head(path: str | Path, n: int = 8) -> bytes:
    """A file's first ``n`` bytes, decompressed when it is gzip; ``OSError`` when it
    cannot be read."""
    with open(path, "rb") as raw:
        head = raw.read(n)
        if head.startswith(b"\x1f\x8b"):
            raw.seek(0)
            # gzip's magic bytes but no gzip: the raw bytes are what there is to tell
            with contextlib.suppress(OSError, EOFError, zlib.error):
                head = gzip.GzipFile(fileobj=raw).read(n)
    return head


def json_head(head: bytes) -> bool:
    """True when a file starting with ``head`` holds JSON objects (JSON lines, or an array
    of objects), which no CSV header starts with (a SQL Server export's ``[id]`` does not
    count).

    >>> json_head(b'{"id": 1}'), json_head(b"\\xef\\xbb\\xbf [ {"), json_head(b"[id],[ts]")
    (True, True, False)
    """
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"{") or (text.startswith(b"[")
                                     and text[1:].lstrip(b" \t\r\n").startswith(b"{"))


def refuse_as_text(path: Path, fmt: str) -> None:
    """Refuse a workbook, an Arrow file or a Parquet file read as CSV or JSON lines (a
    ``.csv`` name on a Feather file, a connector's ``format: csv`` on Parquet), with the
    fix, before the text parser fails on its bytes with a traceback. Other formats pass.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "scored.csv"
    >>> _ = p.write_bytes(b"ARROW1\\x00\\x00...")
    >>> try:
    ...     refuse_as_text(p, "csv")
    ... except SourceError as exc:
    ...     print(str(exc).replace(str(p.parent) + "/", "")[:80])
    scored.csv is an Arrow IPC (Feather) file, not CSV as its name or the connector'
    """
    if fmt not in ("csv", "jsonl"):
        return
    try:
        kind = file_kind(path)
        if kind is None:
            with open(path, "rb") as raw:
                kind = "a Parquet file" if raw.read(4) == b"PAR1" else None
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc}") from exc
    if kind is None:
        return
    what = {"csv": "CSV", "jsonl": "JSON lines"}[fmt]
    fix = ("name it .parquet (or leave the connector's format to the file's name)"
           if kind == "a Parquet file" else SAVE_AS)
    raise SourceError(f"{path} is {kind}, not {what} as its name or the connector's format "
                      f"says: {fix}")
