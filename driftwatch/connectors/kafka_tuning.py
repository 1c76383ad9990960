"""The Kafka source's tuning keys checked as the connector is read, not by the client later.

kafka-python checks these only when the daemon builds its consumer, and the source takes
any error there for "cluster not reachable yet": ``session_timeout_ms: "45s"`` read as an
endless ``Kafka not reachable (TypeError); retrying``. Each key's type and range is
checked here instead, so ``policy check --connector``, ``replay`` and ``run`` all refuse
it with the key's ``file:line:col``.

>>> check_tuning({"session_timeout_ms": 45_000, "retry_backoff_s": 0.5})
>>> check_tuning({"session_timeout_ms": "45s"})
Traceback (most recent call last):
...
driftwatch.errors.ConnectorError: session_timeout_ms must be a whole number of \
milliseconds from 3001 to 2147483647, found '45s'
  at session_timeout_ms
  hint: the heartbeat (every 3000 ms) must fit in it; brokers accept 6000 to 1800000 by default
>>> check_tuning({"commit_timeout_s": True})
Traceback (most recent call last):
...
driftwatch.errors.ConnectorError: commit_timeout_s must be a number of seconds above 0, \
found true
  at commit_timeout_s
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from driftwatch.connectors.spec import show
from driftwatch.errors import ConnectorError

__all__ = ["INT32_MAX", "PAIRED", "TUNING_KEYS", "check_tuning"]

INT32_MAX = 2**31 - 1  # these travel as Kafka protocol INT32 fields
_REQUEST_TIMEOUT_MS = 30_000  # kafka-python's request_timeout_ms (not a connector key)
_HEARTBEAT_MS = 3_000  # kafka-python's heartbeat_interval_ms (not a connector key)


@dataclass(frozen=True)
class _Millis:
    """A whole number of milliseconds in ``[low, high]``."""

    low: int
    high: int = INT32_MAX
    hint: str | None = None

    def problem(self, value: Any) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return "type"
        return None if self.low <= value <= self.high else "range"

    def expected(self, key: str) -> str:
        return f"{key} must be a whole number of milliseconds from {self.low} to {self.high}"


@dataclass(frozen=True)
class _Bytes(_Millis):
    def expected(self, key: str) -> str:
        return f"{key} must be a whole number of bytes from {self.low} to {self.high}"


@dataclass(frozen=True)
class _Seconds:
    """A finite number of seconds above 0 (``null`` too where ``optional``)."""

    optional: bool = False

    def problem(self, value: Any) -> str | None:
        if value is None and self.optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return "type"
        return None if math.isfinite(value) and value > 0 else "range"

    def expected(self, key: str) -> str:
        tail = " (or null: never)" if self.optional else ""
        return f"{key} must be a number of seconds above 0{tail}"

    hint: str | None = None


@dataclass(frozen=True)
class _Choice:
    choices: tuple[str, ...]
    hint: str | None = None

    def problem(self, value: Any) -> str | None:
        return None if isinstance(value, str) and value in self.choices else "type"

    def expected(self, key: str) -> str:
        return f"{key} must be {' or '.join(self.choices)}"


#: an error about two keys names the first; the file may hold only the second
PAIRED = {"retry_backoff_max_s": "retry_backoff_s"}

#: each tuning key and what it may hold
TUNING_KEYS: dict[str, _Millis | _Seconds | _Choice] = {
    "auto_offset_reset": _Choice(("earliest", "latest")),
    "fetch_max_wait_ms": _Millis(
        0, _REQUEST_TIMEOUT_MS - 1,
        hint=f"the client refuses a wait as long as its request timeout ({_REQUEST_TIMEOUT_MS} "
             "ms)"),
    "max_partition_fetch_bytes": _Bytes(1),
    "session_timeout_ms": _Millis(
        _HEARTBEAT_MS + 1,
        hint=f"the heartbeat (every {_HEARTBEAT_MS} ms) must fit in it; brokers accept 6000 "
             "to 1800000 by default"),
    "reconnect_backoff_max_ms": _Millis(1),
    "retry_backoff_s": _Seconds(),
    "retry_backoff_max_s": _Seconds(),
    "give_up_after_s": _Seconds(optional=True),
    "commit_timeout_s": _Seconds(),
    "dead_letter_timeout_s": _Seconds(),
}


def check_tuning(values: Mapping[str, Any]) -> None:
    """Raise :class:`ConnectorError` (``path`` = the key) for the first tuning value of the
    wrong type or out of range; keys not in :data:`TUNING_KEYS` are left alone."""
    for key, rule in TUNING_KEYS.items():
        if key in values and rule.problem(values[key]) is not None:
            raise ConnectorError(rule.expected(key), found=show(values[key]), path=key,
                                 hint=rule.hint)
    low, high = values.get("retry_backoff_s"), values.get("retry_backoff_max_s")
    if low is not None and high is not None and high < low:
        raise ConnectorError("retry_backoff_max_s must be at least retry_backoff_s",
                             found=f"{show(high)} < {show(low)}", path="retry_backoff_max_s")
