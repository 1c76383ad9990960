"""Decimal columns read as doubles: a database's ``NUMERIC`` amounts, as Parquet keeps them.

A table exported from SQL (a bank's loan book) writes money and rates as Parquet
``decimal128``; pandas and Arrow hand those back as Python ``Decimal`` objects, which
are neither text nor a float to the rest of driftwatch. Every Parquet read (the
reference, a sample, a stream's row groups) turns them into doubles first, so a decimal
column is a numeric feature everywhere, read the same way in the reference and the stream.

>>> from decimal import Decimal
>>> t = pa.table({"amount": pa.array([Decimal("12.50"), None], pa.decimal128(9, 2)),
...               "loan": pa.array([{"rate": Decimal("0.071")}], pa.struct([
...                   ("rate", pa.decimal128(5, 3))])).take([0, 0]), "id": ["a", "b"]})
>>> plain = decimals_as_doubles(t)
>>> plain.column("amount").to_pylist(), plain.column("loan").to_pylist()[0], plain["id"].type
([12.5, None], {'rate': 0.071}, DataType(string))
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["decimals_as_doubles"]


def _has_decimal(t: pa.DataType) -> bool:
    if pa.types.is_decimal(t):
        return True
    return pa.types.is_struct(t) and any(_has_decimal(t.field(i).type)
                                         for i in range(t.num_fields))


def _plain(a: pa.Array) -> pa.Array:
    t = a.type
    if pa.types.is_decimal(t):  # through its text: the correctly rounded double
        return pc.cast(pc.cast(a, pa.string()), pa.float64())
    if not _has_decimal(t):
        return a
    children = [_plain(a.field(i)) for i in range(t.num_fields)]
    fields = [t.field(i).with_type(c.type) for i, c in enumerate(children)]
    return pa.StructArray.from_arrays(children, fields=fields,
                                      mask=a.is_null() if a.null_count else None)


def decimals_as_doubles(table: pa.Table) -> pa.Table:
    """``table`` with every decimal column (top level or inside a struct) as ``float64``,
    the double nearest each value; the same table when it has none."""
    for i, f in enumerate(table.schema):
        if _has_decimal(f.type):
            chunks = table.column(i).chunks or [pa.array([], f.type)]
            col = pa.chunked_array([_plain(c) for c in chunks])
            table = table.set_column(i, f.with_type(col.type), col)
    return table
