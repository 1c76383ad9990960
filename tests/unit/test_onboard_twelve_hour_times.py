"""``init`` reads times written on a 12-hour clock (``12/31/2023 11:59:59 PM``, as US
exports and .NET's ``DateTime.ToString()`` write them) with the strptime format replay
reads them with; before, such a field was refused as no time at all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.eventtime import event_times
from driftwatch.onboard.infer import text_formats

_START = datetime(2023, 12, 31, 23, 59, 59, tzinfo=UTC)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 400 * 86400), min_size=1, max_size=30))
def test_twelve_hour_text_reads_as_the_times_it_writes(offsets: list[int]) -> None:
    times = [_START + timedelta(seconds=s) for s in [0, *offsets]]  # 12/31: month first
    texts = [t.strftime("%m/%d/%Y %I:%M:%S %p") for t in times]
    formats = text_formats(texts)
    assert formats == ["%m/%d/%Y %I:%M:%S %p"], (texts, formats)
    secs = event_times(texts, "auto", fmt=formats[0])[0]
    assert np.array_equal(secs, [t.timestamp() for t in times]), texts


def test_day_first_and_month_first_twelve_hour_text_is_ambiguous_when_both_read() -> None:
    texts = ["01/02/2024 01:00 PM", "03/04/2024 11:15 AM"]
    assert text_formats(texts) == ["%m/%d/%Y %I:%M %p", "%d/%m/%Y %I:%M %p"]
