"""The co-partitioning rule, checked on the records a group member reads.

A join stays on one instance only when an event's outcome lands on the partition its
prediction is on: both topics keyed the same way (by the event id, say) and partitioned
by the same partitioner. Partition counts are compared at start
(:func:`co_partitioned`); :class:`KeyCheck` checks the records themselves: for an event
seen on both topics, its two records must carry the same Kafka key and sit on the same
partition, and no record may lack a key (the producer then picks any partition). The
first ``limit`` events of each stream are remembered and every record is checked against
the other stream's, until ``pairs`` events have been seen on both (or ``4 * limit``
records read); then the memory is dropped and nothing more is checked.

>>> check = KeyCheck(limit=10, pairs=5)
>>> check.see("predictions", "credit.p", 3, [b"a1", b"a2"], ["a1", "a2"])
>>> check.see("outcomes", "credit.o", 3, [b"a1"], ["a1"])
>>> check.see("outcomes", "credit.o", 4, [b"a2"], ["a2"])
Traceback (most recent call last):
...
driftwatch.errors.ServiceError: group: event 'a2' is on partition 4 of topic 'credit.o' but \
on partition 3 of topic 'credit.p'; outcomes must be co-partitioned with their predictions \
(both topics keyed by the event id, with the same partitioner)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from driftwatch.errors import ServiceError

__all__ = ["KeyCheck", "co_partitioned"]

log = logging.getLogger(__name__)

_RULE = ("outcomes must be co-partitioned with their predictions (both topics keyed by "
         "the event id, with the same partitioner)")


class KeyCheck:
    """Keys and partitions of the first events of each stream (see the module doc)."""

    def __init__(self, *, limit: int = 100_000, pairs: int = 1_000) -> None:
        self.limit = limit
        self.pairs = pairs
        #: records checked: past ``4 * limit`` checking stops even with fewer pairs seen
        self.checked = 0
        #: stream -> event id -> (topic, partition, key)
        self.seen: dict[str, dict[str, tuple[str, int, bytes]]] = {}
        self.matched = 0
        self.done = False

    def see(self, stream: str, topic: str, partition: int, keys: Sequence[bytes | None],
            ids: Iterable[Any]) -> None:
        """Check one partition's records (``keys[i]`` the Kafka key of event ``ids[i]``);
        raises :class:`~driftwatch.errors.ServiceError` at the first that breaks the rule."""
        if self.done:
            return
        mine = self.seen.setdefault(stream, {})
        others = [(s, d) for s, d in self.seen.items() if s != stream]
        for key, raw in zip(keys, ids, strict=True):
            event = str(raw)
            if key is None:
                raise ServiceError(f"group: event {event!r} on partition {partition} of topic "
                                   f"{topic!r} has no key, so its partition is anyone's "
                                   f"guess; {_RULE}")
            for _, other in others:
                there = other.get(event)
                if there is None:
                    continue
                o_topic, o_part, o_key = there
                if o_key != key:
                    raise ServiceError(
                        f"group: event {event!r} is keyed {key!r} on topic {topic!r} but "
                        f"{o_key!r} on topic {o_topic!r}; {_RULE}")
                if o_part != partition:
                    raise ServiceError(
                        f"group: event {event!r} is on partition {partition} of topic "
                        f"{topic!r} but on partition {o_part} of topic {o_topic!r}; {_RULE}")
                self.matched += 1
            if len(mine) < self.limit:
                mine[event] = (topic, partition, key)
        self.checked += len(keys)
        if self.matched >= self.pairs or self.checked >= 4 * self.limit:
            log.info("group: keys and partitions agree on %d events seen on both topics; "
                     "no longer checked", self.matched)
            self.done = True
            self.seen.clear()


def co_partitioned(partitions: Callable[[str], int], topics: dict[str, str]) -> int:
    """The partition count of the predictions topic, once the outcomes topic matches it
    (``partitions(topic)``: its count, 0 when it does not exist).

    >>> co_partitioned({"p": 16, "o": 16}.get, {"predictions": "p", "outcomes": "o"})
    16
    """
    pred = topics.get("predictions")
    if pred is None:
        raise ServiceError("group: the connector has no predictions stream")
    n = partitions(pred)
    if n == 0:
        raise ServiceError(f"group: topic {pred!r} does not exist")
    out = topics.get("outcomes")
    if out is not None:
        k = partitions(out)
        if k != n:
            raise ServiceError(
                f"group: outcomes topic {out!r} has {k} partitions and predictions topic "
                f"{pred!r} has {n}; outcomes must be co-partitioned with their predictions "
                "(same partition count, both keyed by the event id)")
    return n
