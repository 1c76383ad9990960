"""The Python API: drift checks from a notebook or a batch job, on replay's own pipeline.

``Monitor.from_reference(df, policy=...)`` builds the reference profile from a DataFrame
with the conventions replay uses (columns ``score``, ``label`` (1 bad, 0 good) and
``decision`` are the model's output; every other column is a feature). Each
``assess(current_df)`` is one window: the same sketches, ``detectors.assess`` and policy
engine as ``driftwatch replay``, so persistence, hysteresis and cooldowns count the
windows assessed on one monitor in order. ``report(path)`` writes replay's HTML report.

>>> import numpy as np, pandas as pd
>>> from driftwatch import Monitor
>>> from driftwatch.bundled import bundled_path
>>> rng = np.random.default_rng(0)
>>> def applications(n, shift=0.0):
...     return pd.DataFrame({
...         "income": rng.lognormal(10 + shift, 0.5, n),
...         "purpose": rng.choice(["car", "home", "education"], n),
...         "score": rng.uniform(0, 1, n)})
>>> template = bundled_path("policies") / "template.yaml"   # persistence: 2 windows
>>> mon = Monitor.from_reference(applications(5000), policy=template)
>>> mon.assess(applications(1000)).tier
'none'
>>> shifted = mon.assess(applications(1000, shift=0.6))
>>> shifted.tier, shifted.raw_tier, shifted.decision.suppressed_by
('none', 'severe', ('persistence',))
>>> again = mon.assess(applications(1000, shift=0.6))
>>> again.tier, sorted({r.feature for r in again.reasons})
('severe', ['income'])
>>> row = again.signals.query("signal == 'psi' and feature == 'income'").iloc[0]
>>> round(float(row["value"]), 2), float(row["threshold"]), row["tier"], bool(row["exceeds"])
(1.38, 0.1, 'severe', True)
>>> [(r.signal, r.feature, r.threshold, r.source) for r in again.reasons][:1]  # doctest: +ELLIPSIS
[('psi', 'income', 0.5, '.../template.yaml:25')]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.detectors.config import DetectorConfig
from driftwatch.errors import DataFrameError
from driftwatch.pipeline import ModelMonitor, WindowResult
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.loader import load_policy
from driftwatch.policy.reference import ReferenceColumns
from driftwatch.policy.schema import Policy
from driftwatch.replay import monitor_for, summarise
from driftwatch.replay.timeline import window_record
from driftwatch.windows.conventions import TableConventions, build_profile
from driftwatch.windows.panes import ClosedWindow
from driftwatch.windows.profile import (
    ReferenceProfile,
    add_frame_labels,
    frame_batch,
    read_reference_table,
)
from driftwatch.windows.segments import segment_sketches, segment_texts
from driftwatch.windows.sketch import Sketch

__all__ = ["SIGNAL_COLUMNS", "Monitor", "WindowVerdict"]

#: Columns of :attr:`WindowVerdict.signals`, in order.
SIGNAL_COLUMNS = (
    "signal", "feature", "group", "value", "threshold", "exceeds", "tier",
    "p_value", "n_ref", "n_cur", "segment",
)


def _frame(df: object, what: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise DataFrameError(f"the {what} must be a pandas DataFrame, not {type(df).__name__}")
    if df.empty:
        raise DataFrameError(f"the {what} DataFrame is empty ({len(df)} rows, "
                             f"{len(df.columns)} columns): nothing to measure")
    if all(isinstance(c, str) for c in df.columns):
        return df
    # a feature is named by text everywhere (signals, reasons, the report): 0 is "0"
    names = [str(c) for c in df.columns]
    if len(set(names)) < len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise DataFrameError(f"the {what} DataFrame has columns that read alike as text: "
                             + ", ".join(map(repr, twice)))
    return df.set_axis(names, axis=1)


def _no_times(df: pd.DataFrame, skip: Sequence[str | None]) -> None:
    """Refuse a date or time column that would be taken for a feature: every new date is a
    level the reference never saw, so it reads as drift in every window."""
    times = [c for c in df.columns if c not in skip and (
        pd.api.types.is_datetime64_any_dtype(df[c]) or isinstance(df[c].dtype, pd.PeriodDtype))]
    if times:
        raise DataFrameError(
            f"column(s) {', '.join(map(repr, times))} of the reference hold dates or times, "
            "which are no feature (every new one reads as drift): pass time="
            f"{times[0]!r} for the window's time, or ignore=[...]")


def _name(c: object) -> str | None:
    """A column named as an argument, as :func:`_frame` names it."""
    return None if c is None else str(c)


def _epoch(t: float | str | datetime | pd.Timestamp) -> float:
    if isinstance(t, str | datetime | pd.Timestamp):
        ts = pd.Timestamp(t)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts
        return float(ts.timestamp())
    return float(t)


@dataclass(frozen=True, eq=False)
class WindowVerdict:
    """What the detectors measured on one window and what the policy decided.

    ``signals`` is a DataFrame with one row per signal (columns :data:`SIGNAL_COLUMNS`):
    ``threshold`` and ``exceeds`` are the detector's own alarm level, ``tier`` the tier
    the decision's reasons give that signal (``none`` when it is not among them); the
    policy's thresholds are in ``reasons``; ``segment`` names the segment a row was
    measured on (None: the whole window). ``tier`` is the decided tier (after
    persistence, hysteresis and escalation), ``raw_tier`` what this window's signals reach
    on their own.
    """

    result: WindowResult
    monitor: Monitor

    @property
    def window_id(self) -> int:
        return self.result.window.window_id

    @property
    def decision(self) -> Decision | None:
        """The policy engine's decision (None for a monitor without a policy)."""
        return self.result.decision

    @property
    def tier(self) -> str:
        d = self.result.decision
        return "none" if d is None else str(d.tier)

    @property
    def raw_tier(self) -> str:
        d = self.result.decision
        return "none" if d is None else str(d.raw_tier)

    @property
    def reasons(self) -> tuple[Reason, ...]:
        """Every signal or rule behind the decision, with the policy ``file:line``."""
        d = self.result.decision
        return () if d is None else d.reasons

    @property
    def signals(self) -> pd.DataFrame:
        tiers = {(r.signal, r.feature, r.segment): str(r.tier) for r in self.reasons
                 if r.kind != "hold"}
        rows = [
            {
                "signal": s.signal,
                "feature": s.feature,
                "group": s.group,
                "value": s.value,
                "threshold": s.threshold,
                "exceeds": s.exceeds,
                "tier": tiers.get((s.signal, s.feature, s.segment), "none"),
                "p_value": s.p_value,
                "n_ref": s.n_ref,
                "n_cur": s.n_cur,
                "segment": s.segment,
            }
            for s in self.result.assessment.signals
        ]
        df = pd.DataFrame(rows, columns=list(SIGNAL_COLUMNS))
        # model-level signals have no feature: None, not a string dtype's NaN
        df["feature"] = pd.Series([r["feature"] for r in rows], dtype=object, index=df.index)
        df["segment"] = pd.Series([r["segment"] for r in rows], dtype=object, index=df.index)
        return df

    def report(self, path: str | Path) -> Path:
        """Write replay's HTML report of this window alone to ``path``."""
        return self.monitor.report(path, windows=[self.window_id])


