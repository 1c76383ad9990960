"""What a report is built from: a replay (or daemon) output folder, read once.

``timeline.jsonl`` is required; ``summary.json``, ``dead_letter.jsonl`` and an
``actions.jsonl`` export of executed actions are used when present. The reference profile
(the bins' reference counts) is passed in, or read from ``reference.json[.gz]`` in the
folder; without it the histograms show the current window alone, and a reference whose
fingerprint differs from the run's is flagged rather than silently compared.

>>> rec = {"window_id": 4, "signals": [
...     {"signal": "psi", "feature": "age", "value": 0.2, "group": "drift"},
...     {"signal": "psi", "feature": "income", "value": 0.4, "group": "drift"}]}
>>> signal(rec, "psi", "income")["value"], max_value(rec, "psi")
(0.4, 0.4)
>>> value(rec, "gini") is None
True
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from driftwatch.errors import SourceError
from driftwatch.outputlog import segments, timeline_files
from driftwatch.windows.profile import ReferenceProfile

__all__ = [
    "TIER_ORDER",
    "RunData",
    "load_run",
    "max_value",
    "signal",
    "signal_index",
    "value",
]

TIER_ORDER = ("none", "mild", "moderate", "severe")


#: While a report is built (:func:`signal_index`): per window's signal list (by ``id``; the
#: run holds the lists, so an id is not reused meanwhile), its whole-window signals by
#: ``(name, feature)``. A wide model's report looks signals up windows x features x
#: signals times, each a scan of the window's list without it.
_INDEXES: ContextVar[dict[int, dict[tuple[Any, Any], dict[str, Any]]] | None] = ContextVar(
    "driftwatch_report_signal_indexes", default=None)


@contextmanager
def signal_index() -> Iterator[None]:
    """Look signals up by index within this block (the records must stay alive and
    unchanged in it, as a :class:`RunData` keeps them)."""
    token = _INDEXES.set({})
    try:
        yield
    finally:
        _INDEXES.reset(token)


def signal(rec: dict[str, Any], name: str, feature: str | None = None) -> dict[str, Any] | None:
    """The record's signal ``name`` (on ``feature``; None: the model-level one), on the
    whole window (segment signals are not the feature's)."""
    sigs = rec.get("signals") or ()
    indexes = _INDEXES.get()
    if indexes is not None and sigs:
        idx = indexes.get(id(sigs))
        if idx is None:
            idx = {}
            for s in sigs:  # the first of a (name, feature) wins, as the scan's does
                if not s.get("segment"):
                    idx.setdefault((s.get("signal"), s.get("feature")), s)
            indexes[id(sigs)] = idx
        return idx.get((name, feature))
    for s in sigs:
        if s.get("signal") == name and s.get("feature") == feature and not s.get("segment"):
            return s
    return None


def value(rec: dict[str, Any], name: str, feature: str | None = None) -> float | None:
    """A signal's value, None when absent or not finite."""
    s = signal(rec, name, feature)
    v = None if s is None else s.get("value")
    return float(v) if isinstance(v, int | float) and math.isfinite(v) else None


def max_value(rec: dict[str, Any], name: str) -> float | None:
    """The largest finite value of a per-feature signal across features (whole window)."""
    vals = [
        float(s["value"])
        for s in rec.get("signals") or ()
        if s.get("signal") == name and s.get("feature") is not None and not s.get("segment")
        and isinstance(s.get("value"), int | float) and math.isfinite(s["value"])
    ]
    return max(vals) if vals else None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [_parsed(path, n, line) for n, line in _lines(path)]


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of the non-blank lines of ``path``."""
    with path.open("rb") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                yield n, line


def _parsed(path: Path, n: int, line: bytes) -> dict[str, Any]:
    try:
        return orjson.loads(line)  # type: ignore[no-any-return]
    except orjson.JSONDecodeError as exc:
        raise SourceError(f"{path}:{n}: not a JSON line ({exc})") from exc


def _read_timeline(path: Path, last: int | None) -> tuple[list[dict[str, Any]], int]:
    """The lines of a timeline's files (its rotated segments, then the active file), in
    order, parsed; with ``last``, only the last so many (the others are only counted,
    never parsed). Also returns how many lines were left out."""
    if last is None:
        return [_parsed(f, n, x) for f in timeline_files(path) for n, x in _lines(f)], 0
    kept: deque[tuple[Path, int, bytes]] = deque(maxlen=max(1, last))
    total = 0
    for f in timeline_files(path):
        for n, x in _lines(f):
            kept.append((f, n, x))
            total += 1
    return [_parsed(f, n, x) for f, n, x in kept], total - len(kept)


@dataclass
class RunData:
    """One run's records and side files, with lookups the sections share."""

    out_dir: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any] = field(default_factory=dict)
    reference: ReferenceProfile | None = None
    executed: list[dict[str, Any]] = field(default_factory=list)
    bad_by_reason: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: Cohort verdicts: timeline lines that judge an earlier window on its own outcomes.
    cohorts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model(self) -> str:
        if self.summary.get("model"):
            return str(self.summary["model"])
        return str(self.records[0].get("model", "model")) if self.records else "model"

    def bad_records(self) -> tuple[int, int]:
        """Bad records and every record read (predictions, outcome records and bad ones):
        the run's share as the data-quality gate's ``bad_record_rate`` takes a window's.

        A summary written before ``records_read`` was kept gives its ``outcomes``."""
        s = self.summary
        bad = int(s.get("bad_records", sum(self.bad_by_reason.values())))
        if "records_read" in s:
            return bad, int(s["records_read"])
        events = int(s.get("events", sum(int(r.get("n_events", 0)) for r in self.records)))
        return bad, events + int(s.get("outcomes", 0)) + bad

    def window(self, window_id: int) -> dict[str, Any]:
        for r in self.records:
            if r.get("window_id") == window_id:
                return r
        ids = [r.get("window_id") for r in self.records]
        span = f"{ids[0]}..{ids[-1]}" if ids else "none"
        raise SourceError(f"no window {window_id} in {self.out_dir} (windows {span})")

    def decisions(self) -> list[dict[str, Any]]:
        """Window records that carry a decision."""
        return [r for r in self.records if r.get("decision")]

    def executed_for(self, window_id: int) -> list[dict[str, Any]]:
        """Executed-action records (``actions.jsonl``) of one window's decision."""
        return [a for a in self.executed if a.get("window_id") == window_id]

    def feature_names(self) -> list[str]:
        names: list[str] = []
        for r in self.records:
            for k in r.get("features") or {}:
                if k not in names:
                    names.append(k)
        return names

    def episodes(self) -> list[tuple[int, int, str]]:
        """Episodes as (first position, last position, max tier) on the window axis."""
        out: list[tuple[int, int, str]] = []
        start: int | None = None
        worst = "none"
        for i, r in enumerate([*self.records, {"tier": "none"}]):
            t = r.get("tier") or "none"
            if t != "none":
                if start is None:
                    start, worst = i, t
                elif TIER_ORDER.index(t) > TIER_ORDER.index(worst):
                    worst = t
            elif start is not None:
                out.append((start, i - 1, worst))
                start = None
        return out

    def actions(self) -> list[tuple[int, str]]:
        """(position on the window axis, action) for each decision that acts."""
        return [
            (i, str(r["decision"]["action"]))
            for i, r in enumerate(self.records)
            if r.get("decision") and r["decision"].get("action")
        ]


