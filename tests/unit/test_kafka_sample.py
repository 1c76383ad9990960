"""The first records a Kafka source keeps to probe: at most ``n`` a stream, handed out once."""

from __future__ import annotations

import orjson
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.connectors.kafka_sample import FirstRecords

_payload = st.one_of(
    st.dictionaries(st.text(max_size=3), st.integers(-9, 9), max_size=3).map(orjson.dumps),
    st.lists(st.integers(-9, 9), max_size=2).map(orjson.dumps),  # JSON, not an object
    st.binary(max_size=6),  # mostly not JSON at all
)
_poll = st.tuples(st.sampled_from(["predictions", "outcomes", "other"]),
                  st.lists(_payload, max_size=8), st.floats(0, 30))


@given(st.integers(1, 5), st.lists(_poll, max_size=12))
def test_each_stream_is_handed_out_once_with_its_first_objects(n: int, polls) -> None:
    s = FirstRecords(["predictions", "outcomes"], n=n, wait_s=45.0)
    now, given_out = 0.0, {}
    objects: dict[str, list[dict]] = {"predictions": [], "outcomes": []}
    for stream, payloads, dt in polls:
        now += dt
        s.keep(stream, payloads, now=now)
        if stream in objects:
            for p in payloads:
                try:
                    v = orjson.loads(p)
                except orjson.JSONDecodeError:
                    continue
                if isinstance(v, dict):
                    objects[stream].append(v)
        for name, recs in s.take(now=now).items():
            assert name not in given_out, "a stream handed out twice"
            given_out[name] = recs
            # the first objects so far, in order, n at most: full, or waited for
            assert recs == objects[name][:n]
            assert len(recs) == n or (recs and now >= 45.0)
    for name in ("predictions", "outcomes"):
        if len(objects[name]) >= n:
            assert name in given_out  # a full sample is handed out at once
    assert s.take(now=now + 1e9).keys().isdisjoint(given_out)
