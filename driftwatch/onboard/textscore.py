"""A score the stream writes as JSON text (``"score": "0.1234"``, a Java service's
BigDecimal or a scoring job that formats its output).

Numeric features written so already read as numbers (the stream's ``numbers_as_text:
true``); the score is looked for among the same readings: a field whose texts all read as
numbers, as the decoder reads them under that flag, is looked at as those numbers, and a
score taken from such a field sets the flag, said on the score's line. Text that is no
number (``"high"``) stays text, so it is never taken for a score.

>>> numbers_in_text(["0.1234", None, "0.9", 0.5])
[0.1234, None, 0.9, 0.5]
>>> numbers_in_text(["0.1", "high"]) is None, numbers_in_text([0.1, 0.2]) is None
(True, True)
>>> text_score_note(["0.1234", "0.9"])
"; written as text in the sample ('0.1234', '0.9'): read as numbers (numbers_as_text: true)"
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

from driftwatch.connectors.columns import numeric
from driftwatch.onboard.roles import present, shown
from driftwatch.onboard.sample import Sample

__all__ = ["numbers_in_text", "text_score_note", "with_text_numbers"]


def _texts(values: Sequence[Any]) -> list[str]:
    return [v for v in values if isinstance(v, str)]


def numbers_in_text(values: Sequence[Any]) -> list[Any] | None:
    """``values`` with each text read as the number it writes, as the decoder reads it
    under ``numbers_as_text``; None where none is text or some text is no number (a blank
    text reads as no value)."""
    texts = _texts(values)
    if not texts:
        return None
    read, bad, null = numeric(list(values), lenient=True)
    if bad.any():
        return None
    return [None if n else float(x) if isinstance(v, str) else v
            for v, x, n in zip(values, read.tolist(), null.tolist(), strict=True)]


def with_text_numbers(sample: Sample, keep: Collection[str | None] = ()) -> Sample:
    """``sample`` with every field but those in ``keep`` (the id and the label, matched as
    written) whose texts all read as numbers holding those numbers: the view the score is
    looked for in; ``sample`` itself where there is none."""
    read = {}
    for p in sample.paths():
        if p in keep:
            continue
        vals = sample.values(p)
        first = next((v for v in vals if present(v)), None)
        if isinstance(first, str) and (got := numbers_in_text(vals)) is not None:
            read[p] = got
    if not read:
        return sample
    rows = [dict(r) for r in sample.rows]
    for p, got in read.items():
        for r, v in zip(rows, got, strict=True):
            if p in r:
                r[p] = v
    return replace(sample, rows=rows)


def text_score_note(values: Sequence[Any]) -> str:
    """The score line's note for a score whose sample ``values`` are text (empty where
    none is)."""
    texts = _texts(values)
    if not texts:
        return ""
    return (f"; written as text in the sample ({shown(texts)}): read as numbers "
            "(numbers_as_text: true)")
