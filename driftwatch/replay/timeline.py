"""The timeline: one JSON line per closed window, byte-identical for the same input.

Each record carries the window's bounds (event index and event time), a compact sketch
summary per feature, every detector signal, the tier and the decision. Keys are sorted and
floats printed by orjson (shortest round-trip form), so two replays of the same input give
the same bytes.

>>> iso(0.0)
'1970-01-01T00:00:00Z'
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson

from driftwatch.pipeline import WindowResult
from driftwatch.windows.sketch import Sketch

__all__ = ["TimelineWriter", "iso", "read_timeline", "sketch_summary", "window_record"]

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def iso(t: float) -> str | None:
    """Epoch seconds as an ISO-8601 UTC string (None for non-finite)."""
    if not math.isfinite(t):
        return None
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _share(a: float, n: float) -> float | None:
    return round(a / n, 6) if n else None


def sketch_summary(sk: Sketch) -> dict[str, Any]:
    """Per-feature counts on the reference's coarse bins, missing and out-of-range shares."""
    lay = sk.layout
    feats: dict[str, Any] = {}
    coarse = sk.num_coarse()
    ncoarse = lay.numeric.n_coarse
    for j, name in enumerate(lay.numeric.names):
        row = coarse[j]
        n = int(row.sum())
        feats[name] = {
            "type": "numeric",
            "bins": row[: ncoarse[j]].tolist(),
            "missing": int(row[-1]),
            "missing_share": _share(row[-1], n),
            "out_of_range_share": _share(sk.num_under[j] + sk.num_over[j], n - row[-1]),
        }
    cl = lay.categorical
    for j, name in enumerate(cl.names):
        row = sk.cat[j]
        n = int(row.sum())
        k = len(cl.levels[j])
        feats[name] = {
            "type": "categorical",
            "levels": dict(zip(cl.levels[j], row[:k].tolist(), strict=True)),
            "other": int(row[cl.other_col]),
            "unseen": int(row[cl.unseen_col]),
            "missing": int(row[cl.missing_col]),
            "missing_share": _share(row[cl.missing_col], n),
        }
    return feats


def window_record(res: WindowResult) -> dict[str, Any]:
    """The timeline line for one closed window."""
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
        "start": iso(cw.start_time),
        "end": iso(cw.end_time),
        "n_events": sk.n,
        "n_bad": sk.n_bad,
        "n_late": sk.n_late,
        "n_labelled": int(sk.lab_n.sum()),
        "n_labelled_bad": int(sk.lab_n[1]),
        "partial": cw.partial,
        "score": {
            "bins": sk.score_coarse()[0, : int(sk.layout.score.n_coarse[0])].tolist(),
            "missing": int(sk.score_fine[0, -1]),
            "mean": None if math.isnan(sk.score_mean) else sk.score_mean,
            "var": None if math.isnan(sk.score_var) else sk.score_var,
            "approval_rate": _share(dec[1], decided),
        },
        "features": sketch_summary(sk),
        "signals": [s.to_dict() for s in a.signals],
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
