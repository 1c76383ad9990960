"""Bounded retries for calls to an MLflow store that may be briefly unreachable.

A call that fails for a transient reason (connection refused, timeout, 5xx, a locked
SQLite file) is tried again after a growing pause, at most ``attempts`` times; then
:class:`RegistryUnavailableError` says the store is down, and the caller (the action
executor) keeps the action pending for later. Any other error passes straight through.
The pause is an injected ``sleep`` so tests do not wait.

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

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from driftwatch.errors import ActionError

__all__ = ["RegistryUnavailableError", "Retry", "is_transient"]

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


class RegistryUnavailableError(ActionError):
    """The MLflow tracking or registry store cannot be reached now; try again later."""


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
    """Try a call up to ``attempts`` times with exponential backoff capped at ``max_delay``."""

    attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 5.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def call(self, fn: Callable[[], T], *, what: str = "MLflow call") -> T:
        delay = self.base_delay
        for attempt in range(1, max(1, self.attempts) + 1):
            try:
                return fn()
            except Exception as exc:
                if not is_transient(exc):
                    raise
                if attempt >= self.attempts:
                    raise RegistryUnavailableError(
                        f"{what}: MLflow unreachable after {attempt} attempts: {_first_line(exc)}"
                    ) from exc
                self.sleep(delay)
                delay = min(delay * 2, self.max_delay)
        raise AssertionError("unreachable")  # pragma: no cover


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
