"""Event-id keys and text columns, as the Kafka and file paths build them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch, hash_ids
from driftwatch.connectors.columns import fixed_width

# keys as checkpoints written by earlier versions hold them (pandas' hash_array of the ids)
PINNED = {
    "app-00000000": 11454897081694163235,
    "a": 13950350942979735504,
    "": 1760245841805064774,
    "é": 16908809132758853863,
    "0123456789abcdefg": 5505502386627873511,
}

texts = st.lists(st.one_of(st.none(), st.text(max_size=12),
                           st.text(alphabet="ab\x00", max_size=4)), max_size=30)


def test_keys_are_the_ones_checkpoints_hold() -> None:
    ids = np.array(list(PINNED))
    assert hash_ids(ids).tolist() == list(PINNED.values())
    built = Batch.build("predictions", n=len(ids), ids=ids)
    assert built.keys.tolist() == list(PINNED.values())
    assert built.ids.tolist() == list(PINNED)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=20), max_size=40))
def test_keys_match_pandas_hash_of_the_python_strings(values: list[str]) -> None:
    ids = np.array(values, dtype=str) if values else np.zeros(0, dtype="<U1")
    expected = pd.util.hash_array(np.array(ids.tolist(), dtype=object), categorize=False) \
        if values else np.zeros(0, dtype=np.uint64)
    assert hash_ids(ids).tolist() == expected.tolist()
    assert Batch.build("outcomes", n=len(ids), ids=ids).keys.tolist() == expected.tolist()


@settings(max_examples=80, deadline=None)
@given(texts)
def test_fixed_width_is_astype_str_of_the_python_strings(values: list[str | None]) -> None:
    got = fixed_width(pa.array(values, pa.string()))
    want = np.array(["" if v is None else v for v in values]).astype(str) if values \
        else np.zeros(0, dtype="<U1")
    assert got.tolist() == want.tolist()
    if values:
        assert got.dtype == want.dtype


def test_fixed_width_of_equally_wide_ids_of_a_slice() -> None:
    arr = pa.array(["app-1", "app-2", "app-3"]).slice(1)
    got = fixed_width(arr)
    assert got.tolist() == ["app-2", "app-3"]
    assert got.dtype == np.dtype("<U5")
