"""Parquet whose nested records hold a dictionary-encoded field (PaySim's transaction
type inside a ``txn`` struct, as pandas or Spark write a categorical), in a file of
several row groups: pyarrow refused to read a batch across two groups, so ``init``
ended in a traceback and ``replay`` stopped at the file's first line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from driftwatch.windows.profile import read_reference_table

from ._cli import run_cli as _cli

TYPES = ["CASH_OUT", "PAYMENT", "CASH_IN", "TRANSFER"]


def _paysim(tmp: Path, n: int = 900) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    kind = rng.choice(TYPES, n, p=[.4, .3, .2, .1])
    amount = rng.lognormal(10, 1, n).round(2)
    score = rng.uniform(0, 1, n).round(4)
    pd.DataFrame({"type": kind, "amount": amount, "score": score}).to_csv(
        tmp / "ref.csv", index=False)
    txn = pa.StructArray.from_arrays([pa.array(kind).dictionary_encode(), pa.array(amount)],
                                     names=["type", "amount"])
    table = pa.table({"txn_id": [f"t{i}" for i in range(n)],
                      "step": pa.array(3600 * np.arange(n) + 1_700_000_000),
                      "txn": txn, "score": score})
    pq.write_table(table, tmp / "live.parquet", row_group_size=250)
    return pd.DataFrame({"type": kind, "amount": amount})


def test_a_nested_dictionary_field_reads_across_row_groups(tmp_path, capsys):
    data = _paysim(tmp_path)
    assert pq.ParquetFile(tmp_path / "live.parquet").num_row_groups == 4
    code, out, err = _cli(["init", "--reference", str(tmp_path / "ref.csv"), "--sample",
                           str(tmp_path / "live.parquet"), "--model", "m", "--connector-out",
                           str(tmp_path / "c.yaml"), "--policy-out", str(tmp_path / "p.yaml"),
                           "--time-field", "step"], capsys)
    assert code == 0, err
    assert "type: categorical" in out and "at txn.type" in out
    code, _, err = _cli(["replay", "--connector", str(tmp_path / "c.yaml"), "--policy",
                         str(tmp_path / "p.yaml"), "--input", str(tmp_path / "live.parquet"),
                         "--out", str(tmp_path / "run"), "--batch-size", "400", "--no-report",
                         "-q"], capsys)
    assert code == 0, err
    records = [json.loads(x) for x in (tmp_path / "run" / "timeline.jsonl").read_text()
               .splitlines()]
    assert sum(r["n_events"] for r in records) == 900
    levels: dict[str, int] = {}
    for r in records:
        for k, v in r["features"]["type"]["levels"].items():
            levels[k] = levels.get(k, 0) + v
    assert levels == data["type"].value_counts().to_dict()


@pytest.mark.parametrize("groups", [1, 4])
def test_a_reference_with_a_nested_dictionary_field_reads_whole(tmp_path, groups):
    kind = pa.array(TYPES * 50).dictionary_encode()
    txn = pa.StructArray.from_arrays([kind, pa.array(np.arange(200.0))],
                                     names=["type", "amount"])
    pq.write_table(pa.table({"txn": txn}), tmp_path / "ref.parquet",
                   row_group_size=200 // groups)
    df = read_reference_table(tmp_path / "ref.parquet")
    assert len(df) == 200
    assert df["txn"].iloc[199] == {"type": "TRANSFER", "amount": 199.0}
