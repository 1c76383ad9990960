"""Column names given for a CSV written without a header line.

Loan-level monthly files (Fannie Mae, Freddie Mac) and UCI's credit tables have no header:
the names are in a layout document. A connector stream says them (``csv: {names: [...]}``),
a policy says its reference table's (``reference: {csv: {names: [...]}}``), and
``driftwatch init`` takes both (``--names``, ``--reference-names``), so each file is read
as it is. Before reading, the first line is checked against the names:

- it equals them (spaces around each cell aside): it is a header after all, and is
  skipped rather than read as a row of data;
- most of the first lines hold another count of fields than names given: refused,
  naming both counts and the first such ``file:line`` (one broken line is the reader's
  bad record, counted as in a file with a header);
- it holds as many fields, half or more of them names given but not in that order (a
  header of other columns, or the right names in another order): refused, since reading
  it as data would shift every column.

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "drop.csv")
>>> _ = open(p, "w").write("F19Q1|012020|3.5\\nF19Q2|022020|4.0\\n")
>>> named_header(p, "|", ("loan_id", "period", "rate"), p)
False
>>> _ = open(p, "w").write("loan_id|period|rate\\nF19Q1|012020|3.5\\n")
>>> named_header(p, "|", ("loan_id", "period", "rate"), p)
True
>>> try:
...     named_header(p, "|", ("loan_id", "period"), "drop.csv")
... except SourceError as exc:
...     print(str(exc)[:55])
drop.csv:1: its line holds 3 fields, but 2 column names
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from driftwatch.csvsep import read_head
from driftwatch.errors import SourceError

__all__ = ["REFERENCE_NAMES", "STREAM_NAMES", "head_rows", "named_header"]

#: Where a stream's names are given, and a reference table's: said in every refusal.
STREAM_NAMES = "csv: {names: [...]}"
REFERENCE_NAMES = "the policy's reference: {csv: {names: [...]}}"

#: The lines looked at to count fields.
_ROWS = 20


def head_rows(path: str | Path, sep: str) -> list[tuple[int, list[str]]]:
    """The first lines of the CSV ``path`` read with ``sep`` (gzip or not), as (line
    number, cells), blank lines left out; none for a file that is no CSV text."""
    text, whole = read_head(path)
    lines = text.split("\n")[:_ROWS + 1]
    if not whole and len(lines) > 1:
        lines = lines[:-1]  # cut at the end of the head
    out = []
    for k, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append((k, next(csv.reader([line.rstrip("\r")], delimiter=sep), [])))
        except csv.Error:
            return []
    return out


def named_header(path: str | Path, sep: str, names: Sequence[str], what: str,
                 given: str = STREAM_NAMES) -> bool:
    """Whether the first line of the CSV ``path`` is a header equal to ``names`` (to be
    skipped); raises :class:`~driftwatch.errors.SourceError` (``what`` names the file,
    ``given`` where the names were given) when its count of fields is not the count of
    names, or when it is a header of other names or order."""
    rows = head_rows(path, sep)
    if not rows:
        return False
    cells = [c.strip() for c in rows[0][1]]
    if cells == list(names):
        return True
    # most lines hold another count: the names are wrong, not a line (a bad line is the
    # reader's bad record, counted, as in a file with a header)
    counts = Counter(len(r) for _, r in rows)
    top = max(counts.values())
    if counts[len(names)] < top:
        line, row = next((k, r) for k, r in rows if counts[len(r)] == top)
        raise SourceError(f"{what}:{line}: its line holds {len(row)} fields, but "
                          f"{len(names)} column names are given ({given}); "
                          "give one name per field")
    if len(cells) != len(names):
        return False
    known = set(names)
    if 2 * sum(c in known for c in cells) >= len(cells):
        shown = sep.join(cells)
        shown = shown if len(shown) <= 60 else shown[:60] + "..."
        raise SourceError(f"{what}:1: its first line is a header ({shown!r}) that is not "
                          f"the column names given ({given}); remove the names "
                          "to read it, or make them the same in the same order")
    return False
