"""Streams that read the same time field read it on one clock.

An offset clock (``event_time: {path: TransactionDT, unit: s, origin: ...}``: numbers
counted from an instant the data does not say) is declared per stream. Where the
predictions and the outcomes both carry the field, an ``origin:`` added to one stream and
not the other puts their times decades apart: every outcome then lands far from its
prediction, and expires or waits as an orphan, with nothing said of the clocks. A
connector whose streams map one field name (the last segment of its path) as numbers in
the same unit with different origins is refused at that stream's ``event_time``.

>>> from driftwatch.connectors.config import parse_connector
>>> text = '''
... apiVersion: driftwatch/v1
... kind: Connector
... metadata: {name: ieee}
... source:
...   kind: file
...   streams:
...     predictions:
...       paths: [p.csv]
...       fields:
...         event_id: TransactionID
...         event_time: {path: TransactionDT, unit: s, origin: "2017-11-30T00:00:00Z"}
...         score: score
...     outcomes:
...       paths: [o.csv]
...       fields:
...         event_id: TransactionID
...         event_time: {path: TransactionDT, unit: s}
...         label: {path: isFraud, bad: [1], good: [0]}
... '''
>>> parse_connector(text, file="c.yaml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ConnectorError: c.yaml:18:21: stream 'outcomes' reads TransactionDT ...
"""

from __future__ import annotations

from collections.abc import Sequence

from driftwatch.connectors.mapping import StreamMapping
from driftwatch.errors import ConnectorError
from driftwatch.yamlio import LocatedDoc

__all__ = ["one_clock"]


def _numbers(s: StreamMapping) -> tuple[str, str] | None:
    """The field name and unit of a stream that reads its time as numbers in its payload
    (None for text times, arrival, Kafka timestamps and record numbers); ``auto`` is
    seconds or milliseconds, told by the values."""
    t = s.event_time
    if t.source != "payload" or t.path is None or t.format is not None or t.unit == "iso":
        return None
    return t.path.text.rsplit(".", 1)[-1], t.read_unit


def _said(m: StreamMapping) -> str:
    o = m.event_time.origin
    return f"origin {o}" if o is not None else "no origin (epoch time)"


def one_clock(doc: LocatedDoc, streams: Sequence[StreamMapping]) -> None:
    """Refuse two streams that read the same time field as numbers in the same unit (or
    one of them ``auto``) from different origins (see the module doc), at the second
    one's ``event_time``."""
    read = [(s, k) for s in streams if (k := _numbers(s)) is not None]
    for i, (s, (name, unit)) in enumerate(read):
        for first, (name0, unit0) in read[:i]:
            same_unit = unit == unit0 or "auto" in (unit, unit0)
            if name != name0 or not same_unit or \
                    first.event_time.origin == s.event_time.origin:
                continue
            raise doc.error(
                ("source", "streams", s.name, "fields", "event_time"),
                f"stream {s.name!r} reads {name} with {_said(s)}, stream {first.name!r} "
                f"with {_said(first)}: one field on two clocks puts each outcome far from "
                "its prediction", cls=ConnectorError,
                hint=f"give both streams the same origin: (the instant {name} counts from)")
