"""Text of categorical values computed once per distinct value equals it computed per value."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.schema import level_text, level_texts, map_distinct
from driftwatch.windows.conventions import level_text as table_level_text
from driftwatch.windows.conventions import norm_value

_VALUES = st.one_of(
    st.none(), st.just(math.nan), st.booleans(), st.integers(-3, 3),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e20]),
    st.sampled_from(["a", "A ", "", " ", "True", "1"]),
)


def _per_value(values: list[object]) -> list[object]:
    out = []
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        t = level_text(v)
        out.append(t if t.strip() else None)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(_VALUES, max_size=30))
def test_level_texts_equal_per_value_texts(values: list[object]) -> None:
    assert level_texts(pd.Series(values, dtype=object)).tolist() == _per_value(values)


@settings(max_examples=100, deadline=None)
@given(st.lists(_VALUES, max_size=30))
def test_the_table_conventions_map_each_value_as_alone(values: list[object]) -> None:
    s = pd.Series(values, dtype=object)
    assert map_distinct(s, table_level_text).tolist() == [table_level_text(v) for v in values]
    want = [None if pd.isna(v) else norm_value(v) for v in values]
    assert map_distinct(s, norm_value).tolist() == want


def test_typed_columns_go_through_their_distinct_values() -> None:
    s = pd.Series(np.array([3, 1, 3, 3]))
    assert map_distinct(s, level_text).tolist() == ["3", "1", "3", "3"]
    b = pd.Series([True, None, False], dtype="boolean")
    assert map_distinct(b, level_text, missing="?").tolist() == ["true", "?", "false"]