def _load_reference(out_dir: Path) -> ReferenceProfile | None:
    for name in ("reference.json.gz", "reference.json"):
        p = out_dir / name
        if p.exists():
            return ReferenceProfile.load(p)
    return None


def load_run(out_dir: str | Path, *, reference: ReferenceProfile | None = None,
             windows: int | None = None) -> RunData:
    """Read an output folder; :class:`SourceError` when it holds no timeline, or one
    without a window (nothing to report). A daemon's timeline is read across its rotated
    segments (``timeline.<n>.jsonl``, oldest first) and then ``timeline.jsonl``;
    ``windows`` keeps only its last so many lines."""
    out = Path(out_dir)
    tl = out / "timeline.jsonl"
    if not tl.is_file() and not segments(tl):
        raise SourceError(f"no timeline.jsonl in {out}: give a replay output folder")
    records, left_out = _read_timeline(tl, windows)
    if not records:
        raise SourceError(f"{tl} has no window: the replay read no prediction, "
                          "so there is nothing to report")
    summary: dict[str, Any] = {}
    if (out / "summary.json").is_file():
        summary = orjson.loads((out / "summary.json").read_bytes())
    executed = _read_jsonl(out / "actions.jsonl") if (out / "actions.jsonl").is_file() else []
    bad = {str(k): int(v) for k, v in (summary.get("bad_by_reason") or {}).items()}
    dl = out / "dead_letter.jsonl"
    if not bad and dl.is_file():
        bad = dict(sorted(Counter(str(d.get("reason", "unknown")) for d in _read_jsonl(dl))
                          .items()))
    verdicts = [r for r in records if r.get("cohort") is not None]
    records = [r for r in records if r.get("cohort") is None] or records
    run = RunData(out, records, summary, reference or _load_reference(out), executed, bad,
                  cohorts=verdicts)
    if left_out:
        run.warnings.append(
            f"windows {records[0].get('window_id')} to {records[-1].get('window_id')}: the "
            f"most recent {len(records) + len(verdicts)} timeline lines; the {left_out} "
            "before them are in the timeline files")
    fp = summary.get("reference")
    if run.reference is not None and fp and run.reference.fingerprint != fp:
        run.warnings.append(
            f"the reference profile given ({run.reference.fingerprint}) is not the one this "
            f"run was measured against ({fp}): reference bars may not match the statistics"
        )
    if run.reference is None:
        run.warnings.append(
            "no reference profile: histograms show the current window only "
            "(pass --reference, or keep reference.json next to the timeline)"
        )
    return run

