"""Segments that moved: each segment's PSI per feature at its peak window, its level.

Only a run whose reference names a segment column has segment signals; without them the
section is left out. The level shown is the segment's own calibrated level at that
window (its reference rows and window size), per false-alarm rate; the tier is the one a
decision's reason gave that segment and feature there (``none`` when no reason did).

>>> rec = {"window_id": 4, "signals": [
...     {"signal": "psi", "feature": "purpose", "segment": "web", "value": 0.29,
...      "details": {"calibrated_thresholds": {"0.01": 0.006}}},
...     {"signal": "psi", "feature": "purpose", "value": 0.001}],
...     "decision": {"reasons": [{"signal": "psi", "feature": "purpose", "segment": "web",
...                               "tier": "mild"}]}}
>>> segment_peaks([rec])
[('web', 'purpose', 0.29, 4, '0.006 at 0.01', 'mild')]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from driftwatch.report.html import el, fmt, table
from driftwatch.report.sections import Context, Section

__all__ = ["segment_peaks", "segments_section"]

_SIGNAL = "psi"
_ROWS = 30


def _levels(s: dict[str, Any]) -> str:
    table_ = (s.get("details") or {}).get("calibrated_thresholds") or {}
    return "; ".join(f"{fmt(v)} at {k}" for k, v in sorted(table_.items())
                     if isinstance(v, int | float)) or "—"


def segment_peaks(records: Sequence[dict[str, Any]]
                  ) -> list[tuple[str, str, float, Any, str, str]]:
    """``(segment, feature, peak PSI, window id, levels there, tier there)``, largest first."""
    best: dict[tuple[str, str], tuple[float, dict[str, Any], dict[str, Any]]] = {}
    for rec in records:
        for s in rec.get("signals") or ():
            seg, feat, v = s.get("segment"), s.get("feature"), s.get("value")
            if s.get("signal") != _SIGNAL or not seg or feat is None:
                continue
            if not isinstance(v, int | float) or not math.isfinite(v):
                continue
            key = (str(seg), str(feat))
            if key not in best or v > best[key][0]:
                best[key] = (float(v), s, rec)
    out = []
    for (seg, feat), (v, s, rec) in best.items():
        tier = "none"
        for r in (rec.get("decision") or {}).get("reasons") or ():
            if (r.get("signal"), r.get("feature"), r.get("segment")) == (_SIGNAL, feat, seg):
                tier = str(r.get("tier"))
        out.append((seg, feat, v, rec.get("window_id"), _levels(s), tier))
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out


def segments_section(ctx: Context) -> Section | None:
    recs = [ctx.focus_record] if ctx.focus_record is not None else ctx.run.records
    peaks = segment_peaks([r for r in recs if r is not None])
    if not peaks:
        return None
    shown = peaks[:_ROWS]
    body = table(["segment", "feature", "PSI", "window", "calibrated level", "tier"],
                 [list(p) for p in shown], class_="segments")
    more = len(peaks) - len(shown)
    note = el("p", f"{more} more segment and feature pairs are not listed (size bound).",
              class_="note") if more > 0 else None
    return Section("segments", "Segments that moved", el("div", body, note),
                   "PSI of each feature within each segment against the same segment of the "
                   "reference, at the window where it peaked, with that segment's own "
                   "calibrated level there.")
