"""Once MLflow is known unreachable, calls fail at once until a wall-clock cool-off passes.

A replay's retry times are in event time, so an action backing off from an outage is due
again at every window: without the breaker each try paid the full connection wait (three
attempts and 1.5 s of pauses) and logged a ``waits for MLflow`` line. Time here is an
injected monotonic clock; no test sleeps.
"""

from __future__ import annotations

import logging

import pytest

from driftwatch.registry.breaker import CircuitBreaker
from driftwatch.registry.retry import RegistryUnavailableError, Retry


class _Server:
    """A call that reaches MLflow: refused while ``up`` is False."""

    def __init__(self) -> None:
        self.up = True
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if not self.up:
            raise ConnectionRefusedError("connection refused")
        return "ok"


def test_a_known_outage_fails_calls_at_once_then_one_probe_finds_mlflow_back(
        caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    slept: list[float] = []
    seen: list[object] = []
    retry = Retry(attempts=3, sleep=slept.append, observer=seen.append,
                  breaker=CircuitBreaker(cooloff_s=5.0, monotonic=lambda: now[0]))
    server = _Server()
    caplog.set_level(logging.WARNING, logger="driftwatch.registry")
    assert retry.call(server) == "ok"

    server.up = False
    with pytest.raises(RegistryUnavailableError) as first:
        retry.call(server, what="alias champion")
    assert server.calls == 4 and slept == [0.5, 1.0]  # the one full wait: 3 attempts
    assert not first.value.known

    for _ in range(50):  # a replay's windows: every action due again at each
        now[0] += 0.01
        with pytest.raises(RegistryUnavailableError, match="MLflow unreachable") as refused:
            retry.call(server, what="alias champion")
        assert refused.value.known
    assert server.calls == 4 and slept == [0.5, 1.0]  # not one more connection, no pause
    assert len(seen) == 2  # the observer (readiness) heard it down once: still down

    now[0] = 5.0  # the cool-off passed: one probe, one attempt, no pause; still down
    with pytest.raises(RegistryUnavailableError, match="after a try") as probe:
        retry.call(server)
    assert probe.value.known and server.calls == 5 and slept == [0.5, 1.0]
    with pytest.raises(RegistryUnavailableError):  # open for another cool-off
        retry.call(server)
    assert server.calls == 5

    server.up = True
    now[0] = 10.0
    assert retry.call(server) == "ok"  # the probe finds it back: closed
    assert retry.call(server) == "ok" and server.calls == 7
    assert seen[-1] is None  # readiness hears it is up again
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said  # once down, once back: not once a window
    assert said[0].startswith("MLflow is unreachable: connection refused")
    assert said[1].startswith("MLflow answers again after 10 s unreachable")


def _tripped() -> tuple[list[float], CircuitBreaker, Retry, _Server]:
    """A breaker (5 s cool-off, on the clock ``now[0]``) its retry opened on a server
    that is down."""
    now = [0.0]
    breaker = CircuitBreaker(cooloff_s=5.0, monotonic=lambda: now[0])
    retry = Retry(attempts=1, sleep=lambda s: None, breaker=breaker)
    server = _Server()
    server.up = False
    with pytest.raises(RegistryUnavailableError):
        retry.call(server)
    return now, breaker, retry, server


def test_an_answer_that_is_an_error_means_mlflow_is_up() -> None:
    now, breaker, retry, _ = _tripped()
    now[0] = 6.0
    with pytest.raises(KeyError):  # the probe got an answer, a bad one: MLflow is up
        retry.call(lambda: {}["x"])
    assert not breaker.is_open


def test_probe_now_lets_the_next_call_reach_mlflow_at_once() -> None:
    """A replay's end: event time stops, so waiting actions get one more real try."""
    _, breaker, retry, server = _tripped()
    server.up = True
    breaker.probe_now()
    assert retry.call(server) == "ok" and server.calls == 2


def test_the_cooloff_must_be_positive() -> None:
    with pytest.raises(ValueError, match="cooloff_s must be > 0"):
        CircuitBreaker(cooloff_s=0)


def test_an_interrupted_probe_does_not_leave_the_breaker_shut_for_good() -> None:
    now, _, retry, server = _tripped()
    now[0] = 5.0

    def interrupted() -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        retry.call(interrupted)  # the probe, cut short: neither an answer nor an outage
    server.up = True
    assert retry.call(server) == "ok"  # the next call probes, and finds MLflow back
