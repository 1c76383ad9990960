"""How long an action that needs an unreachable dependency (MLflow) waits before it tries again.

Exponential with a cap: the first retry after ``initial_s``, each next one twice as late,
never later than ``max_s``. Pure: the caller passes ``now`` from its injected clock and
stores the retry time in the outbox, so a restart keeps the schedule.

>>> b = Backoff(initial_s=30.0, max_s=600.0)
>>> [b.delay(n) for n in range(1, 8)]
[30.0, 60.0, 120.0, 240.0, 480.0, 600.0, 600.0]
>>> b.retry_at(1000.0, attempt=2)
1060.0
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """``delay(attempt) = min(initial_s * factor ** (attempt - 1), max_s)``, attempt >= 1."""

    initial_s: float = 30.0
    max_s: float = 600.0
    factor: float = 2.0

    def __post_init__(self) -> None:
        if not (self.initial_s > 0 and self.max_s >= self.initial_s and self.factor >= 1):
            raise ValueError(f"backoff needs 0 < initial <= max and factor >= 1, got {self}")

    def delay(self, attempt: int) -> float:
        """Seconds to wait after the ``attempt``-th failure in a row."""
        n = max(1, int(attempt))
        # the exponent is capped so a long outage cannot overflow the float
        return float(min(self.initial_s * self.factor ** min(n - 1, 64), self.max_s))

    def retry_at(self, now: float, attempt: int) -> float:
        return now + self.delay(attempt)
