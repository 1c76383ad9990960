"""Reading a Parquet file one row group at a time.

pyarrow cannot hand back a batch, or a whole table, that spans row groups of a
dictionary column inside a struct or a list (``Nested data conversions not implemented
for chunked array outputs``): the shape pandas and Spark write for a categorical field of
a nested record (``txn: {type: CASH_OUT, amount: ...}``) once a file has more than one row
group. Each read here stays within one row group and joins the pieces after.

>>> import tempfile, pyarrow as pa, pyarrow.parquet as pq
>>> kind = pa.array(["CASH_OUT", "PAYMENT"] * 3).dictionary_encode()
>>> txn = pa.StructArray.from_arrays([kind, pa.array([1.0] * 6)], names=["type", "amount"])
>>> path = tempfile.mkdtemp() + "/t.parquet"
>>> pq.write_table(pa.table({"txn": txn}), path, row_group_size=2)
>>> read_parquet(path, limit=5).column("txn").to_pylist()[4]
{'type': 'CASH_OUT', 'amount': 1.0}
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["read_parquet", "row_group_batches"]


def row_group_batches(pf: pq.ParquetFile, groups: Sequence[int], batch_size: int,
                      columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """The record batches of row groups ``groups`` of ``pf``, none across two groups."""
    for g in groups:
        yield from pf.iter_batches(batch_size=batch_size, row_groups=[g], columns=columns)


def read_parquet(path: str | Path, limit: int | None = None) -> pa.Table:
    """The file's rows (its first ``limit`` when given, reading no further) as one table."""
    pf = pq.ParquetFile(path)
    if limit is None:
        parts = [pf.read_row_group(g) for g in range(pf.num_row_groups)]
    else:
        parts, rows = [], 0
        for batch in row_group_batches(pf, range(pf.num_row_groups), max(limit, 1)):
            if rows >= limit:
                break
            parts.append(pa.Table.from_batches([batch]))
            rows += batch.num_rows
    if not parts:
        return pf.schema_arrow.empty_table()
    table = pa.concat_tables(parts)
    return table if limit is None else table.slice(0, limit)
