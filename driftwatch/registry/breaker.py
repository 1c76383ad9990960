"""A circuit breaker for MLflow: once it is known unreachable, calls fail at once.

Without it every action backing off from an outage pays the full connection wait again at
each try, and a replay (whose retry times are in event time, so due at every window)
stalls on it. After a call finds MLflow unreachable (:meth:`CircuitBreaker.trip`) the
breaker is *open*: :meth:`admit` refuses every call at once, with the error that opened it,
for ``cooloff_s`` of wall time (``monotonic``, injected). Then the next call is a *probe*:
it goes through (one attempt, no retries of its own); one that answers closes the breaker
(:meth:`reset`), one that does not opens it for another cool-off. Calls made while a probe is
in flight fail at once. The breaker says once that MLflow is down and once that it is back,
not at every refused call; :meth:`probe_now` makes the next call a probe whatever the time
(a replay's end: one more real try).

>>> now = [0.0]
>>> b = CircuitBreaker(cooloff_s=5.0, monotonic=lambda: now[0])
>>> b.admit("get alias")  # closed: not a probe
False
>>> b.trip("connection refused")
>>> try:
...     b.admit("get alias")
... except RegistryUnavailableError as exc:
...     print(exc)
...     print(exc.known)
get alias: MLflow unreachable (for 0 s, tried again every 5 s): connection refused
True
>>> now[0] = 5.0
>>> b.admit("get alias")  # the cool-off passed: this call probes
True
>>> b.reset(); b.is_open
False
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from driftwatch.errors import ActionError

__all__ = ["DEFAULT_COOLOFF_S", "CircuitBreaker", "RegistryUnavailableError"]

log = logging.getLogger("driftwatch.registry")

#: Wall-clock seconds between probes while MLflow is unreachable.
DEFAULT_COOLOFF_S = 5.0


class RegistryUnavailableError(ActionError):
    """The MLflow tracking or registry store cannot be reached now; try again later.

    ``known``: the outage was known before this call (the breaker refused it, or a probe
    found MLflow still down), so the caller need not say it again."""

    def __init__(self, message: str, *, known: bool = False) -> None:
        super().__init__(message)
        self.known = known


class CircuitBreaker:
    """Fails calls at once while MLflow is known unreachable (see module doc)."""

    def __init__(self, cooloff_s: float = DEFAULT_COOLOFF_S, *,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        if not cooloff_s > 0:
            raise ValueError(f"cooloff_s must be > 0, got {cooloff_s!r}")
        self.cooloff_s = float(cooloff_s)
        self.monotonic = monotonic
        self._lock = threading.Lock()
        self._down_since: float | None = None
        self._error = ""
        self._probe_at = 0.0
        self._probing = False

    @property
    def is_open(self) -> bool:
        """Whether MLflow is known unreachable (the last call that reached out failed)."""
        return self._down_since is not None

    def admit(self, what: str) -> bool:
        """Let a call through: False for an ordinary call, True for a probe (one attempt);
        raises :class:`RegistryUnavailableError` (``known``) while the breaker is open."""
        with self._lock:
            if self._down_since is None:
                return False
            now = self.monotonic()
            if self._probing or now < self._probe_at:
                raise RegistryUnavailableError(
                    f"{what}: MLflow unreachable (for {now - self._down_since:.0f} s, tried "
                    f"again every {self.cooloff_s:.0f} s): {self._error}", known=True)
            self._probing = True
            return True

    def trip(self, error: str) -> None:
        """A call found MLflow unreachable: open (again) for a cool-off."""
        with self._lock:
            now = self.monotonic()
            if self._down_since is None:
                self._down_since = now
                log.warning("MLflow is unreachable: %s; actions that need it wait, and "
                            "calls fail at once, with one try every %.0f s until it answers",
                            error, self.cooloff_s)
            self._error = error
            self._probe_at = now + self.cooloff_s
            self._probing = False

    def reset(self) -> None:
        """A call got an answer from MLflow: close the breaker."""
        with self._lock:
            if self._down_since is not None:
                log.warning("MLflow answers again after %.0f s unreachable; waiting actions "
                            "go on", self.monotonic() - self._down_since)
            self._down_since = None
            self._error = ""
            self._probing = False

    def abandon(self) -> None:
        """A probe ended without an answer either way (interrupted): the next call probes."""
        with self._lock:
            self._probing = False

    def probe_now(self) -> None:
        """Let the next call probe MLflow whatever is left of the cool-off."""
        with self._lock:
            if self._down_since is not None and not self._probing:
                self._probe_at = self.monotonic()
