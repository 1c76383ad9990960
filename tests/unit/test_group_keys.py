"""The co-partitioning check on records: events keyed and partitioned alike pass."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.errors import ServiceError
from driftwatch.service.group.keys import KeyCheck


def _feed(check: KeyCheck, stream: str, ids: list[str], part, key=lambda i: i.encode()) -> None:
    for i in ids:
        check.see(stream, f"t.{stream}", part(i), [key(i)], [i])


@settings(max_examples=30, deadline=None)
@given(ids=st.lists(st.integers(0, 500), min_size=1, max_size=80, unique=True),
       n=st.integers(1, 16))
def test_co_partitioned_streams_pass(ids, n) -> None:
    events = [f"app-{i}" for i in ids]
    check = KeyCheck(limit=1_000, pairs=10_000)
    def part(i: str) -> int:
        return zlib.crc32(i.encode()) % n
    _feed(check, "predictions", events, part)
    _feed(check, "outcomes", events[::-1], part)
    assert check.matched == len(events)


def test_another_partitioner_another_key_or_no_key_is_refused() -> None:
    events = [f"app-{i}" for i in range(50)]
    def crc(i: str) -> int:
        return zlib.crc32(i.encode()) % 16
    for part, key, words in [
        (lambda i: (crc(i) + 1) % 16, lambda i: i.encode(), "but on partition"),
        (crc, lambda i: b"customer-" + i.encode(), "is keyed"),
        (crc, lambda i: None, "has no key"),
    ]:
        check = KeyCheck()
        _feed(check, "predictions", events, crc)
        with pytest.raises(ServiceError, match=words):
            _feed(check, "outcomes", events, part, key)


def test_checking_stops_once_enough_events_agree() -> None:
    check = KeyCheck(limit=100, pairs=5)
    events = [f"e{i}" for i in range(10)]
    _feed(check, "predictions", events, lambda i: 0)
    _feed(check, "outcomes", events[:5], lambda i: 0)
    assert check.done and check.seen == {}
    _feed(check, "outcomes", events[5:], lambda i: 3)  # no longer checked
