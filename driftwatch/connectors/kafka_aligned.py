"""A Kafka source's polls lined up in event time, pausing the partitions that are ahead.

The records of each poll are merged with what earlier polls left held in a
:class:`~driftwatch.connectors.kafka_align.PartitionAligner` (as a replay merges its
files); the records that may leave are handed out in that order, and the positions
reported cover only those. A partition holding a poll's worth is paused so that the ones
behind get the fetches, and resumed once it holds less (unless it is held for the schema
registry). :func:`unpark` works around kafka-python losing a resumed partition.

:class:`AlignedPolls` is a part of :class:`~driftwatch.connectors.kafka.KafkaSource`
(a mixin): the attributes it declares are the source's, set up in its ``__init__``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from driftwatch.clock import Clock
from driftwatch.connectors.base import Polled
from driftwatch.connectors.kafka_align import PartitionAligner
from driftwatch.connectors.kafka_decoding import Piece
from driftwatch.connectors.kafka_hold import PartitionHolds
from driftwatch.connectors.kafka_offsets import tp_key
from driftwatch.connectors.kafka_records import Fetched
from driftwatch.connectors.kafka_stats import KafkaSourceStats

try:
    from kafka.errors import KafkaError
except ImportError:  # pragma: no cover - depends on the install
    KafkaError = Exception

__all__ = ["AlignedPolls", "unpark"]

# the source's messages, under the source's logger name (as before the split)
log = logging.getLogger("driftwatch.connectors.kafka")


def unpark(consumer: Any) -> None:
    """Let kafka-python hand out what it kept for a resumed partition.

    kafka-python 3.0 parks the records it had fetched for a partition when the partition
    is paused, and puts them back in line on resume only while nothing else is in line;
    but a partition's records stay "in line" after they are all handed out (an empty,
    drained holder, never cleared). From then on the resumed partition is neither handed
    out nor fetched again: its consumer stalls. An empty holder is nothing in line, so it
    is cleared before each poll; with another client (or a fixed one) there is nothing to
    do.
    """
    fetcher = getattr(consumer, "_fetcher", None)
    if fetcher is None or not getattr(fetcher, "_paused_partition_records", None):
        return
    held = getattr(fetcher, "_next_partition_records", None)
    if held is not None and not held:
        fetcher._next_partition_records = None


class AlignedPolls:
    """Event-time alignment of a Kafka source's partitions (module docstring)."""

    stats: KafkaSourceStats
    _clock: Clock
    _aligner: PartitionAligner | None
    _positions: dict[Any, int]  # TopicPartition -> next offset our state covers
    _fetched: dict[Any, int]  # TopicPartition -> next offset fetched
    _assigned: set[Any]
    _paused: set[Any]
    _realign: set[str]  # partitions whose held records to drop
    _stalled: list[str]
    _more_ready: bool  # the aligner's last take stopped at max_records
    _stream_names: list[str]
    _stream_ix: dict[str, int]
    _topic_rank: dict[str, int]
    _holds: PartitionHolds
    _decoded: Callable[[Mapping[Any, Fetched], Polled], list[tuple[str, Piece]]]

    def _aligned(self, records: Mapping[Any, Fetched], consumer: Any,
                 max_records: int) -> Polled:
        """A poll's records merged in event time with what earlier polls left held
        (:mod:`~driftwatch.connectors.kafka_align`): the records that may leave, in that
        order, one batch per stream, and positions that cover only those."""
        aligner = self._aligner
        assert aligner is not None
        if self._realign:  # sought or reassigned since: read again from their positions
            aligner.forget(self._realign)
            self._realign = set()
        now = self._clock.monotonic()
        polled = Polled()
        for stream, piece in self._decoded(records, polled):
            tp = piece.tp
            aligner.add(piece.key, rank=self._rank(tp), stream=self._stream_ix[stream],
                        batch=piece.batch, bad=piece.bad, start=piece.start, end=piece.end,
                        now=now)
            self._fetched[tp] = piece.end
        # what the consumer has paused: kafka-python keeps a pause across a rebalance
        # that leaves the partition here, where this source dropped what it held
        self._paused = set(consumer.paused()) & self._assigned
        behind = {}
        for tp in self._assigned:
            behind[tp_key(tp.topic, tp.partition)] = self._is_behind(consumer, tp)
        aligner.behind(behind, now=now, paused=self._paused_keys())
        stalled = aligner.stalled()
        if stalled != self._stalled:
            new = sorted(set(stalled) - set(self._stalled))
            if new:
                log.warning("event-time alignment: %s behind but fetched nothing for %.0fs; "
                            "the other partitions no longer wait for it (its records may "
                            "count as late)", ", ".join(new), aligner.stall_s)
            self._stalled = stalled
        taken = aligner.take(max_records)
        self._more_ready = sum(len(b) for _, b in taken.batches) + len(taken.bad) >= max_records
        names = self._stream_names
        lut = np.full(len(names), -1, dtype=np.intp)
        for k, (ix, _) in enumerate(taken.batches):
            lut[ix] = k
        polled.batches = [b for _, b in taken.batches]
        polled.order = lut[taken.order[taken.order >= 0]] if taken.batches else None
        polled.bad = taken.bad
        by_key = {tp_key(tp.topic, tp.partition): tp for tp in self._assigned}
        for key, offset in aligner.positions().items():
            tp = by_key.get(key)
            if tp is not None:
                polled.positions[key] = self._positions[tp] = offset
        self._pause_full(consumer, max_records)
        self.stats.held = aligner.n_held
        return polled

    def _is_behind(self, consumer: Any, tp: Any) -> bool:
        """The broker holds records of ``tp`` this consumer has not fetched (True while
        that is not known: no fetch answered yet)."""
        try:
            end = consumer.highwater(tp)
            if end is None:
                return True
            at = self._fetched.get(tp)
            return (consumer.position(tp) if at is None else at) < end
        except (AssertionError, KafkaError, ValueError):  # not assigned (a rebalance)
            return False

    def _pause_full(self, consumer: Any, max_records: int) -> None:
        """Stop fetching partitions that hold a poll's worth (they are ahead in event time;
        the ones behind get the fetches), and fetch again once they hold less."""
        assert self._aligner is not None
        full, free = [], []
        for tp in self._assigned:
            held = self._aligner.held(tp_key(tp.topic, tp.partition))
            if held >= max_records and tp not in self._paused:
                full.append(tp)
            elif held < max_records and tp in self._paused:
                free.append(tp)
        if full:
            consumer.pause(*full)
            self._paused.update(full)
        held = set(self._holds.paused())  # paused until the registry answers
        free = [tp for tp in free if tp not in held]
        if free:
            consumer.resume(*free)
            self._paused.difference_update(free)

    def _paused_keys(self) -> set[str]:
        return {tp_key(tp.topic, tp.partition) for tp in self._paused}

    def _rank(self, tp: Any) -> int:
        """Ties in event time: streams in the connector's order, then topics, then
        partitions (as a replay orders streams, then files)."""
        return self._topic_rank[tp.topic] * (1 << 24) + int(tp.partition)
