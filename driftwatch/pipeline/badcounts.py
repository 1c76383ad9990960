"""Bad records counted: by reason, and the label values no connector list names.

A ``bad_label`` record whose value the stream's connector names on none of its lists
(``bad``, ``good``, ``pending``: another lender's loan state, a final state init's sample
lacked) is counted by stream and value, so a summary can say which value to add and where,
not only that outcomes were rejected. The values kept are bounded: past
:data:`MAX_VALUES` distinct ones a stream's others are counted under :data:`OTHERS`.

>>> from driftwatch.connectors.base import BadRecord
>>> by_reason, unknown = {}, {}
>>> recs = [BadRecord("bad_label", "...", "o.csv", 2, b"", stream="outcomes",
...                   value="Repurchased"), BadRecord("missing_id", "...", "o.csv", 3, b"")]
>>> count_bad(by_reason, unknown, recs + recs[:1])
>>> by_reason, unknown
({'bad_label': 2, 'missing_id': 1}, {'outcomes': {'Repurchased': 2}})
>>> unknown_labels_line("outcomes", {"Repurchased": 2})[:62]
"unknown labels: 'Repurchased' x2 on the outcomes stream are on"
"""

from __future__ import annotations

from collections.abc import Iterable

from driftwatch.connectors.base import BadRecord

__all__ = ["MAX_VALUES", "OTHERS", "count_bad", "unknown_labels_line"]

#: Distinct unknown label values kept per stream (a label column is a handful of texts;
#: past this the feed sends something else, such as free text, and the count says so)
MAX_VALUES = 20
#: The key counting a stream's unknown values past :data:`MAX_VALUES`
OTHERS = "(other values)"


def count_bad(by_reason: dict[str, int], unknown_labels: dict[str, dict[str, int]],
              records: Iterable[BadRecord]) -> None:
    """Add ``records`` to ``by_reason`` (reason -> count) and, for those naming an unknown
    label value, to ``unknown_labels`` (stream -> value -> count)."""
    for rec in records:
        by_reason[rec.reason] = by_reason.get(rec.reason, 0) + 1
        if rec.reason != "bad_label" or rec.value is None:
            continue
        seen = unknown_labels.setdefault(rec.stream, {})
        key = rec.value if rec.value in seen or len(seen) < MAX_VALUES else OTHERS
        seen[key] = seen.get(key, 0) + 1


def unknown_labels_line(stream: str, values: dict[str, int]) -> str:
    """What a summary says of ``stream``'s unknown label ``values`` (value -> records,
    most first): which they are, and the connector key that takes each."""
    items = sorted(values.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{v if v == OTHERS else repr(v)} x{n}" for v, n in items[:5])
    shown += f" and {len(items) - 5} more" if len(items) > 5 else ""
    return (f"unknown labels: {shown} on the {stream} stream are on none of its "
            "connector's label lists (dead-lettered as bad_label): add each to "
            f"streams.{stream}.fields.label bad: or good: if it is an outcome, pending: if "
            "it is no outcome yet")
