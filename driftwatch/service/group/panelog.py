"""The pane log: one Kafka topic that carries a group's pane sketches and states.

Every message of one model goes to the same partition of the topic (chosen from the
model's name), so a reader sees them in the order each instance wrote them: a pane
before the mark that covers it, a partition's state after the panes it has closed.
Keys are ``kind/partition/pane/model`` and values compressed JSON; keys
repeat only for a newer version of the same thing (a mark, a state, a re-published
pane), so the topic can be compacted; the decider writes a tombstone for each pane it has
merged, so compaction also drops those.

==========================  ==============================================================
key                          value
==========================  ==============================================================
``pane/<p>/<k>/m``          ``{"sketch": ...}``: pane k of partition p (``"segments"``:
                            the segment values and a sketch per segment, with a
                            segmented policy)
``cohorts/<p>/<k>/m``       ``{"cohorts": [...]}``: cohort rows landed in pane k of p
``labelled/<p>/<k>/m``      ``{"rows": ...}``: labelled rows (features, score, outcome)
                            landed in pane k of p
``mark/<p>/-/m``            ``{"frontier": f}``: every pane of partition p below f is out
``state/<p>/-/m``           open panes, joiner, watermarks and the offsets they cover
``leader/-/-/m``            the decider's window ring, engine state, merge progress,
                            cohorts and labelled rows
``outputs/-/<w>/m``         the same after the batch from window w, with that batch's
                            timeline lines and the member writing them (``outputs.py``)
==========================  ==============================================================
"""

from __future__ import annotations

import json
import logging
import zlib
from dataclasses import dataclass
from typing import Any

from driftwatch.connectors.kafka_client import build_client
from driftwatch.errors import SourceError
from driftwatch.windows.segments import SegmentCoder
from driftwatch.windows.sketch import Sketch, SketchLayout

try:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import KafkaError, TopicAlreadyExistsError
except ImportError:  # pragma: no cover - depends on the install
    KafkaConsumer = KafkaProducer = None
    KafkaError = Exception

__all__ = ["LogEntry", "PaneLog", "decode_value", "encode_value", "make_key", "model_partition",
           "pane_segments", "pane_value", "parse_key"]

log = logging.getLogger(__name__)

#: The largest message of the log: a partition's state (its joiner's waiting predictions)
#: and a batch of decided windows with their timeline lines outgrow Kafka's 1 MB default.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class LogEntry:
    """One message of the log: ``kind`` is pane, mark, state, leader or outputs;
    ``deleted`` for a tombstone (``value`` is then empty)."""

    model: str
    kind: str
    partition: int | None
    pane: int | None
    value: dict[str, Any]
    deleted: bool = False


def model_partition(model: str, n: int) -> int:
    """The log partition that carries every message of ``model``."""
    return zlib.crc32(model.encode()) % n


def encode_value(value: dict[str, Any]) -> bytes:
    """Compressed JSON of the sketches' JSON-safe form (``Sketch.to_dict()``); the stdlib
    encoder keeps NaN and infinities (moments of an empty pane).

    >>> decode_value(encode_value({"n": 3, "mean": float("nan")}))["n"]
    3
    """
    return zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 1)


def decode_value(raw: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(raw))


def pane_value(sketch: Sketch, segments: list[Sketch] | None = None, *,
               coder: SegmentCoder | None = None, provisional: bool = False
               ) -> dict[str, Any]:
    """The value of a ``pane`` message: its sketch, its sketch per segment of ``coder``
    when the policy has segments, and ``provisional`` for an idle partition's copy of an
    open pane."""
    out: dict[str, Any] = {"sketch": sketch.to_dict()}
    if segments is not None and coder is not None:
        out["segments"] = {**coder.to_dict(), "sketches": [s.to_dict() for s in segments]}
    if provisional:
        out["provisional"] = True
    return out


def pane_segments(layout: SketchLayout, value: dict[str, Any],
                  coder: SegmentCoder | None) -> list[Sketch] | None:
    """The segment sketches of a ``pane`` message's value when they are ``coder``'s
    segments; None otherwise (none, or a pane sketched on other segment values, left in
    the log by a run before the reference changed: its segments count as empty, as a
    checkpoint's do in one process)."""
    segs = value.get("segments")
    if coder is None or segs is None or SegmentCoder.from_dict(segs) != coder:
        return None
    return [Sketch.from_dict(layout, s) for s in segs["sketches"]]


def make_key(model: str, kind: str, partition: int | None = None,
             pane: int | None = None) -> bytes:
    """``kind/partition/pane/model`` (``-`` for a field the kind has not).

    >>> make_key("credit", "pane", 3, 19000)
    b'pane/3/19000/credit'
    >>> parse_key(make_key("credit", "leader"))
    ('credit', 'leader', None, None)
    """
    show = ["-" if x is None else str(x) for x in (partition, pane)]
    return "/".join((kind, *show, model)).encode()


