"""Event-id keys and text columns, as the Kafka and file paths build them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import example, given, settings
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


@settings(max_examples=60, deadline=None)
@given(rows=st.integers(0, 40), cols=st.integers(0, 4), seed=st.integers(0, 2**32 - 1),
       how=st.sampled_from(["mask", "index", "slice"]), order=st.sampled_from("CF"))
# one row taken twice: a (1, n) matrix is both layouts and numpy may give it C strides
@example(rows=1, cols=2, seed=0, how="index", order="F")
def test_take_keeps_the_values_and_a_column_major_layout(rows, cols, seed, how, order) -> None:
    """``Batch.take`` selects the same rows from row- and column-major features, and a
    column-major matrix stays column-major (contiguous columns) for the window kernel."""
    rng = np.random.default_rng(seed)
    num = np.asarray(rng.normal(size=(rows, cols)), order=order)
    cat = np.asarray(rng.integers(-1, 5, (rows, cols)).astype(np.int32), order=order)
    b = Batch.build("predictions", n=rows, n_numeric=cols, n_categorical=cols, numeric=num,
                    categorical=cat)
    index = {"mask": rng.uniform(size=rows) < 0.5,
             "index": rng.integers(-rows, rows, 2 * rows) if rows else np.zeros(0, np.intp),
             "slice": slice(rows // 3, rows - 1, None)}[how]
    got = b.take(index)
    for have, was in ((got.numeric, num), (got.categorical, cat)):
        assert have.dtype == was.dtype
        np.testing.assert_array_equal(have, np.ascontiguousarray(was)[index])
        if order == "F":
            assert min(have.shape) < 2 or have.strides[0] == have.itemsize
    assert got.ids.tolist() == b.ids[index].tolist()
