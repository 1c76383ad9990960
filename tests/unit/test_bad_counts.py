"""Bad records counted by reason and, for label values no connector list names, by
stream and value: every record counted once, the values kept bounded."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline.badcounts import MAX_VALUES, OTHERS, count_bad, unknown_labels_line
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

_RECORD = st.builds(
    lambda reason, stream, value: BadRecord(reason, "d", "f", 1, b"", stream=stream,
                                            value=value if reason == "bad_label" else None),
    st.sampled_from(["bad_label", "missing_id", "bad_time"]),
    st.sampled_from(["outcomes", "predictions"]),
    st.one_of(st.none(), st.text(min_size=1, max_size=6)))


@settings(max_examples=200, deadline=None)
@given(batches=st.lists(st.lists(_RECORD, max_size=40), max_size=5))
def test_every_record_is_counted_once_and_the_values_stay_bounded(
        batches: list[list[BadRecord]]) -> None:
    by_reason: dict[str, int] = {}
    unknown: dict[str, dict[str, int]] = {}
    for recs in batches:
        count_bad(by_reason, unknown, recs)
    flat = [r for recs in batches for r in recs]
    assert sum(by_reason.values()) == len(flat)
    for reason in by_reason:
        assert by_reason[reason] == sum(r.reason == reason for r in flat)
    for stream in ("outcomes", "predictions"):
        named = [r.value for r in flat if r.stream == stream and r.value is not None]
        counts = unknown.get(stream, {})
        assert sum(counts.values()) == len(named)
        assert len(counts) <= MAX_VALUES + 1
        # the first MAX_VALUES distinct values keep their own counts
        for v in list(dict.fromkeys(named))[:MAX_VALUES]:
            assert counts[v] == named.count(v)
        assert (OTHERS in counts) == (len(set(named)) > MAX_VALUES)


def test_the_line_names_the_values_most_first_and_the_connector_key() -> None:
    line = unknown_labels_line("outcomes", {"Default": 3, "Repurchased": 138})
    assert line.startswith("unknown labels: 'Repurchased' x138, 'Default' x3 on the "
                           "outcomes stream"), line
    assert "streams.outcomes.fields.label bad: or good:" in line and "pending:" in line


def test_a_monitor_keeps_its_unknown_labels_across_a_checkpoint() -> None:
    rng = np.random.default_rng(0)
    prof = ReferenceProfile.build(pd.DataFrame({"x": rng.normal(size=500)}), numeric=["x"])
    spec = WindowSpec(kind="count", pane_size=100)
    a = ModelMonitor("m", prof, spec)
    bad = [BadRecord("bad_label", "d", "o.csv", i, b"", stream="outcomes",
                     value="Repurchased" if i % 3 else "Default") for i in range(9)]
    a.process(Polled(bad=bad))
    assert a.unknown_labels == {"outcomes": {"Repurchased": 6, "Default": 3}}
    state = json.loads(json.dumps(a.state_dict()))
    b = ModelMonitor("m", prof, spec)
    b.load_state(state)
    assert b.unknown_labels == a.unknown_labels
    del state["unknown_labels"]  # a checkpoint written before the count
    c = ModelMonitor("m", prof, spec)
    c.load_state(state)
    assert c.unknown_labels == {} and c.bad_by_reason == {"bad_label": 9}
