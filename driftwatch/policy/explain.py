"""``policy explain``: the effective policy (every default filled in) and, per tier, a
plain-English line of what will happen.

>>> from driftwatch.policy.schema import Policy
>>> p = Policy.model_validate({
...     "apiVersion": "driftwatch/v1", "kind": "DriftPolicy", "metadata": {"name": "p"},
...     "model": {"name": "credit", "reference": "ref.parquet"}, "window": {"pane": 500},
...     "signals": [{"detector": "gini", "thresholds": {"moderate": 0.5}}],
...     "actions": {"moderate": "alert"}})
>>> for line in describe_tiers(p)[:4]: print(line)  # doctest: +NORMALIZE_WHITESPACE
mild: never reached (no signal has a mild threshold and no escalation leads here).
moderate: when any of: gini <= 0.5 (model); acts at once; then alert: a warning in the log
and the metrics.
severe: never reached (no signal has a severe threshold and no escalation leads here).
data quality: no data-quality signals: the gate never closes.
>>> [line.split(":")[0] for line in describe_tiers(p)[4:]]
['approval cut-off', 'limits', 'detectors', 'stub windows', 'segments', 'cohorts', 'labels']
>>> print(describe_tiers(p)[5])  # doctest: +NORMALIZE_WHITESPACE
limits: actions per tier in any 24 hours: mild no limit (default), moderate no limit
(default), severe no limit (default); retraining jobs at a time: 1 (default 1); the
GPU pool's job records count too (retraining concurrency, per-day limit and cooldown), so a
restart does not reset them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import yaml

from driftwatch.policy.catalog import DETECTORS, measure_name
from driftwatch.policy.durations import format_duration
from driftwatch.policy.fields import IN_SECONDS
from driftwatch.policy.levels import LevelTable
from driftwatch.policy.reference import describe_reference
from driftwatch.policy.schema import DataQualityRule, Policy, SignalRule
from driftwatch.policy.tiers import ACTION_TIERS, Tier

__all__ = ["NUMBERED_NOTE", "PAIRED_NOTE", "describe_segment_levels", "describe_tiers",
           "effective_yaml", "explain_policy"]

_OPS = {"above": ">=", "below": "<=", "abs": ">="}


def effective_yaml(policy: Policy, numbered: bool = False) -> str:
    """The policy as YAML with every default written out (it passes ``policy check``);
    ``numbered``: durations in whole seconds, each a record (``750s``, not ``12m30s``)."""
    data: dict[str, Any] = policy.model_dump(mode="json", by_alias=True,
                                             context=IN_SECONDS if numbered else None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


#: What explain adds where the connector's predictions carry no time
NUMBERED_NOTE = ("event time: the connector numbers its predictions (event_time: {source: "
                 "order}), record 1, 2, ...: every duration counts records (the YAML's 1s is "
                 "one record, 1h 3600 records, a day 86400 records), as the lines above say")
#: What explain adds where the connector pairs outcomes with predictions by row
PAIRED_NOTE = ("outcomes: the connector pairs them with the predictions by row (event_id: "
               "{source: order} on both): outcome row k joins prediction row k and counts in "
               "its window; the two files must be written in the same order")


def explain_policy(policy: Policy, *, levels: tuple[int, LevelTable] | None = None,
                   segments: Sequence[tuple[str, int, LevelTable]] = (),
                   numbered: bool = False, paired: bool = False) -> str:
    """Effective YAML, then the plain-English lines as YAML comments.

    ``levels``: a window size and the calibrated levels at it
    (:func:`~driftwatch.policy.levels.calibrated_table`), printed as numbers;
    ``segments``: each segment's own levels at its share of that window
    (:func:`~driftwatch.policy.levels.segment_tables`); ``numbered``: event time is each
    prediction's number (:data:`NUMBERED_NOTE`); ``paired``: outcomes join their
    predictions by row (:data:`PAIRED_NOTE`).
    """
    lines = [f"# effective policy {policy.metadata.name!r} from {policy.file}",
             effective_yaml(policy, numbered).rstrip(), "",
             "# What happens, tier by tier:"]
    lines += [f"#   {line}" for line in describe_tiers(policy, levels=levels,
                                                       numbered=numbered)]
    lines += [f"#   {line}" for line in describe_segment_levels(segments)]
    lines.append(f"#   {describe_reference(policy.reference)}")
    if numbered:
        lines.append(f"#   {NUMBERED_NOTE}")
    if paired:
        lines.append(f"#   {PAIRED_NOTE}")
    return "\n".join(lines) + "\n"


def describe_segment_levels(segments: Sequence[tuple[str, int, LevelTable]]) -> list[str]:
    """One line per segment: its calibrated levels at its share of the window.

    >>> describe_segment_levels([("web", 1800, {"psi": {"purpose": {0.01: 0.0062}}})])
    ["segment 'web' (about 1800 events a window): psi at 0.01: purpose 0.0062."]
    """
    out = []
    for name, n, table in segments:
        parts = []
        for det, feats in table.items():
            rates = sorted({r for by in feats.values() for r in by}, reverse=True)
            for rate in rates:
                shown = ", ".join(f"{f} {by[rate]:.4g}" for f, by in feats.items()
                                  if rate in by)
                parts.append(f"{det} at {rate:g}: {shown}")
        out.append(f"segment {name!r} (about {n} events a window): " + "; ".join(parts) + ".")
    return out


def _level(value: Any, rule: SignalRule | None = None, feature: str | None = None,
           levels: tuple[int, LevelTable] | None = None) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    rate = value.calibrated.false_alarm_rate
    text = f"its calibrated level ({rate:g} false alarms"
    if levels is None or rule is None:
        return text + ")"
    n, table = levels
    by_feat = table.get(rule.detector, {})
    if DETECTORS[rule.detector].level == "model":
        v = by_feat.get(None, {}).get(rate)
        return text + (f"; {v:.4g} at {n} events)" if v is not None else
                       f"; none at {n} events)")
    feats = [feature] if feature is not None else (
        list(by_feat) if rule.features == "all" else rule.features)
    shown = [f"{f} {by_feat[f][rate]:.4g}" for f in feats if rate in by_feat.get(f, {})]
    return text + (f"; at {n} events: " + ", ".join(shown) if shown else
                   f"; no level at {n} events") + ")"


def _trigger(rule: SignalRule, tier: Tier,
             levels: tuple[int, LevelTable] | None = None) -> str | None:
    base = rule.thresholds.get(tier)
    op = _OPS[rule.direction]
    level = DETECTORS[rule.detector].level
    if DETECTORS[rule.detector].group == "cohort":  # judged per prediction window
        level = "cohort, judged on its own window"  # type: ignore[assignment]
    where = "model" if level == "model" else (
        f"any {level}" if rule.features == "all" else ", ".join(rule.features))
    name = measure_name(rule.detector, rule.measure)
    if rule.direction == "abs":
        name = f"|{name}|"
    special = [f"{feat}: {_level(ov.get(tier), rule, feat, levels)}"
               for feat, ov in rule.overrides.items() if ov.get(tier) is not None]
    if base is None:
        return f"{name} {op} ({', '.join(special)})" if special else None
    counts = f"counts as {rule.weight:g}" if rule.weight != 1.0 else None
    weights = [f"{feat} counts as {w:g}" for feat, w in rule.weights.items()]
    notes = filter(None, [where, *special, counts, *weights, _clears(rule, tier)])
    return f"{name} {op} {_level(base, rule, None, levels)} ({'; '.join(notes)})"


def _clears(rule: SignalRule, tier: Tier) -> str | None:
    """The rule's explicit ``clear`` level at ``tier``: it holds for the rule's own level
    and the overrides that inherit it (an override's own level clears by ``hysteresis``)."""
    level = rule.clear.get(tier) if rule.clear is not None else None
    if level is None:
        return None
    own = [feat for feat, ov in rule.overrides.items() if ov.get(tier) is not None]
    return (f"once active, clears only past {level:g}"
            + (f" (not for {', '.join(own)}, whose own level clears by hysteresis)"
               if own else ""))


def _data_quality_signal(rule: DataQualityRule) -> str:
    """One gate signal: its level, the features it reads and their own levels.

    >>> _data_quality_signal(DataQualityRule(detector="missing_rate", threshold=0.05,
    ...     features=["income", "age"], overrides={"age": 0.2}))
    'missing_rate increase > 0.05 (on income, age; age > 0.2)'
    """
    text = (f"{rule.detector}{'' if rule.measure == 'value' else ' ' + rule.measure} > "
            f"{rule.threshold:g}")
    parts = [] if rule.features == "all" else ["on " + ", ".join(rule.features)]
    parts += [f"{feat} > {v:g}" for feat, v in rule.overrides.items()]
    return text + (f" ({'; '.join(parts)})" if parts else "")


def _span(seconds: float, numbered: bool) -> str:
    """A duration as the policy means it: event time, or records where event time is each
    prediction's number (``event_time: {source: order}``).

    >>> _span(5400, False), _span(5400, True), _span(86400, True)
    ('1h30m', '5,400 records', '86,400 records')
    """
    return f"{int(seconds):,} records" if numbered else format_duration(seconds)


def describe_tiers(policy: Policy, *, levels: tuple[int, LevelTable] | None = None,
                   numbered: bool = False) -> list[str]:
    """One sentence per tier, then one for the data-quality gate (and the detectors');
    ``numbered``: durations count records (:data:`NUMBERED_NOTE`)."""
    out = []
    c = policy.combine
    how = {"worst": "when any of", "count": f"when at least {c.min_features} features or "
           "model signals reach it among",
           "weighted_vote": f"when features holding {c.quorum:.0%} of the weight reach it "
           "among"}[c.method]
    for tier in ACTION_TIERS:
        triggers = [t for r in policy.signals if (t := _trigger(r, tier, levels))]
        escalations = [e for e in policy.escalation if Tier.parse(e.to) == tier]
        if not triggers and not escalations:
            out.append(f"{tier}: never reached (no signal has a {tier} threshold and no "
                       "escalation leads here).")
            continue
        text = f"{tier}: "
        if triggers:
            text += f"{how}: " + "; ".join(triggers)
            n = policy.persistence.get(tier)
            text += "; acts at once" if n == 1 else f" for {n} windows in a row"
        if escalations:
            text += ("; or " if triggers else "") + " or ".join(
                f"after {e.after} windows in a row at {e.from_} or above" for e in escalations)
        action = policy.actions.get(tier)
        text += f"; then {action.summary()}"
        if action.require_approval:
            text += ", after a person approves"
        limit = policy.limits.max_actions_per_day.get(tier)
        if limit is not None and action.type != "none":
            text += f"; at most {limit} per " + ("86,400 records" if numbered else "day")
        if action.type == "retrain":
            text += (f"; at most {policy.limits.max_concurrent_retrains} retraining job(s) "
                     "at a time")
        pause = policy.cooldown.get(tier)
        if pause > 0 and action.type != "none":
            text += (f"; then no action at {tier} or below for {_span(pause, numbered)}"
                     + ("" if numbered else " of event time")
                     + " (their windows still record the tier)")
        elif pause > 0:  # nothing runs, so nothing starts it
            text += f"; its cooldown ({_span(pause, numbered)}) never starts"
        out.append(text + ".")
    gate = policy.data_quality
    if not gate.signals:
        out.append("data quality: no data-quality signals: the gate never closes.")
    else:
        sigs = ", ".join(_data_quality_signal(s) for s in gate.signals)
        out.append(
            f"data quality: when {sigs}, {gate.action.summary()} instead of any tier's action"
            + ("; a missing_rate increase counts only when significant across the "
               f"window's features (Benjamini-Hochberg at {policy.detectors.fdr:g})"
               if any(s.detector == "missing_rate" and s.measure == "increase"
                      for s in gate.signals) else "")
            + ("; an out_of_range share counts only when more values leave the reference's "
               "range than a stable feed would, significant across the window's features "
               f"(Benjamini-Hochberg at {policy.detectors.fdr:g})"
               if any(s.detector == "out_of_range" for s in gate.signals) else "")
            + f", until {gate.clear_after} clean window(s) in a row"
            + _gate_cooldown(gate.action.type, gate.cooldown, numbered) + "."
        )
    if policy.hysteresis.factor < 1:
        out.append(f"hysteresis: an active tier clears only past {policy.hysteresis.factor:.0%}"
                   " of its trigger level.")
    out += _cutoff_and_limits(policy, numbered)
    out += _settings(policy, numbered)
    return out


def _gate_cooldown(action: str, pause: float, numbered: bool) -> str:
    """The gate's cooldown, started only when its action runs (as a tier's).

    >>> _gate_cooldown("alert", 3600, False), _gate_cooldown("none", 3600, False)
    ('; at most one alert per 1h', '; its cooldown (1h) never starts')
    """
    if pause <= 0:
        return ""
    if action == "none":  # nothing runs, so nothing starts it
        return f"; its cooldown ({_span(pause, numbered)}) never starts"
    return f"; at most one alert per {_span(pause, numbered)}"


def _cutoff_and_limits(policy: Policy, numbered: bool = False) -> list[str]:
    cut = policy.model.approval_cutoff
    out = [f"approval cut-off: scores at or below {cut:g} are approved; approval_rate reads "
           "it where no decision field is mapped, and shadows compare both models' approval "
           "rate and expected loss at it." if cut is not None else
           "approval cut-off: none (model.approval_cutoff, default none): approval_rate needs "
           "a decision field, and shadows compare no approval rate or expected loss."]
    lim, set_ = policy.limits, policy.limits.model_fields_set
    per_day = lim.max_actions_per_day
    given = per_day.model_fields_set if "max_actions_per_day" in set_ else set()
    days = ", ".join(
        f"{t} " + ("no limit" if per_day.get(t) is None else str(per_day.get(t)))
        + ("" if str(t) in given else " (default)") for t in ACTION_TIERS)
    default = Policy.model_fields["limits"].default_factory().max_concurrent_retrains  # type: ignore[misc]
    day = "86,400 records" if numbered else "24 hours"
    out.append(f"limits: actions per tier in any {day}: {days}; retraining jobs at a time: "
               f"{lim.max_concurrent_retrains} (default {default}); the GPU pool's job "
               "records count too (retraining concurrency, per-day limit and cooldown), so a "
               "restart does not reset them.")
    return out


def _settings(policy: Policy, numbered: bool = False) -> list[str]:
    d, lab = policy.detectors, policy.labels
    cal = d.calibration
    null = ("the reference and each window resampled (the reference is a sample)"
            if cal.reference_noise else "windows resampled from the reference alone")
    out = [f"detectors: PSI/KL empty-bin floor {d.eps:g}; Benjamini-Hochberg FDR {d.fdr:g} "
           f"across features (chi2, ks p-values); own thresholds at {d.alpha:g} false "
           f"alarms; label signals need {d.min_labelled} outcomes in a window; a dataset "
           f"reference gets {d.bins} coarse and {d.fine_bins} fine bins, {d.top_k} levels."]
    out.append("stub windows: a window cut short under half a full window (the last of a "
               "replay's files, or one a reload of the window or a new reference closes) is "
               "a stub: its labels are judged, and its bad records as a share of a full "
               "window's records; its drift, scores, feature quality, estimates and "
               "approvals are recorded, not judged.")
    if policy.calibrated_rates():
        out.append(f"calibrated levels: {cal.draws} null windows per window size, {null}; "
                   "cached per reference and window size.")
    if any(r.detector == "change_point" for r in policy.signals):
        ch = d.change
        how = (f"ADWIN (delta {ch.delta:g})" if ch.method == "adwin" else
               f"Page-Hinkley (delta {ch.delta:g}, threshold {ch.threshold:g})")
        out.append(f"change points: {how} on each metric series in binomial standard "
                   f"errors, after {ch.min_windows} windows; restarts after each change.")
    seg = policy.segments
    if policy.reference.segment:
        out.append(f"segments: the {seg.top_k} most frequent values of reference column "
                   f"{policy.reference.segment!r}, then 'other' (rarer, unseen and missing "
                   f"values), each measured against its own part of the reference once it "
                   f"has {seg.min_events} events there and in the window; its tests join "
                   "the FDR family and its calibrated levels are drawn at its own sizes.")
    else:
        out.append(f"segments: none (reference.segment names no column; top_k "
                   f"{seg.top_k}, min_events {seg.min_events} would apply).")
    co = policy.cohorts
    out.append(f"cohorts: a prediction window's own outcomes are judged once "
               f"{co.min_completeness:.0%} of its approved predictions have one (or none is "
               f"pending), with at least {d.min_labelled}; {co.max_cohorts} cohorts kept.")
    out.append(f"labels: predictions wait {_span(lab.ttl, numbered)} for their outcome, at "
               f"most {lab.max_pending} at a time; {lab.pending_feature_rows} feature rows "
               f"and {lab.labelled_rows} labelled rows kept for updates.")
    return out
