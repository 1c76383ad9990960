"""Getting a Kafka source's consumer: built with backoff, and its topics looked up.

:class:`ConsumerStarter` builds the consumer while the cluster is away at start, trying
again with exponential backoff (``retry_backoff_s`` doubling up to
``retry_backoff_max_s``) and giving up after ``give_up_after_s`` when that is set; settings
the client refuses (:data:`SETTINGS_ERRORS`) stop the start at once.
:class:`TopicCheck` looks the subscribed topics up on the cluster, so a misspelt topic
reads as "not found", not as a healthy, idle consumer. The source subscribes the consumer
and owns it; these keep the bookkeeping around it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from driftwatch.clock import Clock
from driftwatch.connectors.kafka_client import topic_hint
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.kafka_stats import KafkaSourceStats
from driftwatch.errors import SourceError

try:
    from kafka.errors import KafkaConfigurationError, KafkaError
except ImportError:  # pragma: no cover - depends on the install
    KafkaError = Exception
    KafkaConfigurationError = ValueError

#: what the client raises for settings it refuses (an unknown key, a value of the wrong
#: type or out of its range): no retry mends them, so the start stops with the client's
#: words instead of retrying as if the cluster were away
SETTINGS_ERRORS: tuple[type[BaseException], ...] = (
    KafkaConfigurationError, TypeError, ValueError, AssertionError)

__all__ = ["SETTINGS_ERRORS", "TOPIC_CHECK_S", "ConsumerStarter", "TopicCheck", "consumer_config"]

# the source's messages, under the source's logger name (as before the split)
log = logging.getLogger("driftwatch.connectors.kafka")

# how often the subscribed topics are looked up on the cluster while one of them is missing
TOPIC_CHECK_S = 10.0


def consumer_config(settings: KafkaSourceSettings, extra: Mapping[str, Any],
                    timeout_s: float) -> dict[str, Any]:
    """The consumer's configuration: a group member that never auto-commits nor creates
    topics, tuned by the connector, then ``extra`` on top."""
    s = settings
    cfg: dict[str, Any] = s.connection.client_config()
    cfg.update(
        group_id=s.connection.group_id,
        enable_auto_commit=False,
        allow_auto_create_topics=False,  # a misspelt topic must not spring into being
        auto_offset_reset=s.auto_offset_reset,
        isolation_level=s.isolation_level,
        fetch_max_wait_ms=s.fetch_max_wait_ms,
        max_partition_fetch_bytes=s.max_partition_fetch_bytes,
        session_timeout_ms=s.session_timeout_ms,
        reconnect_backoff_max_ms=s.reconnect_backoff_max_ms,
        bootstrap_timeout_ms=max(1000, int(timeout_s * 1000)),
    )
    cfg.update(extra)
    return cfg


class ConsumerStarter:
    """Builds the consumer, waiting out the backoff between failed tries (module docstring).

    ``make_consumer`` takes the consumer's configuration as keyword arguments.
    """

    def __init__(self, settings: KafkaSourceSettings, extra: Mapping[str, Any],
                 make_consumer: Callable[..., Any], *, clock: Clock,
                 stats: KafkaSourceStats) -> None:
        self._settings = settings
        self._extra = dict(extra)
        self._make = make_consumer
        self._clock = clock
        self._stats = stats
        self._backoff = settings.retry_backoff_s
        self._next_attempt = float("-inf")
        self._unavailable_since: float | None = None
        self._wake = threading.Event()

    def start(self, timeout_s: float) -> Any:
        """A new consumer, or None while the cluster cannot be reached (after waiting up to
        ``timeout_s`` for the backoff to run out). Raises :class:`SourceError` once it has
        been unreachable for ``give_up_after_s``. Call :meth:`started` once it is set up."""
        wait = self._next_attempt - self._clock.monotonic()
        if wait > 0:
            self._wake.wait(min(wait, timeout_s))
            return None
        try:
            return self._make(**consumer_config(self._settings, self._extra, timeout_s))
        except SETTINGS_ERRORS as exc:
            said = str(exc) or "no message"
            raise SourceError(
                f"the Kafka client refused the connector's settings ({type(exc).__name__}: "
                f"{said}); check the source section's connection and tuning keys"
            ) from exc
        except Exception as exc:  # kafka errors, DNS, TLS files: all mean "not yet"
            now = self._clock.monotonic()
            self._stats.connect_failures_total += 1
            if self._unavailable_since is None:
                self._unavailable_since = now
            limit = self._settings.give_up_after_s
            if limit is not None and now - self._unavailable_since >= limit:
                raise SourceError(
                    f"Kafka unreachable for {now - self._unavailable_since:.0f}s "
                    f"({type(exc).__name__}); giving up"
                ) from exc
            log.warning("Kafka not reachable at %s (%s); retrying in %.1fs",
                        self._settings.connection.address(),
                        type(exc).__name__, self._backoff)  # fmt: skip
            self._next_attempt = now + self._backoff
            self._backoff = min(self._backoff * 2, self._settings.retry_backoff_max_s)
            return None

    def started(self) -> None:
        """The consumer is up: a later outage at start begins with the first backoff."""
        self._backoff = self._settings.retry_backoff_s
        self._unavailable_since = None

    def wake(self) -> None:
        """End a wait for the backoff now (the source is closing)."""
        self._wake.set()


class TopicCheck:
    """The subscribed topics looked up on the cluster: at the first connection, then every
    ``TOPIC_CHECK_S`` while one is missing.

    A misspelt topic is never created (no auto-create) and kafka-python just assigns
    nothing, so without this a wrong name reads as a healthy, idle consumer. The consumer
    stays subscribed: a topic created later is picked up by its own metadata refresh.
    """

    def __init__(self, topics: Iterable[str], *, clock: Clock) -> None:
        self._topics = list(topics)
        self._clock = clock
        self.missing: tuple[str, ...] = ()  # subscribed, absent from the cluster
        self._checked_at = float("-inf")
        self._known = False  # every subscribed topic was seen on the cluster once

    def check(self, consumer: Any) -> None:
        """Look the topics up if it is time to; updates :attr:`missing`."""
        now = self._clock.monotonic()
        if self._known or now - self._checked_at < TOPIC_CHECK_S:
            return
        self._checked_at = now
        try:
            on_cluster = set(consumer.topics())
        except KafkaError as exc:
            log.warning("listing Kafka topics failed: %s", type(exc).__name__)
            return
        missing = tuple(sorted(t for t in self._topics if t not in on_cluster))
        if missing and missing != self.missing:
            log.error("Kafka topic(s) not found on the cluster: %s; nothing is read from them "
                      "until they exist (the connector's `topic:`)",
                      ", ".join(topic_hint(t, on_cluster) for t in missing))
        elif not missing and self.missing:
            log.info("Kafka topic(s) now exist: %s", ", ".join(self.missing))
        self.missing = missing
        self._known = not missing