def parse_key(key: bytes) -> tuple[str, str, int | None, int | None]:
    """``(model, kind, partition, pane)`` of a key written by :func:`make_key`."""
    kind, part, pane, model = key.decode().split("/", 3)
    return model, kind, None if part == "-" else int(part), None if pane == "-" else int(pane)


class PaneLog:
    """Producer and reader of one model's messages in the pane log topic."""

    def __init__(self, client_config: dict[str, Any], topic: str, model: str) -> None:
        if KafkaConsumer is None:  # pragma: no cover
            raise SourceError("a consumer group needs kafka-python: pip install "
                              "'driftwatch[kafka]'")
        self.topic = topic
        self.model = model
        self._cfg = dict(client_config)
        self._ensure_topic()
        self.reader = build_client(KafkaConsumer, **self._cfg, group_id=None,
                                   enable_auto_commit=False, auto_offset_reset="earliest",
                                   max_partition_fetch_bytes=MAX_MESSAGE_BYTES)
        parts = self.reader.partitions_for_topic(topic) or {0}
        self.tp = TopicPartition(topic, model_partition(model, len(parts)))
        self.reader.assign([self.tp])
        self.reader.seek_to_beginning(self.tp)
        self.producer = build_client(KafkaProducer, **self._cfg, acks="all", linger_ms=2,
                                     max_in_flight_requests_per_connection=1,
                                     max_request_size=MAX_MESSAGE_BYTES)
        self._futures: list[Any] = []

    def _ensure_topic(self) -> None:
        admin = build_client(KafkaAdminClient, **self._cfg)
        try:
            admin.create_topics([NewTopic(self.topic, 1, 1, topic_configs={
                "cleanup.policy": "compact", "max.message.bytes": str(MAX_MESSAGE_BYTES)})])
            log.info("created the pane log topic %s (compacted)", self.topic)
        except TopicAlreadyExistsError:
            pass
        finally:
            admin.close()

    def partitions(self, topic: str) -> int:
        """How many partitions ``topic`` has (0: it does not exist)."""
        return len(self.reader.partitions_for_topic(topic) or ())

    # -- writing -------------------------------------------------------------------------
    def put(self, kind: str, value: dict[str, Any], *, partition: int | None = None,
            pane: int | None = None) -> None:
        self._futures.append(self.producer.send(
            self.topic, key=make_key(self.model, kind, partition, pane),
            value=encode_value(value),
            partition=self.tp.partition))

    def forget(self, partition: int | None, pane: int, kind: str = "pane") -> None:
        """A tombstone (for a merged pane, its cohort rows, a batch's written outputs):
        compaction then drops the key from the topic."""
        self._futures.append(self.producer.send(
            self.topic, key=make_key(self.model, kind, partition, pane), value=None,
            partition=self.tp.partition))

    def flush(self, timeout_s: float = 30.0) -> None:
        """Block until everything put so far is acknowledged by every in-sync replica."""
        self.producer.flush(timeout=timeout_s)
        futures, self._futures = self._futures, []
        for f in futures:
            f.get(timeout=timeout_s)  # raises the KafkaError of a failed send

    # -- reading -------------------------------------------------------------------------
    def read(self, *, to_end: bool = False, timeout_s: float = 30.0) -> list[LogEntry]:
        """Messages of this model since the last read; with ``to_end``, every message
        written before the call (a restore must see the last state)."""
        end = self.reader.end_offsets([self.tp])[self.tp] if to_end else None
        out: list[LogEntry] = []
        waited = 0
        while True:
            got = self.reader.poll(timeout_ms=0 if end is None else 200, max_records=5_000)
            for recs in got.values():
                for r in recs:
                    model, kind, part, pane = parse_key(r.key)
                    if model != self.model:
                        continue
                    if r.value is None:
                        out.append(LogEntry(model, kind, part, pane, {}, deleted=True))
                    else:
                        out.append(LogEntry(model, kind, part, pane, decode_value(r.value)))
            if end is None or self.reader.position(self.tp) >= end:
                return out
            waited += 1
            if waited * 0.2 > timeout_s:
                raise SourceError(f"the pane log {self.topic} could not be read to its end "
                                  f"within {timeout_s:.0f}s")

    def rewind(self) -> None:
        """Read from the beginning again (a new decider rebuilds what is pending)."""
        self.reader.seek_to_beginning(self.tp)

    def close(self) -> None:
        try:
            self.producer.flush(timeout=10)
            self.producer.close(timeout=10)
        except KafkaError as exc:
            log.warning("closing the pane log producer failed: %s", type(exc).__name__)
        self.reader.close()
