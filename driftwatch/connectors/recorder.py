"""Record what Kafka delivers to a file that the file source replays unchanged.

The *kafka recording* format: JSON lines (gzip when the path ends in ``.gz``), one object per
message, in the order each partition delivered them::

    {"topic": "predictions", "partition": 0, "offset": 41, "timestamp": 1717171717000,
     "key": "app-17", "value": "{\\"id\\": \\"app-17\\", \\"score\\": 0.12}"}

* ``topic``, ``partition``, ``offset``: where the message was in Kafka.
* ``timestamp``: the Kafka message timestamp in epoch **milliseconds**, as Kafka stores it
  (``null`` when the message has none).
* ``key`` / ``value``: the raw bytes as UTF-8 text; ``null`` for an absent key or a tombstone.
  Bytes that are not valid UTF-8 are written as base64 and flagged with
  ``"key_encoding": "base64"`` / ``"value_encoding": "base64"``.

The file source decodes ``value`` with the same field map as the live Kafka source, so a
recording replays exactly what production saw, bad messages included.

>>> encode_payload(b'{"a": 1}')
('{"a": 1}', None)
>>> encode_payload(b"\\xff\\x00")
('/wA=', 'base64')
>>> decode_payload('/wA=', 'base64')
b'\\xff\\x00'
>>> recording_line("t", 0, 5, 1000, None, b"x")
b'{"topic":"t","partition":0,"offset":5,"timestamp":1000,"key":null,"value":"x"}'
"""

from __future__ import annotations

import base64
import binascii
import gzip
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from driftwatch.clock import Clock, SystemClock
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.errors import SourceError

__all__ = [
    "RecordingSummary",
    "decode_payload",
    "encode_payload",
    "open_recording",
    "record",
    "recording_line",
]


def encode_payload(raw: bytes | None) -> tuple[str | None, str | None]:
    """``(text, encoding)``: UTF-8 text and ``None``, or base64 and ``"base64"``."""
    if raw is None:
        return None, None
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii"), "base64"


def decode_payload(text: str | None, encoding: str | None = None) -> bytes | None:
    """Inverse of :func:`encode_payload`: the original bytes."""
    if text is None:
        return None
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error as exc:
            raise SourceError(f"invalid base64 payload in recording: {exc}") from exc
    return text.encode("utf-8")


def recording_line(
    topic: str,
    partition: int,
    offset: int,
    timestamp_ms: int | None,
    key: bytes | None,
    value: bytes | None,
) -> bytes:
    """One line of a kafka recording (without the newline)."""
    obj: dict[str, Any] = {
        "topic": topic,
        "partition": partition,
        "offset": offset,
        "timestamp": timestamp_ms if timestamp_ms is not None and timestamp_ms >= 0 else None,
    }
    obj["key"], key_enc = encode_payload(key)
    obj["value"], value_enc = encode_payload(value)
    if key_enc:
        obj["key_encoding"] = key_enc
    if value_enc:
        obj["value_encoding"] = value_enc
    return orjson.dumps(obj)


def open_recording(path: str | Path, mode: str = "ab") -> IO[bytes]:
    """Open a recording (or dead-letter file) for binary writing; gzip when it ends in .gz."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix == ".gz":
        return gzip.open(p, mode)  # type: ignore[return-value]
    return open(p, mode)


@dataclass(frozen=True, slots=True)
class RecordingSummary:
    """What a :func:`record` call wrote."""

    path: str
    messages: int
    bytes: int
    positions: dict[str, int]  # "topic:partition" -> next offset


def record(
    source_settings: KafkaSourceSettings,
    out_path: str | Path,
    *,
    max_messages: int | None = None,
    until_end: bool = True,
    idle_timeout_s: float | None = 30.0,
    from_beginning: bool = True,
    clock: Clock | None = None,
    should_stop: Callable[[], bool] | None = None,
    poll_timeout_s: float = 0.5,
) -> RecordingSummary:
    """Copy the source's topics to ``out_path`` in the kafka recording format.

    Reads without a consumer group (partitions assigned directly, nothing committed), so a
    recording never moves the production group's offsets. Stops at the first of:
    ``max_messages`` written; every partition at the end offset it had when recording began
    (``until_end``); no message for ``idle_timeout_s``; ``should_stop()`` true.
    """
    try:
        from kafka import KafkaConsumer, TopicPartition
    except ImportError as exc:  # pragma: no cover - depends on the install
        msg = "recording Kafka needs kafka-python: pip install 'driftwatch[kafka]'"
        raise SourceError(msg) from exc
    from driftwatch.connectors.kafka_client import connect_client, topic_hint

    clk = clock or SystemClock()
    cfg = source_settings.connection.client_config()
    with ExitStack() as stack:
        consumer = connect_client(
            KafkaConsumer,
            group_id=None,
            enable_auto_commit=False,
            allow_auto_create_topics=False,
            auto_offset_reset="earliest" if from_beginning else "latest",
            # what the daemon on these settings would read: a replay counts the same
            isolation_level=source_settings.isolation_level,
            **cfg,
        )
        stack.callback(consumer.close)
        parts = []
        missing = []
        for t in source_settings.topics:
            ids = consumer.partitions_for_topic(t.name) or set()
            parts += [TopicPartition(t.name, p) for p in sorted(ids)]
            if not ids:
                missing.append(t.name)
        if missing:  # a misspelt topic: named with the nearest one there, never created
            on_cluster = consumer.topics()
            names = ", ".join(topic_hint(name, on_cluster) for name in missing)
            raise SourceError(f"no topic {names} on the cluster; topics there: "
                              f"{', '.join(sorted(on_cluster)) or 'none'}")
        consumer.assign(parts)
        if from_beginning:
            consumer.seek_to_beginning(*parts)
        else:
            consumer.seek_to_end(*parts)
        ends = consumer.end_offsets(parts) if until_end else {}
        out = stack.enter_context(open_recording(out_path, "wb"))
        written = nbytes = 0
        positions = {f"{tp.topic}:{tp.partition}": consumer.position(tp) for tp in parts}
        last_data = clk.monotonic()

        def done() -> bool:
            if max_messages is not None and written >= max_messages:
                return True
            # position(), not the last offset seen: transaction markers also take offsets
            if until_end and all(consumer.position(tp) >= ends.get(tp, 0) for tp in parts):
                return True
            if idle_timeout_s is not None and clk.monotonic() - last_data > idle_timeout_s:
                return True
            return should_stop is not None and should_stop()

        while not done():
            room = None if max_messages is None else max_messages - written
            polled = consumer.poll(timeout_ms=int(poll_timeout_s * 1000), max_records=room)
            if not polled:
                continue
            last_data = clk.monotonic()
            for tp, recs in polled.items():
                for r in recs:
                    line = recording_line(r.topic, r.partition, r.offset, r.timestamp, r.key,
                                          r.value)  # fmt: skip
                    out.write(line + b"\n")
                    written += 1
                    nbytes += len(r.value or b"")
                positions[f"{tp.topic}:{tp.partition}"] = recs[-1].offset + 1
    return RecordingSummary(str(out_path), written, nbytes, positions)