class Monitor:
    """One model's reference, policy and engine state, fed one DataFrame per window."""

    def __init__(
        self,
        pipeline: ModelMonitor,
        *,
        score: str | None = "score",
        label: str | None = "label",
        decision: str | None = "decision",
        exposure: str | None = None,
        time: str | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.columns = {"score": score, "label": label, "decision": decision,
                        "exposure": exposure, "time": time}
        self._records: list[dict[str, Any]] = []
        self._next_index = 0
        #: The policy's reference: conventions, applied to every current DataFrame too.
        self.conventions: TableConventions | None = None

    @classmethod
    def from_reference(
        cls,
        reference: pd.DataFrame | ReferenceProfile | str | Path,
        policy: Policy | str | Path | None = None,
        *,
        model: str | None = None,
        score: str | None = "score",
        label: str | None = "label",
        decision: str | None = "decision",
        exposure: str | None = None,
        time: str | None = None,
        ignore: Sequence[str] = (),
        numeric: Sequence[str] | None = None,
        categorical: Sequence[str] | None = None,
        bins: int = 10,
        fine_bins: int = 200,
        top_k: int = 20,
        detectors: DetectorConfig | None = None,
    ) -> Monitor:
        """A monitor measuring against ``reference``: a DataFrame, a table file (Parquet,
        CSV), or a saved profile (a :class:`~driftwatch.windows.profile.ReferenceProfile`
        or its ``.json[.gz]`` file, as ``driftwatch profile`` writes).

        ``policy`` is a policy file or a loaded :class:`~driftwatch.policy.schema.Policy`
        (None: signals only, tier always ``none``); its ``model.reference`` is not read,
        the DataFrame is the reference. Columns named by ``score``, ``label``,
        ``decision``, ``exposure`` and ``time`` are not features, nor those in ``ignore``
        (ids, say); the rest are, numeric by dtype, otherwise categorical, unless
        ``numeric`` / ``categorical`` list them.
        """
        score, label, decision, exposure, time = map(
            _name, (score, label, decision, exposure, time))
        ignore = [str(c) for c in ignore]
        numeric = None if numeric is None else [str(c) for c in numeric]
        categorical = None if categorical is None else [str(c) for c in categorical]
        pol = policy if isinstance(policy, Policy) or policy is None else load_policy(policy)
        conv = None
        if pol is not None and pol.reference != ReferenceColumns():
            # the policy's reference: block names the columns (and P(good), label values)
            if (score, label, decision, exposure, tuple(ignore)) != (
                    "score", "label", "decision", None, ()):
                raise DataFrameError("name the score, label, decision, exposure and ignored "
                                     "columns in the policy's reference: block or as "
                                     "arguments, not both")
            conv = pol.reference.conventions()
            score, label, decision, exposure = conv.score, conv.label, conv.decision, \
                conv.exposure
        if isinstance(reference, str | Path):
            path = Path(reference)
            reference = (ReferenceProfile.load(path) if path.name.endswith((".json", ".json.gz"))
                         else read_reference_table(path, conv.names if conv else None))
        if isinstance(reference, ReferenceProfile):
            profile = reference
        else:
            df = _frame(reference, "reference")
        if conv is not None and not isinstance(reference, ReferenceProfile):
            kinds = {**dict.fromkeys(numeric or (), "numeric"),
                     **dict.fromkeys(categorical or (), "categorical")}
            ref_conv = replace(conv, ignore=(*conv.ignore, time)) if time else conv
            _no_times(df, [conv.score, conv.label, conv.decision, conv.exposure,
                           *ref_conv.ignore, *kinds])
            profile = build_profile(df, ref_conv, kinds=kinds, bins=bins, fine_bins=fine_bins,
                                    top_k=top_k, meta={"source": "DataFrame"})
        elif not isinstance(reference, ReferenceProfile):
            unknown = [c for c in ignore if c not in df.columns]
            if unknown:
                raise DataFrameError(f"the reference has no column {', '.join(map(repr, unknown))}"
                                     f" (columns: {', '.join(map(str, df.columns))})")
            df = df.drop(columns=[*ignore, *([time] if time in df.columns else [])])
            named = [*(numeric or ()), *(categorical or ())]
            if absent := [c for c in named if c not in df.columns]:
                raise DataFrameError(
                    f"the reference lacks feature column(s) {', '.join(map(repr, absent))}")
            special = {c for c in (score, label, decision, exposure) if c}
            _no_times(df, [*special, *named])
            if not named and not [c for c in df.columns if c not in special]:
                raise DataFrameError(
                    "the reference has no feature columns: every column is "
                    f"{'/'.join(sorted(special))} or ignored")
            profile = ReferenceProfile.build(
                df, numeric=numeric, categorical=categorical, score=score, label=label,
                decision=decision, exposure=exposure, bins=bins, fine_bins=fine_bins,
                top_k=top_k, meta={"source": "DataFrame"},
            )
        pipeline = monitor_for(pol, profile, model=model, detectors=detectors)
        mon = cls(pipeline, score=score, label=label, decision=decision, exposure=exposure,
                  time=time)
        mon.conventions = conv
        return mon

    @property
    def profile(self) -> ReferenceProfile:
        return self.pipeline.profile

    @property
    def features(self) -> tuple[str, ...]:
        return self.profile.schema.names

    def _times(self, df: pd.DataFrame, at: float | str | datetime | pd.Timestamp | None,
               window_id: int) -> tuple[float, float]:
        col = self.columns["time"]
        if at is not None:
            t = _epoch(at)
            return t, t
        if col and col in df.columns:
            s = df[col]
            if pd.api.types.is_datetime64_any_dtype(s):
                s = pd.to_datetime(s, utc=True)
                lo, hi = s.min(), s.max()
                if not pd.isna(lo):
                    return float(lo.timestamp()), float(hi.timestamp())
            else:
                v = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64)
                if np.isfinite(v).any():
                    return float(np.nanmin(v)), float(np.nanmax(v))
        # no time given: windows one second apart, in the order they were assessed
        return float(window_id), float(window_id)

    def _sketch(self, df: pd.DataFrame) -> tuple[Sketch, tuple[Sketch, ...] | None]:
        """The window's sketch, and its segments' when the reference has segments."""
        schema = self.profile.schema
        if absent := [c for c in schema.names if c not in df.columns]:
            raise DataFrameError(
                f"the current DataFrame lacks feature column(s) {', '.join(map(repr, absent))}"
                f" of the reference (features: {', '.join(schema.names)})")
        for c in schema.numeric:
            try:
                df[c].to_numpy(dtype=np.float64, na_value=np.nan)
            except (TypeError, ValueError):
                raise DataFrameError(
                    f"column {c!r} is numeric in the reference but holds "
                    f"{df[c].dtype} values that are not numbers") from None
        c = self.columns
        if self.conventions is not None:  # P(good) -> P(bad), labels -> 1/0, as the reference
            df = self.conventions.prepare(df)
        batch = frame_batch(df, schema, score=c["score"], decision=c["decision"],
                            exposure=c["exposure"])
        sketch = Sketch.empty(self.profile.layout)
        sketch.add_batch(batch)
        add_frame_labels(sketch, df, batch, c["label"])
        segs = self.profile.segments
        if segs is None:
            return sketch, None
        if segs.column not in df.columns:
            raise DataFrameError(f"the current DataFrame lacks the segment column "
                                 f"{segs.column!r} of the reference")
        batch = replace(batch, segment=segment_texts(df[segs.column].to_numpy()))
        return sketch, segment_sketches(self.profile.layout, segs.coder, batch)

    def assess(self, current: pd.DataFrame, *,
               at: float | str | datetime | pd.Timestamp | None = None) -> WindowVerdict:
        """Measure ``current`` (one window) against the reference; let the policy decide.

        The window's time is ``at`` (epoch seconds, a datetime or an ISO string; UTC
        unless it says otherwise), else the span of the
        ``time`` column, else its position (windows one second apart): give one of the
        first two when the policy's cooldowns should count real time.
        """
        df = _frame(current, "current")
        sketch, segments = self._sketch(df)
        window_id = len(self._records)
        start, end = self._times(df, at, window_id)
        if not (math.isfinite(start) and math.isfinite(end)):
            raise DataFrameError("the window's time is not a finite number")
        first = self._next_index
        self._next_index += len(df)
        cw = ClosedWindow(window_id=window_id, sketch=sketch, start_time=start, end_time=end,
                          first_index=first, last_index=self._next_index - 1,
                          segments=segments)
        res = self.pipeline.judge(cw)
        self.pipeline.n_events += len(df)
        self._records.append(window_record(res))
        return WindowVerdict(res, self)

    def report(self, path: str | Path, *, windows: Sequence[int] | None = None) -> Path:
        """Write replay's HTML report of the windows assessed so far (or of ``windows``)."""
        from driftwatch.report import RunData, build_report

        dest = Path(path)
        records = self._records if windows is None else [
            r for r in self._records if r["window_id"] in set(windows)]
        if not records:
            raise DataFrameError("nothing to report: no window has been assessed yet")
        run = RunData(dest.parent, records, summarise(records, self.pipeline), self.profile)
        html = build_report(run)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".tmp")
        tmp.write_bytes(html.encode("utf-8"))
        tmp.replace(dest)
        return dest
