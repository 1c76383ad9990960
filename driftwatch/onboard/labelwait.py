"""How long the policy ``init`` writes lets a prediction wait for its outcome
(``labels.ttl``).

The default wait, 120 days, fits card fraud (a chargeback comes in weeks). A loan's outcome
comes much later: Lending Club's outcomes file dates each one by its last payment
(``last_pymnt_d``), months or years after ``issue_d``. A prediction that waits less than
that expires unlabelled and its outcome then finds nothing to join, so a replay reports no
bad rate, AUC or calibration at all. Where both samples carry times and join by id,
``init`` measures the delay on the pairs (two counts from one start in one unit, such as
IEEE-CIS's ``TransactionDT`` on both sides, need no origin for it) and, where the longest
is over the default, writes ``labels: {ttl: ...}`` at :data:`MARGIN` times that delay in
whole days (at most :data:`MAX_TTL_DAYS`), and says so: a sample's first rows seldom hold
the longest delays.

>>> wait_for([0.0, 86400.0], [200 * 86400.0, 400 * 86400.0]).ttl
'798d'
>>> wait_for([0.0], [30 * 86400.0]) is None  # within the default: nothing written
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.connectors.eventtime import event_times
from driftwatch.onboard.plandata import StreamPlan
from driftwatch.policy.durations import format_duration
from driftwatch.policy.settings import LabelSettings

__all__ = ["MARGIN", "MAX_TTL_DAYS", "LabelWait", "label_wait", "wait_for"]

#: The written wait, as a multiple of the longest delay the samples show.
MARGIN = 2.0
#: The longest wait written, in days (the policy's longest duration).
MAX_TTL_DAYS = 3650
_DAY = 86400.0


@dataclass(frozen=True)
class LabelWait:
    """The ``labels.ttl`` to write (duration text), the longest delay seen (seconds) and
    the number of pairs it was measured on."""

    ttl: str
    longest: float
    pairs: int

    def line(self) -> tuple[str, str]:
        """Init's line (what, why)."""
        default = format_duration(LabelSettings().ttl)
        return (f"label wait: {self.ttl}",
                f"outcomes in the sample come up to {format_duration(self.longest)} after "
                f"their predictions ({self.pairs} joined by id), longer than the default "
                f"wait of {default}, after which a prediction expires unlabelled: written "
                f"as labels.ttl, {MARGIN:g} times the longest; raise it if outcomes come "
                "later still")


def wait_for(predicted: Any, outcome: Any) -> LabelWait | None:
    """The wait for pairs of prediction and outcome times (seconds, one pair per joined
    id; non-finite ones left out); None where every delay fits the default."""
    p, o = np.asarray(predicted, float), np.asarray(outcome, float)
    delay = (o - p)[np.isfinite(p) & np.isfinite(o)]
    if not len(delay) or delay.max() <= LabelSettings().ttl:
        return None
    days = min(MAX_TTL_DAYS, math.ceil(MARGIN * float(delay.max()) / _DAY))
    return LabelWait(f"{days}d", float(delay.max()), len(delay))


def label_wait(preds: StreamPlan, outs: StreamPlan | None,
               now: float | None = None) -> LabelWait | None:
    """The wait for the samples' pairs, joined by id, where both streams take their time
    from a field (``now`` places a two-digit year, as the decoder does); None where they
    cannot be paired so or every delay fits the default."""
    if outs is None or preds.id_source != "payload" or not outs.id_path:
        return None
    if any(s.time_source != "payload" or s.time_path is None for s in (preds, outs)):
        return None
    if (preds.time_offsets or outs.time_offsets) and not (
            preds.time_offsets and outs.time_offsets and preds.time_unit == outs.time_unit):
        # offsets from a start only the user knows: a delay only between two counts from
        # the same start in the same unit (the outcomes read on the predictions' clock)
        return None
    times = {}
    for s in (preds, outs):
        assert s.time_path is not None
        secs, _, _ = event_times(s.sample.values(s.time_path), s.time_unit,
                                 fmt=s.time_format, now=now,
                                 century_start=s.time_century_start)
        ids = [None if v is None else str(v) for v in s.sample.values(s.id_path)]
        times[s.name] = dict(zip(ids, secs.tolist(), strict=True))
    made = times[preds.name]
    pairs = [(made[k], t) for k, t in times[outs.name].items() if k is not None and k in made]
    if not pairs:
        return None
    return wait_for(*zip(*pairs, strict=True))
