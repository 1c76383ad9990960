"""Where a Kafka source puts messages it could not decode: a topic, or a JSON-lines file.

A dead letter on a topic is the original message bytes with headers saying why and where
from: ``dw-reason``, ``dw-source-topic``, ``dw-source-partition``, ``dw-source-offset`` (and
``dw-stream``). In a file it is one JSON object a line: the kafka recording fields
(:mod:`driftwatch.connectors.recorder`) plus ``reason``, ``detail`` and ``stream``, so a file of
dead letters can be replayed once the decoder is fixed.

Sinks are flushed before the source hands a poll to the run loop, so a checkpoint never
covers a bad record that is not yet kept somewhere.

>>> from driftwatch.connectors.base import BadRecord
>>> bad = BadRecord("invalid_json", "line 1", "predictions", 41, b"{oops", partition=2)
>>> dead_letter_headers(bad)[:2]
[('dw-reason', b'invalid_json'), ('dw-source-topic', b'predictions')]
>>> line = orjson.loads(dead_letter_line(bad))
>>> line["offset"], line["reason"], line["value"]
(41, 'invalid_json', '{oops')
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import orjson

from driftwatch.connectors.base import BadRecord
from driftwatch.connectors.kafka_slices import wait_in_slices
from driftwatch.connectors.recorder import encode_payload, open_recording

try:
    from kafka.errors import KafkaTimeoutError
except ImportError:  # pragma: no cover - depends on the install
    KafkaTimeoutError = TimeoutError

__all__ = [
    "DeadLetterFile",
    "DeadLetterSink",
    "DeadLetterTopic",
    "dead_letter_headers",
    "dead_letter_line",
    "dead_letter_sink",
]

log = logging.getLogger(__name__)


def dead_letter_headers(bad: BadRecord) -> list[tuple[str, bytes]]:
    """Kafka headers that say why a message was dead-lettered and where it came from."""
    part = "" if bad.partition is None else str(bad.partition)
    return [
        ("dw-reason", bad.reason.encode()),
        ("dw-source-topic", bad.source.encode()),
        ("dw-source-partition", part.encode()),
        ("dw-source-offset", str(bad.position).encode()),
        ("dw-stream", bad.stream.encode()),
    ]


def dead_letter_line(bad: BadRecord) -> bytes:
    """One JSON line for a dead-letter file (no newline)."""
    value, encoding = encode_payload(bad.raw)
    obj: dict[str, Any] = {
        "topic": bad.source,
        "partition": bad.partition,
        "offset": bad.position,
        "timestamp": None,
        "key": None,
        "value": value,
        "reason": bad.reason,
        "detail": bad.detail,
        "stream": bad.stream,
    }
    if encoding:
        obj["value_encoding"] = encoding
    return orjson.dumps(obj)


class DeadLetterSink(Protocol):
    """Takes bad records; :meth:`flush` makes them durable and says whether all are."""

    @property
    def pending(self) -> int: ...

    def publish(self, records: Sequence[BadRecord]) -> None: ...

    def flush(self, timeout_s: float) -> bool: ...

    def close(self) -> None: ...


class DeadLetterFile:
    """Appends dead letters to a JSON-lines file (gzip when it ends in ``.gz``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._buffer: list[bytes] = []
        self.written = 0

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def publish(self, records: Sequence[BadRecord]) -> None:
        self._buffer += [dead_letter_line(b) + b"\n" for b in records]

    def flush(self, timeout_s: float = 0.0) -> bool:
        if not self._buffer:
            return True
        with open_recording(self.path, "ab") as f:  # a gzip member per flush: still one stream
            f.write(b"".join(self._buffer))
            f.flush()
            fileno = getattr(f, "fileno", None)
            if fileno is not None:
                os.fsync(fileno())
        self.written += len(self._buffer)
        self._buffer.clear()
        return True

    def close(self) -> None:
        self.flush()


class DeadLetterTopic:
    """Produces dead letters to a topic; what the topic refuses goes to ``fallback``, if any.

    ``make_producer`` builds a kafka-python ``KafkaProducer``; it is called on the first dead
    letter (and again after a failure), so a source with clean input never opens one.
    """

    def __init__(
        self,
        topic: str,
        make_producer: Callable[[], Any],
        fallback: DeadLetterFile | None = None,
    ) -> None:
        self.topic = topic
        self._make_producer = make_producer
        self._producer: Any = None
        self._fallback = fallback
        self._unsent: list[BadRecord] = []
        self._in_flight: list[tuple[BadRecord, Any]] = []
        self.written = 0
        self.failed = 0
        self.close_timeout_s = 5.0  # the source lowers it on shutdown
        self.stopping = False  # shutdown has begun: a flush under way ends within a slice

    @property
    def pending(self) -> int:
        return (
            len(self._unsent)
            + len(self._in_flight)
            + (self._fallback.pending if self._fallback else 0)
        )

    def publish(self, records: Sequence[BadRecord]) -> None:
        self._unsent += records
        self._send()

    def _send(self) -> None:
        if not self._unsent:
            return
        if self._producer is None:
            try:
                self._producer = self._make_producer()
            except Exception as exc:  # the cluster may be away: keep them, retry at flush
                log.warning("dead-letter producer unavailable: %s", type(exc).__name__)
                return
        unsent, self._unsent = self._unsent, []
        for i, bad in enumerate(unsent):
            try:
                fut = self._producer.send(
                    self.topic, value=bad.raw, headers=dead_letter_headers(bad)
                )
            except Exception as exc:
                log.warning("dead-letter send failed: %s", type(exc).__name__)
                self._unsent = unsent[i:]
                return
            self._in_flight.append((bad, fut))

    def flush(self, timeout_s: float) -> bool:
        """Wait for the topic to acknowledge; True when every dead letter is kept somewhere."""
        self._send()
        if self._producer is not None and self._in_flight:
            try:
                wait_in_slices(lambda s: self._producer.flush(timeout=s), timeout_s,
                               lambda: self.stopping, KafkaTimeoutError)
            except Exception as exc:
                log.warning("dead-letter flush failed: %s", type(exc).__name__)
        still: list[tuple[BadRecord, Any]] = []
        for bad, fut in self._in_flight:
            if not fut.is_done:
                still.append((bad, fut))
            elif fut.failed():
                self._unsent.append(bad)
                self.failed += 1
            else:
                self.written += 1
        self._in_flight = still
        if self._unsent and self._fallback is not None:
            self._fallback.publish(self._unsent)
            self._unsent = []
        if self._fallback is not None:
            self._fallback.flush()
        return self.pending == 0

    def close(self) -> None:
        if self._producer is not None:
            self._producer.close(timeout=self.close_timeout_s)
            self._producer = None
        # what the topic never acknowledged is kept in the fallback file (at least once)
        unacked = [bad for bad, fut in self._in_flight if not fut.is_done or fut.failed()]
        self._in_flight = []
        if self._fallback is not None:
            if self._unsent or unacked:
                self._fallback.publish(self._unsent + unacked)
                self._unsent = []
            self._fallback.close()


def dead_letter_sink(
    topic: str | None, path: str | Path | None, make_producer: Callable[[], Any]
) -> DeadLetterSink | None:
    """The topic (with the file as its fallback), else the file, else None."""
    file = DeadLetterFile(path) if path else None
    if topic is None:
        return file
    return DeadLetterTopic(topic, make_producer, fallback=file)
