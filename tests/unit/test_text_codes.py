"""The decoder's shortcuts for text columns give what Arrow's whole-column rules give.

:func:`~driftwatch.connectors.columns.blank` asks Arrow's whitespace trim only about the
rows whose first byte may start a blank text, and
:func:`~driftwatch.connectors.columns.encode` only about the rows no level matched. Both
are checked here against the rules applied to every row: null, or nothing left after
``utf8_trim_whitespace``; a level's code, else unseen, and missing where blank.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.columns import blank, code_lookup, encode

# every kind of first byte: printable ASCII, spaces and controls, Unicode spaces (NBSP,
# ideographic space, line separator) and other multi-byte characters
_CHARS = st.sampled_from([*"aZ09-_ .\t\r\n\x0b\x0c\x1c\x7f", "\u00a0", "\u3000", "\u2028",
                          "\u0085", "é", "日", "😀"])
_TEXT = st.one_of(st.none(), st.text(_CHARS, max_size=4))


def _blank_everywhere(arr: pa.Array) -> np.ndarray:
    empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(arr)), 0)
    return pc.fill_null(empty, True).to_numpy(zero_copy_only=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=40), st.integers(0, 5))
def test_blank_is_arrow_s_trim_on_every_row(values: list[str | None], cut: int) -> None:
    arr = pa.array(values, pa.string())
    for a in (arr, arr.slice(min(cut, len(arr)))):  # a slice has an offset into its buffers
        assert blank(a).tolist() == _blank_everywhere(a).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=40),
       st.lists(st.text(_CHARS, min_size=0, max_size=3), max_size=5, unique=True),
       st.lists(st.text(_CHARS, min_size=1, max_size=3), max_size=3, unique=True))
def test_encode_is_the_level_code_else_unseen_and_missing_where_blank(
        values: list[str | None], levels: list[str], other: list[str]) -> None:
    arr = pa.array(values, pa.string())
    n = len(levels)
    code = {v: i for i, v in enumerate(levels)}
    for v in sorted(other):
        code.setdefault(v, n)
    is_blank = _blank_everywhere(arr).tolist()
    want = [-1 if b else code.get(v, n + 1) for v, b in zip(values, is_blank, strict=True)]
    got = encode(arr, code_lookup(levels, frozenset(other)), n)
    assert got.dtype == np.int32 and got.tolist() == want


def test_a_blank_level_is_still_missing() -> None:
    # a reference whose level is " " (kept as text): its rows are missing, as before
    got = encode(pa.array([" ", "a", None, "b"]), code_lookup([" ", "a"], frozenset()), 2)
    assert got.tolist() == [-1, 1, -1, 3]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.sampled_from(["approve", " Approve", "APPROVE ",
                                                       "decline", "", " ", "review", "é"])),
                max_size=30),
       st.sets(st.sampled_from(["approve", "decline", "review", ""]), max_size=3))
def test_a_decision_or_label_set_is_matched_per_distinct_text_as_on_every_row(
        values: list[str | None], wanted: set[str]) -> None:
    from driftwatch.connectors.columns import keys
    from driftwatch.connectors.decode import _Distinct, _isin

    arr = pa.array(values, pa.string())
    want = _isin(keys(arr), frozenset(wanted))
    assert _Distinct(arr).isin(frozenset(wanted)).tolist() == want.tolist()
