"""Where a CSV's empty lines are (:class:`driftwatch.csvblank.BlankLines`): found in the
bytes a reader takes through :class:`~driftwatch.csvblank.BlankTee`, read by read, a line
ending split across two reads included, and pyarrow's row numbers (empty lines skipped)
turned back into the file's line numbers."""

from __future__ import annotations

import gzip

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.csvblank import BlankTee

_LINES = st.lists(st.sampled_from(["", "\r", "a", "1,2", " ", "x\r"]), min_size=1,
                  max_size=40)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=_LINES, block=st.integers(1, 7), zipped=st.booleans(), end=st.booleans())
def test_empty_lines_are_found_across_blocks_and_mapped_back(
        tmp_path_factory: pytest.TempPathFactory, lines: list[str], block: int, zipped: bool,
        end: bool) -> None:
    data = ("\n".join(lines) + ("\n" if end else "")).encode()
    path = tmp_path_factory.mktemp("b") / ("f.csv.gz" if zipped else "f.csv")
    path.write_bytes(gzip.compress(data) if zipped else data)
    # read through the tee in reads of `block` bytes, as a CSV reader would (gzip too)
    tee = BlankTee(pa.input_stream(str(path), compression="detect"))
    while tee.read(block):
        pass
    blanks = tee.blanks
    # a line is empty when it holds nothing but a carriage return; the last line has no
    # line end after it unless `end`, and an empty last piece is then no line at all
    written = lines if end or lines[-1] else lines[:-1]
    empty = [i for i, t in enumerate(written, 1) if t in ("", "\r") and i > 1
             and (i < len(lines) or end)]
    assert blanks.lines.tolist() == empty
    kept = [i for i in range(1, len(written) + 1) if i not in empty]
    counted = np.arange(1, len(kept) + 1)  # as pyarrow numbers the lines it keeps
    assert blanks.physical(counted).tolist() == kept
    assert [blanks.counted(i) for i in kept] == counted.tolist()
