"""Event-id keys from the compiled loop are pandas' keys, bit for bit.

Checkpoints and the label join hold keys that ``pandas.util.hash_array`` made, so
``hash_ids`` must give exactly those for any text: ASCII ids, every UTF-8 length (1 to 4
bytes), zeros inside an id, empty ids, ids longer than SipHash's 8-byte blocks, and
arrays whose width pads the shorter ids with zeros. An id with a lone surrogate has no
UTF-8 form: pandas refuses it, and so does ``hash_ids``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch import batch
from driftwatch.batch import hash_ids
from driftwatch.numba_setup import numba_enabled

LOOPS = batch._ID_LOOPS.get(wait=True)


def pandas_keys(ids: list[str]) -> np.ndarray:
    return pd.util.hash_array(np.array(ids, dtype=object), categorize=False)


def test_the_compiled_loop_loads_where_numba_runs() -> None:
    assert (LOOPS is not None) == numba_enabled()


ids = st.lists(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=30)
               | st.from_regex(r"app-[0-9]{1,12}", fullmatch=True), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(ids=ids)
def test_keys_are_pandas_keys(ids: list[str]) -> None:
    arr = np.array(ids)  # numpy drops trailing zeros, as the batch's text columns do
    want = pandas_keys(arr.tolist())
    got = hash_ids(arr)
    assert got.dtype == np.uint64
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize("text", [
    "", "a", "\x7f", "\x80", "é", "\u07ff", "\u0800", "€", "\ud7ff", "\ue000", "\uffff",
    "\U00010000", "😀", "\U0010ffff", "a\x00b", "12345678", "123456789", "x" * 64,
    "x" * 255, "é" * 200, "ünïcødé-ïd-€-😀"])
def test_each_utf8_length_and_block_edge(text: str) -> None:
    assert hash_ids(np.array([text, "pad-to-a-wider-array"]))[0] == pandas_keys([text])[0]


def test_a_lone_surrogate_is_refused_as_pandas_refuses_it() -> None:
    with pytest.raises(UnicodeEncodeError):
        hash_ids(np.array(["ok", "\ud800"]))
