"""Bounded retries for calls to an MLflow store that may be briefly unreachable.

A call that fails for a transient reason (connection refused, timeout, 5xx, a locked
SQLite file) is tried again after a growing pause, at most ``attempts`` times; then
:class:`RegistryUnavailableError` says the store is down, and the caller (the action
executor) keeps the action pending for later. Any other error passes straight through.
The pause is an injected ``sleep`` so tests do not wait. An ``observer`` hears the outcome
of every call: ``None`` when the store answered (even with an error of the request's own),
the last error when it could not be reached (the daemon's readiness model listens). With a
``breaker`` (:class:`~driftwatch.registry.breaker.CircuitBreaker`), a call made while MLflow
is known unreachable fails at once, and the observer hears nothing new: what it heard last
(down) still holds.

>>> calls = []
>>> def flaky():
...     calls.append(1)
...     if len(calls) < 3:
...         raise ConnectionError("refused")
...     return "ok"
>>> slept = []
>>> Retry(attempts=4, base_delay=0.5, sleep=slept.append).call(flaky)
'ok'
>>> slept
[0.5, 1.0]
>>> Retry(attempts=2, sleep=lambda s: None).call(lambda: 1 / 0)
Traceback (most recent call last):
...
ZeroDivisionError: division by zero
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import TypeVar

from driftwatch.registry.breaker import CircuitBreaker, RegistryUnavailableError

__all__ = ["HTTP_TIMEOUT_ENV", "CircuitBreaker", "RegistryUnavailableError", "Retry",
           "bound_http_client", "is_transient"]

T = TypeVar("T")

_TRANSIENT_CODES = frozenset({"TEMPORARILY_UNAVAILABLE", "REQUEST_LIMIT_EXCEEDED"})
_TRANSIENT_TEXT = (
    "failed with exception",  # the REST client's wrapper around a connection error
    "max retries exceeded",
    "connection refused",
    "timed out",
    "database is locked",
    "503",
    "502",
    "504",
)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` looks like an outage rather than a bad request.

    >>> is_transient(ConnectionRefusedError()), is_transient(ValueError("bad name"))
    (True, False)
    """
    if isinstance(exc, ConnectionError | TimeoutError):
        return True
    name = type(exc).__name__
    if name in ("ConnectionError", "Timeout", "ReadTimeout", "ConnectTimeout"):
        return True  # requests' exceptions, without importing requests here
    code = getattr(exc, "error_code", None)
    if code in _TRANSIENT_CODES:
        return True
    if name == "MlflowException" or code is not None:
        text = str(exc).lower()
        return any(t in text for t in _TRANSIENT_TEXT)
    return False


@dataclass
class Retry:
    """Try a call up to ``attempts`` times with exponential backoff capped at ``max_delay``;
    with a ``breaker``, not at all while MLflow is known down, and once when probing it."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 5.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    observer: Callable[[BaseException | None], None] | None = field(default=None, repr=False)
    breaker: CircuitBreaker | None = field(default=None, repr=False)

    def call(self, fn: Callable[[], T], *, what: str = "MLflow call") -> T:
        probe = self.breaker is not None and self.breaker.admit(what)
        try:
            return self._call(fn, what, probe)
        except BaseException:
            if probe and self.breaker is not None:  # no-op once trip/reset ended the probe
                self.breaker.abandon()
            raise

    def _call(self, fn: Callable[[], T], what: str, probe: bool) -> T:
        attempts = 1 if probe else max(1, self.attempts)
        delay = self.base_delay
        for attempt in range(1, attempts + 1):
            try:
                out = fn()
            except Exception as exc:
                if not is_transient(exc):
                    self._observe(None)
                    raise
                if attempt >= attempts:
                    tries = "a try" if probe else f"{attempt} attempts"
                    error = RegistryUnavailableError(
                        f"{what}: MLflow unreachable after {tries}: {_first_line(exc)}",
                        known=probe)
                    self._observe(error)
                    if self.breaker is not None:
                        self.breaker.trip(_first_line(exc))
                    raise error from exc
                self.sleep(delay)
                delay = min(delay * 2, self.max_delay)
                continue
            self._observe(None)
            return out
        raise AssertionError("unreachable")  # pragma: no cover

    def _observe(self, error: BaseException | None) -> None:
        if error is None and self.breaker is not None:
            self.breaker.reset()
        if self.observer is not None:
            self.observer(error)



HTTP_TIMEOUT_ENV = "MLFLOW_HTTP_REQUEST_TIMEOUT"
HTTP_RETRIES_ENV = "MLFLOW_HTTP_REQUEST_MAX_RETRIES"


def bound_http_client(timeout_s: float, retries: int,
                      environ: MutableMapping[str, str] | None = None) -> Callable[[], None]:
    """Bound MLflow's REST client: ``timeout_s`` per request and ``retries`` of its own
    (its defaults, 120 s and 7 retries with backoff, hold a call for minutes). MLflow reads
    both variables at each request; returns a function that puts the old values back.

    >>> env = {HTTP_RETRIES_ENV: "7"}
    >>> restore = bound_http_client(2.5, 0, env)
    >>> env[HTTP_TIMEOUT_ENV], env[HTTP_RETRIES_ENV]
    ('3', '0')
    >>> restore(); env
    {'MLFLOW_HTTP_REQUEST_MAX_RETRIES': '7'}
    """
    env = os.environ if environ is None else environ
    old = {k: env.get(k) for k in (HTTP_TIMEOUT_ENV, HTTP_RETRIES_ENV)}
    # MLflow parses the timeout as an int: round up so a bound is never shorter than asked
    env[HTTP_TIMEOUT_ENV] = str(max(1, int(-(-timeout_s // 1))))
    env[HTTP_RETRIES_ENV] = str(int(retries))

    def restore() -> None:
        for k, v in old.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v

    return restore


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
