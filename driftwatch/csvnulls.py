"""The texts a CSV field may hold for "missing", the same for every reader of a CSV.

A reference table is read with pandas and a CSV stream with pyarrow, whose default lists
differ: pandas reads ``None`` and ``<NA>`` as missing, pyarrow keeps them as text. A
category written ``None`` (Python's ``str(None)``) was then missing in the reference and a
level the reference never saw in the stream: a new category in every window. Both readers
take this list instead of their own default: pandas' (the reference's reading, which users
see in their notebooks).

>>> import io, pandas as pd
>>> pd.read_csv(io.StringIO("x\\nNone\\nn/a\\nNA\\nnone\\n"), na_values=CSV_MISSING,
...             keep_default_na=False)["x"].tolist()
[nan, nan, nan, 'none']
"""

from __future__ import annotations

__all__ = ["CSV_MISSING"]

#: pandas' default ``na_values`` (``pandas.read_csv``), spelled out so that a reference
#: table and a CSV stream agree whatever versions of pandas and pyarrow are installed.
CSV_MISSING: tuple[str, ...] = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
    "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
)
