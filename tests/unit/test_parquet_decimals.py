"""Parquet decimal columns (a SQL export's NUMERIC amounts) are numbers: in the reference,
in ``init``'s sample and in the replayed stream, each the double nearest its value."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.arrowdecimal import decimals_as_doubles
from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli


def _book(path: Path, n: int, start: int, *, label: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    cols = {
        "loan_id": pa.array([f"L{i}" for i in range(start, start + n)], pa.large_string()),
        "booked_on": pa.array((1_704_067_200 + 300 * np.arange(n)) * 10**9,
                              pa.timestamp("ns", tz="Europe/Berlin")),
        "amount": pa.array([Decimal(f"{x:.2f}") for x in rng.uniform(100, 50000, n)],
                           pa.decimal128(12, 2)),
        "rate": pa.array([Decimal(f"{x:.4f}") for x in rng.uniform(0.01, 0.2, n)],
                         pa.decimal128(6, 4)),
        "region": pa.array(rng.choice(["N", "S", "E", "W"], n)).dictionary_encode(),
        "pd_score": pa.array(rng.uniform(0, 0.4, n)),
    }
    if label:
        cols["defaulted"] = pa.array((rng.random(n) < 0.1).astype(np.int64))
    pq.write_table(pa.table(cols), path)


def test_decimal_columns_are_numeric_features_and_replay_reads_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _book(tmp_path / "ref.parquet", 3000, 0, label=True, seed=1)
    _book(tmp_path / "live.parquet", 4000, 10**6, label=True, seed=2)
    live = pq.read_table(tmp_path / "live.parquet")
    pq.write_table(live.drop(["defaulted"]), tmp_path / "live.parquet")
    pq.write_table(live.select(["loan_id", "defaulted"]), tmp_path / "out.parquet")
    code, out, err = run_cli(
        ["init", "--reference", str(tmp_path / "ref.parquet"), "--sample",
         str(tmp_path / "live.parquet"), "--outcomes", str(tmp_path / "out.parquet"),
         "--model", "m", "--exposure-field", "none", "--connector-out",
         str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    features = yaml.safe_load((tmp_path / "c.yaml").read_text())[
        "source"]["streams"]["predictions"]["fields"]["features"]
    assert features["amount"]["type"] == "numeric", out
    assert features["rate"]["type"] == "numeric", out
    code, out, err = run_cli(
        ["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.parquet"),
         str(tmp_path / "out.parquet"), "--out", str(tmp_path / "run")], capsys)
    assert code == 0, err
    assert "4000 events, 4000 outcomes, 0 bad records" in out, out


def test_the_reference_reads_decimals_as_the_nearest_doubles(tmp_path: Path) -> None:
    _book(tmp_path / "ref.pq", 500, 0, label=True, seed=3)
    ref = read_reference_table(tmp_path / "ref.pq")
    want = [float(v) for v in pq.read_table(tmp_path / "ref.pq")["rate"].to_pylist()]
    assert ref["rate"].dtype == np.float64 and ref["rate"].tolist() == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), st.decimals(allow_nan=False, allow_infinity=False,
                                                  places=3, min_value=-10**8,
                                                  max_value=10**8)), max_size=30),
       st.booleans())
def test_any_decimal_becomes_its_nearest_double(values: list[Decimal | None],
                                                nested: bool) -> None:
    arr = pa.array(values, pa.decimal128(12, 3))
    table = pa.table({"v": pa.StructArray.from_arrays([arr], ["x"]) if nested else arr})
    got = decimals_as_doubles(table).column("v").to_pylist()
    if nested:
        got = [g["x"] for g in got]
    assert got == [None if v is None else float(v) for v in values]
