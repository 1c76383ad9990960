"""The timeline: one JSON line per closed window, byte-identical for the same input.

Each record carries the window's bounds (event index and event time), a compact sketch
summary per feature, every detector signal, the tier and the decision. Keys are sorted and
floats printed by orjson (shortest round-trip form), so two replays of the same input give
the same bytes.

A stream without times (``event_time: {source: order}``) numbers its predictions from 1,
and its window bounds say so instead of a date in 1970:

>>> iso(0.0), when(1000.0, numbered=True), when(1000.0)
('1970-01-01T00:00:00Z', 'record 1000', '1970-01-01T00:16:40Z')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson

from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.identity_cache import IdentityCache
from driftwatch.pipeline import WindowResult
from driftwatch.windows.sketch import Sketch, SketchLayout

__all__ = ["TimelineWriter", "iso", "read_timeline", "sketch_summary", "when", "window_record"]

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def iso(t: float | None) -> str | None:
    """Epoch seconds as an ISO-8601 UTC string (None for None and non-finite)."""
    if t is None or not math.isfinite(t):
        return None
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def when(t: float | None, numbered: bool = False) -> str | None:
    """An event time as the timeline writes it: ISO-8601 UTC, or ``record N`` where event
    time is the record's number in its stream (``numbered``); None for None and
    non-finite."""
    if not numbered:
        return iso(t)
    if t is None or not math.isfinite(t):
        return None
    return f"record {int(t)}"


def _share(a: float, n: float) -> float | None:
    return round(a / n, 6) if n else None


def _shares(a: np.ndarray, n: np.ndarray) -> list[float | None]:
    """:func:`_share` of every pair at once (numpy's rounding, as on its scalars)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.round(a / n, 6).tolist()
    return [x if d else None for x, d in zip(r, (n != 0).tolist(), strict=True)]


@dataclass(frozen=True, slots=True)
class _Columns:
    """What a summary reads of a layout, the same for every window: each numeric
    feature's name and real coarse bins, each categorical feature's name and levels, the
    columns of ``other``, ``unseen`` and ``missing``, and the score's real coarse bins."""

    numeric: tuple[tuple[str, int], ...]
    categorical: tuple[tuple[str, tuple[str, ...]], ...]
    other: int
    unseen: int
    missing: int
    score_bins: int

    @classmethod
    def of(cls, lay: SketchLayout) -> _Columns:
        cl = lay.categorical
        return cls(tuple(zip(lay.numeric.names, lay.numeric.n_coarse.tolist(), strict=True)),
                   tuple(zip(cl.names, cl.levels, strict=True)),
                   cl.other_col, cl.unseen_col, cl.missing_col,
                   int(lay.score.n_coarse[0]))


_COLUMNS = IdentityCache(capacity=4)


def _columns(lay: SketchLayout) -> _Columns:
    return _COLUMNS.get((lay,), "timeline", lambda: _Columns.of(lay))


def sketch_summary(sk: Sketch) -> dict[str, Any]:
    """Per-feature counts on the reference's coarse bins, missing and out-of-range shares.

    Built from the count arrays, one conversion per block rather than per feature, and
    every share of the window in one division."""
    cols = _columns(sk.layout)
    feats: dict[str, Any] = {}
    tops: list[np.ndarray] = []
    bottoms: list[np.ndarray] = []
    if cols.numeric:
        coarse = sk.num_coarse()
        n = coarse.sum(axis=1)
        miss = coarse[:, -1]
        tops += [miss, sk.num_under + sk.num_over]
        bottoms += [n, n - miss]
    if cols.categorical:
        cat = np.asarray(sk.cat)
        tops.append(cat[:, cols.missing])
        bottoms.append(cat.sum(axis=1))
    if not tops:
        return feats
    shares = _shares(np.concatenate(tops), np.concatenate(bottoms))
    f = len(cols.numeric)
    if f:
        rows = coarse.tolist()
        for j, (name, k) in enumerate(cols.numeric):
            row = rows[j]
            feats[name] = {
                "type": "numeric",
                "bins": row[:k],
                "missing": row[-1],
                "missing_share": shares[j],
                "out_of_range_share": shares[f + j],
            }
    if cols.categorical:
        rows = cat.tolist()
        other, unseen, mcol = cols.other, cols.unseen, cols.missing
        for j, (name, levels) in enumerate(cols.categorical):
            row = rows[j]
            feats[name] = {
                "type": "categorical",
                "levels": dict(zip(levels, row[: len(levels)], strict=True)),
                "other": row[other],
                "unseen": row[unseen],
                "missing": row[mcol],
                "missing_share": shares[2 * f + j],
            }
    return feats


def _signal(s: SignalResult) -> dict[str, Any]:
    """:meth:`SignalResult.to_dict` for a line written at once: ``details`` as it is, not
    copied (the record is serialised before anything else can touch it)."""
    d = {"signal": s.signal, "group": s.group, "value": s.value, "feature": s.feature,
         "threshold": s.threshold, "n_ref": s.n_ref, "n_cur": s.n_cur,
         "p_value": s.p_value, "details": s.details}
    if s.segment is not None:
        d["segment"] = s.segment
    return d


def window_record(res: WindowResult, numbered: bool = False) -> dict[str, Any]:
    """The timeline line for one closed window (``numbered``: its bounds are record
    numbers, see :func:`when`)."""
    cw, a, d = res.window, res.assessment, res.decision
    sk = cw.sketch
    dec = sk.decisions
    decided = int(dec[0] + dec[1])
    rec: dict[str, Any] = {
        "model": a.model,
        "window_id": cw.window_id,
        "first_index": cw.first_index,
        "last_index": cw.last_index,
        "start_time": cw.start_time,
        "end_time": cw.end_time,
        "start": when(cw.start_time, numbered),
        "end": when(cw.end_time, numbered),
        "n_events": sk.n,
        "n_bad": sk.n_bad,
        "n_late": sk.n_late,
        "n_labelled": int(sk.lab_n.sum()),
        "n_labelled_bad": int(sk.lab_n[1]),
        "partial": cw.partial,
        "score": {
            "bins": sk.score_coarse()[0, : _columns(sk.layout).score_bins].tolist(),
            "missing": int(sk.score_fine[0, -1]),
            "mean": None if math.isnan(sk.score_mean) else sk.score_mean,
            "var": None if math.isnan(sk.score_var) else sk.score_var,
            "approval_rate": _share(dec[1], decided),
        },
        "features": sketch_summary(sk),
        "signals": [_signal(s) for s in a.signals],
        "tier": str(d.tier) if d is not None else "none",
        "decision": d.to_dict() if d is not None else None,
    }
    if res.cohort is not None:  # a cohort's verdict on its window, on its own outcomes
        rec["cohort"] = res.cohort
    return rec


class TimelineWriter:
    """Appends window records to ``timeline.jsonl``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] = self.path.open("wb")
        self.count = 0

    def write(self, record: dict[str, Any]) -> None:
        self._fh.write(orjson.dumps(record, option=_OPTS | orjson.OPT_SERIALIZE_NUMPY))
        self.count += 1

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TimelineWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_timeline(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]
