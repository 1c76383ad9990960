"""An integer code column holding a missing value is written by pandas as floats (``3.0``);
in a European export with decimal commas that is ``3,0``. The reference reads it as 3.0,
level ``3``; the stream's categorical feature must read ``3,0`` as that level too, not as a
new category (HMEQ's ``DELINQ``, ``DEROG``, ``NINQ`` in a semicolon export: every row of a
stable stream was a new category, PSI 15 and a data-quality fault)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.file import FileSource
from driftwatch.schema import FeatureSchema, level_text
from driftwatch.windows.profile import read_reference_table

from ._csvconn import csv_connector

CODES = st.lists(st.one_of(st.none(), st.integers(-3, 12)), min_size=2, max_size=40)


def _write(path: Path, codes: list[int | None], *, decimal: str) -> None:
    n = len(codes)
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(n)],
                          "ts": 1_700_000_000 + np.arange(n),
                          "x": np.linspace(0.25, 9.75, n),
                          "cat": pd.array(codes, dtype="float64"),
                          "score": np.full(n, 0.25)})
    frame.to_csv(path, sep=";", decimal=decimal, index=False)


def _stream_codes(tmp: Path, name: str, schema: FeatureSchema) -> list[int]:
    conn = csv_connector(tmp, name, fields=(
        "event_id: id", "event_time: {path: ts, unit: s}",
        "features: {x: {path: x, type: numeric}, cat: {path: cat, type: categorical}}",
        "score: score"))
    src = FileSource(conn, schema, batch_size=16, read_ahead=False)
    codes = []
    while (polled := src.poll()) is not None:
        assert polled.bad == []
        codes += [c for b in polled.batches for c in b.categorical[:, 0].tolist()]
    src.close()
    return codes


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(codes=CODES, decimal=st.sampled_from([",", "."]))
def test_float_written_codes_read_as_the_references_levels(
    tmp_path_factory, codes: list[int | None], decimal: str,  # type: ignore[no-untyped-def]
) -> None:
    tmp = tmp_path_factory.mktemp("codes")
    _write(tmp / "ref.csv", codes, decimal=decimal)
    _write(tmp / "live.csv", codes, decimal=decimal)
    ref = read_reference_table(tmp / "ref.csv")
    levels = tuple(sorted({level_text(v) for v in ref["cat"].dropna()}))
    schema = FeatureSchema(numeric=("x",), categorical=("cat",), levels=(levels,))
    expected = [-1 if c is None else levels.index(level_text(float(c))) for c in codes]
    assert _stream_codes(tmp, "live.csv", schema) == expected
