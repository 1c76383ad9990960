"""A CSV written with another separator than the comma, said plainly.

driftwatch reads comma-separated CSV. A semicolon-separated file (what spreadsheets in
much of Europe write, often with decimal commas), a tab- or pipe-separated one reads as
one column whose name is the whole header: every later error (no id field, reference
columns not found, every record missing its fields) would hide the cause. Each reader
checks the header it found and refuses such a file with the reason.

>>> other_separator(["id;ts;income"]), other_separator(["id", "ts"]), other_separator(["a"])
('semicolon', None, None)
>>> try:
...     refuse_other_separator(["id|ts"], "live.csv")
... except SourceError as exc:
...     print(str(exc)[:50])
live.csv looks pipe-separated (its header reads as
"""

from __future__ import annotations

from collections.abc import Sequence

from driftwatch.errors import SourceError

__all__ = ["other_separator", "refuse_other_separator"]

_SEPARATORS = ((";", "semicolon"), ("\t", "tab"), ("|", "pipe"))


def other_separator(columns: Sequence[object]) -> str | None:
    """The separator a header read with commas holds instead (None when it looks fine)."""
    if len(columns) != 1:
        return None
    name = str(columns[0])
    for sep, word in _SEPARATORS:
        if sep in name:
            return word
    return None


def refuse_other_separator(columns: Sequence[object], what: str) -> None:
    """Raise :class:`~driftwatch.errors.SourceError` naming ``what`` when its header is one
    column holding another separator."""
    word = other_separator(columns)
    if word is not None:
        head = str(columns[0])
        head = head if len(head) <= 60 else head[:60] + "..."
        raise SourceError(f"{what} looks {word}-separated (its header reads as one column, "
                          f"{head!r}); driftwatch reads comma-separated CSV: save it with "
                          "commas (and decimal points), or as Parquet")
