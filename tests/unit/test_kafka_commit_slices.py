"""An offset commit waits in slices, so a shutdown that begins while a broker that is down
holds it ends the wait within one slice: a SIGTERM that arrived as the daemon committed its
last checkpoint waited out the whole ``commit_timeout_s`` (30 s) against a 10 s bound."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka import errors as kafka_errors

from driftwatch.connectors.kafka_offsets import SourceOffsets
from driftwatch.connectors.kafka_slices import STOP_WAIT_S


class _Offsets(SourceOffsets):
    """The commit's part of a source: its settings, the shutdown flag and its cap."""

    def __init__(self, timeout_s: float) -> None:
        self.settings = SimpleNamespace(commit_timeout_s=timeout_s)  # type: ignore[assignment]
        self._stopping = False

    def _wait(self, seconds: float) -> float:  # type: ignore[override]
        return min(seconds, STOP_WAIT_S) if self._stopping else seconds


class _DownBroker:
    """A consumer whose commits time out, until ``ok_at`` (a call index), if any; the
    shutdown begins during call ``stop_at``, as a signal handler would set it."""

    def __init__(self, owner: _Offsets, *, stop_at: int | None = None,
                 ok_at: int | None = None) -> None:
        self.owner, self.stop_at, self.ok_at = owner, stop_at, ok_at
        self.waits_ms: list[int] = []

    def commit(self, offsets: Any, timeout_ms: int) -> None:
        self.waits_ms.append(timeout_ms)
        if len(self.waits_ms) - 1 == self.stop_at:
            self.owner._stopping = True
        if len(self.waits_ms) - 1 != self.ok_at:
            raise kafka_errors.KafkaTimeoutError()


@settings(max_examples=60, deadline=None)
@given(timeout_s=st.floats(0.01, 120.0), stop_at=st.integers(0, 200))
def test_a_shutdown_ends_a_commit_under_way_within_one_slice(timeout_s: float,
                                                             stop_at: int) -> None:
    offsets = _Offsets(timeout_s)
    broker = _DownBroker(offsets, stop_at=stop_at)
    with pytest.raises(kafka_errors.KafkaTimeoutError):
        offsets._commit_in_slices(broker, {})
    slices = max(1, math.ceil(timeout_s / STOP_WAIT_S))
    assert all(w <= STOP_WAIT_S * 1000 for w in broker.waits_ms)
    # the slice the shutdown began in is the last one
    assert len(broker.waits_ms) == min(stop_at + 1, slices)


def test_without_a_shutdown_a_commit_waits_its_whole_timeout_and_then_fails() -> None:
    offsets = _Offsets(30.0)
    broker = _DownBroker(offsets)
    with pytest.raises(kafka_errors.KafkaTimeoutError):
        offsets._commit_in_slices(broker, {})
    assert broker.waits_ms == [1000] * 30


def test_a_commit_the_broker_takes_in_a_later_slice_succeeds() -> None:
    offsets = _Offsets(30.0)
    broker = _DownBroker(offsets, ok_at=2)  # the broker is back by the third slice
    offsets._commit_in_slices(broker, {})
    assert broker.waits_ms == [1000, 1000, 1000]


def test_a_commit_begun_after_the_shutdown_waits_one_slice() -> None:
    offsets = _Offsets(30.0)
    offsets._stopping = True
    broker = _DownBroker(offsets)
    with pytest.raises(kafka_errors.KafkaTimeoutError):
        offsets._commit_in_slices(broker, {})
    assert broker.waits_ms == [1000]


def test_a_stop_request_caps_the_broker_waits_at_once() -> None:
    """``Service.stop`` (what SIGTERM calls) tells every model's source that shutdown has
    begun, so a commit under way in the loop stops at its slice's end; before, the sources
    heard of it only once the loop had finished its batch and the commit with it."""
    import threading

    from driftwatch.service.daemon import Service

    told: list[str] = []
    runtimes = [SimpleNamespace(name=n, source=object(), stopping=lambda n=n: told.append(n))
                for n in ("credit", "fraud")]
    svc = SimpleNamespace(_stop=threading.Event(),
                          inbox=SimpleNamespace(wake=threading.Event()), runtimes=runtimes)
    Service.stop(svc)  # type: ignore[arg-type]
    assert told == ["credit", "fraud"] and svc._stop.is_set()


class _StuckProducer:
    """A dead-letter producer whose broker is down: sends are taken, never acknowledged;
    the topic's sink is told of the shutdown during flush call ``stop_at``."""

    def __init__(self, stop_at: int) -> None:
        self.stop_at, self.sink, self.waits = stop_at, None, []

    def send(self, topic: str, value: bytes, headers: Any) -> Any:
        return SimpleNamespace(is_done=False, failed=lambda: False)

    def flush(self, timeout: float) -> None:
        self.waits.append(timeout)
        if len(self.waits) - 1 == self.stop_at:
            self.sink.stopping = True  # type: ignore[attr-defined]
        raise kafka_errors.KafkaTimeoutError()


def test_a_shutdown_ends_a_dead_letter_flush_under_way_within_one_slice(
        tmp_path: Any) -> None:
    from driftwatch.connectors.base import BadRecord
    from driftwatch.connectors.kafka_dead_letter import DeadLetterFile, DeadLetterTopic

    producer = _StuckProducer(stop_at=2)
    sink = DeadLetterTopic("dl", lambda: producer, DeadLetterFile(tmp_path / "dl.jsonl"))
    producer.sink = sink
    sink.publish([BadRecord("invalid_json", "x", "p", 7, b"{")])
    assert sink.flush(30.0) is False  # nothing acknowledged, nothing lost: still pending
    assert producer.waits == [1.0, 1.0, 1.0]
