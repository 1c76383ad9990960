"""Inside :func:`signal_index` a report looks signals up by index; it must find exactly
what the scan of the window's list finds: the first whole-window signal of that name and
feature, never a segment's."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from driftwatch.report.inputs import signal, signal_index

names = st.sampled_from(["psi", "ks", "gini", "missing_rate"])
features = st.sampled_from([None, "age", "income"])
signals = st.lists(st.fixed_dictionaries(
    {"signal": names, "feature": features, "value": st.floats(allow_nan=False)},
    optional={"segment": st.sampled_from([None, "", "web", "branch"])}), max_size=25)


@given(windows=st.lists(signals, min_size=1, max_size=4), asks=st.lists(
    st.tuples(st.integers(0, 3), names, features), max_size=30))
def test_the_index_finds_what_the_scan_finds(windows: list[list[dict]],
                                             asks: list[tuple[int, str, str | None]]) -> None:
    records = [{"window_id": k, "signals": sigs} for k, sigs in enumerate(windows)]
    records.append({"window_id": 99})  # a window without signals
    asks = [(k % len(records), n, f) for k, n, f in asks]
    scanned = [signal(records[k], n, f) for k, n, f in asks]
    with signal_index():
        indexed = [signal(records[k], n, f) for k, n, f in asks]
        again = [signal(records[k], n, f) for k, n, f in asks]  # from the built index
    assert all(a is b for a, b in zip(scanned, indexed, strict=True))
    assert all(a is b for a, b in zip(scanned, again, strict=True))
