"""The first records of each Kafka stream, kept to check the connector's paths against.

A replay probes the first records of its files before reading them
(:mod:`~driftwatch.connectors.probe`): a mapped path that matches nothing (a mistyped
``applicant.incme``) makes every value of that feature missing, and the user is told so at
once. A Kafka stream has no file to look at first, so the source keeps the first
:data:`~driftwatch.connectors.probe.SAMPLE` messages of each stream as they arrive (parsed
JSON objects, or an Avro stream's records; anything else is skipped) and hands each
stream's sample out once: when it is full, or ``wait_s`` after its first message when
traffic is too thin to fill it. Then it keeps nothing more.

>>> s = FirstRecords(["predictions", "outcomes"], n=2, wait_s=60.0)
>>> s.keep("predictions", [b'{"id": 1}', b'not json', b'{"id": 2}', b'{"id": 3}'], now=0.0)
>>> s.take(now=1.0)
{'predictions': [{'id': 1}, {'id': 2}]}
>>> s.keep("outcomes", [b'{"id": 1}'], now=5.0)
>>> s.take(now=10.0), s.take(now=65.0)
({}, {'outcomes': [{'id': 1}]})
>>> s.done
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import orjson

from driftwatch.connectors.jsonblock import registry_json
from driftwatch.errors import SourceError
from driftwatch.jsonloads import loads

__all__ = ["FirstRecords"]


class FirstRecords:
    """Up to ``n`` parsed records per stream, handed out once (module docstring)."""

    def __init__(self, streams: Iterable[str], *, n: int, wait_s: float) -> None:
        self.n = n
        self.wait_s = wait_s
        self._records: dict[str, list[dict[str, Any]]] = {s: [] for s in streams}
        self._since: dict[str, float] = {}

    @property
    def done(self) -> bool:
        """Every stream's sample was handed out: nothing more is kept."""
        return not self._records

    def wants(self, stream: str) -> bool:
        recs = self._records.get(stream)
        return recs is not None and len(recs) < self.n

    def keep(self, stream: str, payloads: Sequence[Any], *, now: float,
             read: Callable[[bytes], Any] | None = None) -> None:
        """Parse payloads of ``stream`` until its sample is full; ``read`` reads one payload
        instead of JSON (an Avro stream's reader), raising SourceError when it cannot."""
        recs = self._records.get(stream)
        if recs is None:
            return
        for payload in payloads:
            if len(recs) >= self.n:
                break
            try:
                rec = loads(registry_json(payload)) if read is None else read(payload)
            except (orjson.JSONDecodeError, TypeError, SourceError):
                continue
            if isinstance(rec, dict):
                recs.append(rec)
                self._since.setdefault(stream, now)

    def take(self, *, now: float) -> dict[str, list[dict[str, Any]]]:
        """Each stream's sample that is ready (full, or ``wait_s`` since its first record),
        once; an empty dict when none is."""
        out = {}
        for stream, recs in list(self._records.items()):
            since = self._since.get(stream)
            if len(recs) >= self.n or (since is not None and now - since >= self.wait_s):
                out[stream] = recs
                del self._records[stream]
        return out
