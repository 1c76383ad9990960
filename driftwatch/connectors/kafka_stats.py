"""Counters a Kafka source keeps; the metrics module reads them at scrape time.

>>> s = KafkaSourceStats(lag={"t:0": 3, "t:1": 4})
>>> s.lag_total
7
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["KafkaSourceStats"]


@dataclass
class KafkaSourceStats:
    """Counters the metrics module reads; plain numbers, monotonic unless noted."""

    messages_total: int = 0
    bytes_total: int = 0
    bad_total: int = 0
    bad_by_reason: dict[str, int] = field(default_factory=dict)
    dead_letters_total: int = 0  # handed to the dead-letter sink
    dead_letters_pending: int = 0  # gauge: not yet acknowledged by topic or file
    polls_total: int = 0
    poll_errors_total: int = 0
    connect_failures_total: int = 0
    rebalances_total: int = 0
    commits_total: int = 0
    commit_failures_total: int = 0
    commits_deferred_total: int = 0  # skipped while dead letters were not durable
    commit_latency_seconds_sum: float = 0.0
    commit_latency_seconds_last: float = 0.0
    lag: dict[str, int] = field(default_factory=dict)  # gauge per "topic:partition"
    held: int = 0  # gauge: records held for event-time alignment (kafka_align.py)

    @property
    def lag_total(self) -> int:
        return sum(self.lag.values())
