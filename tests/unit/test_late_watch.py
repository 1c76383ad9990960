"""The daemon's warning about late predictions in numbers (``service/late_watch.py``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from driftwatch.service.late_watch import LateWatch

polls = st.lists(st.tuples(st.integers(0, 800), st.floats(0, 1), st.floats(0, 120)),
                 max_size=60)


@given(polls)
def test_it_warns_only_on_a_large_late_share_and_at_most_once_per_interval(
    seq: list[tuple[int, float, float]],
) -> None:
    w = LateWatch(min_events=1_000, share=0.05, every_s=300.0)
    now, events, late, said = 0.0, 0, 0, []
    for preds, frac, step in seq:
        now += step
        n_late = int(preds * frac)
        got = w.see(predictions=preds, late=n_late, now=now)
        events, late = events + preds, late + n_late
        if events < 1_000:
            assert got is None
            continue
        if late < 0.05 * events:
            assert got is None
        elif got is not None:
            assert f"{late / events:.0%} of the last {events:,} predictions came late" in got
            assert not said or now - said[-1] >= 300.0
            said.append(now)
        else:  # due but held back: it spoke less than an interval ago
            assert said and now - said[-1] < 300.0
        events = late = 0  # judged: the next warning counts anew


def test_a_backlog_read_out_of_order_is_named_with_what_to_do() -> None:
    w = LateWatch()
    msg = w.see(predictions=10_465, late=6_080, now=5.0)
    assert msg is not None and msg.startswith("58% of the last 10,465 predictions came late")
    assert "record it and replay it" in msg
    assert w.see(predictions=10_000, late=9_000, now=100.0) is None
    assert w.see(predictions=10_000, late=9_000, now=400.0) is not None
