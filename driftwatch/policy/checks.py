"""Cross-field rules, checked once every value has its type: thresholds in order,
clear levels on the right side, features that exist, settings that fit their method.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from driftwatch.errors import PolicyError
from driftwatch.policy.catalog import DETECTORS, measures_of
from driftwatch.policy.durations import DURATION_HELP, parse_duration
from driftwatch.policy.schema import (
    Combine,
    DataQualityGate,
    DataQualityRule,
    Escalation,
    ModelRef,
    SignalRule,
    TierThresholds,
    Window,
)
from driftwatch.policy.settings import ChangeSettings, DetectorSettings
from driftwatch.policy.tiers import ACTION_TIERS, Tier
from driftwatch.yamlio import LocatedDoc, PathT, nearest

__all__ = ["semantic_errors"]

M = TypeVar("M", bound=BaseModel)


def semantic_errors(doc: LocatedDoc) -> list[PolicyError]:
    """Every cross-field problem in the sections of a policy whose types are right.

    Each section is validated on its own, so a type error in one section does not hide
    an ordering error in another: all are reported in one run.
    """
    out: list[PolicyError] = []

    def err(path: PathT, message: str, *, found: str | None = None, hint: str | None = None,
            key: bool = False) -> None:
        out.append(doc.error(path, message, found=found, hint=hint, key=key, cls=PolicyError))

    data: dict[str, Any] = doc.data if isinstance(doc.data, dict) else {}
    window = _valid(Window, data.get("window"))
    if window is not None:
        _window(window, err)
    model = _valid(ModelRef, data.get("model"))
    declared = model.features if model is not None else None
    combine = _valid(Combine, data.get("combine", {}))
    settings = _valid(DetectorSettings, data.get("detectors", {}))
    for i, item in enumerate(_items(data.get("signals"))):
        rule = _valid(SignalRule, item)
        if rule is not None:
            _signal(rule, ("signals", i), declared, err)
            if settings is not None:
                _draws(rule, settings, ("signals", i), err)
            if combine is not None and combine.method == "worst":
                for name, used in (("weight", rule.weight != 1.0), ("weights", rule.weights)):
                    if used:
                        err(("signals", i, name), f"{name} applies to combine method: "
                            "weighted_vote or count", found=f"method {combine.method!r}", key=True)
    gate_data = data.get("data_quality") if isinstance(data.get("data_quality"), dict) else {}
    for i, item in enumerate(_items(gate_data.get("signals"))):
        dq = _valid(DataQualityRule, item)
        if dq is not None:
            path: PathT = ("data_quality", "signals", i)
            _measure(dq.detector, dq.measure, path, err)
            _features(dq.detector, dq.features, dq.overrides, {}, path, declared, err)
    gate = _valid(DataQualityGate, gate_data)
    if gate is not None and gate.action.type not in ("alert", "none"):
        err(("data_quality", "action"), "the data-quality gate's action must be alert or none",
            found=repr(gate.action.type),
            hint="a broken feed should alert people, not change the model")
    change = settings.change if settings is not None else None
    if change is not None and change.method != "page_hinkley" and (
            change.threshold != ChangeSettings().threshold):
        # ADWIN has no such level: the value was read and never used
        err(("detectors", "change", "threshold"), "threshold applies to method: page_hinkley",
            found=f"method {change.method!r}", key=True,
            hint="ADWIN's sensitivity is delta; remove threshold or use page_hinkley")
    if settings is not None and settings.fine_bins % settings.bins:
        # each coarse bin is cut into whole fine ones: the reference could not be binned
        written = data.get("detectors")
        key = "fine_bins" if isinstance(written, dict) and "fine_bins" in written else "bins"
        err(("detectors", key), f"fine_bins must be a multiple of bins ({settings.bins})",
            found=f"fine_bins {settings.fine_bins}",
            hint="each coarse bin is split into fine_bins / bins fine ones (200 and 10 by "
                 "default)")
    if combine is not None:
        if combine.min_features != 1 and combine.method != "count":
            err(("combine", "min_features"), "min_features applies to method: count",
                found=f"method {combine.method!r}", key=True)
        if combine.quorum != 0.5 and combine.method != "weighted_vote":
            err(("combine", "quorum"), "quorum applies to method: weighted_vote",
                found=f"method {combine.method!r}", key=True)
    seen: set[str] = set()
    for i, item in enumerate(_items(data.get("escalation"))):
        esc = _valid(Escalation, item)
        if esc is None:
            continue
        if Tier.parse(esc.to) <= Tier.parse(esc.from_):
            err(("escalation", i, "to"), f"escalation must go up from {esc.from_!r}",
                found=repr(esc.to))
        if esc.from_ in seen:
            err(("escalation", i, "from"), f"a second escalation from {esc.from_!r}",
                hint="keep one rule per tier")
        seen.add(esc.from_)
    return out


def _valid(model: type[M], data: Any) -> M | None:
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def _items(data: Any) -> list[Any]:
    return data if isinstance(data, list) else []


def _window(w: Window, err: Any) -> None:
    if w.kind == "count":
        if isinstance(w.pane, str) or w.pane < 1:
            err(("window", "pane"), "a count window's pane is a number of events (at least 1)",
                found=repr(w.pane), hint="or set kind: time for a duration")
        if w.allowed_lateness > 0:
            err(("window", "allowed_lateness"), "allowed_lateness applies to kind: time",
                key=True)
    else:
        try:
            if not isinstance(w.pane, str) or parse_duration(w.pane) <= 0:
                raise ValueError(DURATION_HELP)
        except ValueError:
            err(("window", "pane"), "a time window's pane is a duration like 15m, 1h or 7d",
                found=repr(w.pane))


def _signal(rule: SignalRule, path: PathT, declared: list[str] | None, err: Any) -> None:
    d = rule.direction
    base = rule.thresholds
    if all(base.get(t) is None for t in ACTION_TIERS):
        err((*path, "thresholds"), "give a threshold for at least one tier (mild, moderate, "
            "severe)", key=True)
    _ordered(base, (*path, "thresholds"), d, err)
    for feat, ov in rule.overrides.items():
        merged = {str(t): ov.get(t) if ov.get(t) is not None else base.get(t)
                  for t in ACTION_TIERS}
        _ordered(TierThresholds(**merged), (*path, "overrides", feat), d, err)
    if rule.clear is not None:
        for t in ACTION_TIERS:
            c, trig = rule.clear.get(t), base.get(t)
            if c is None:
                continue
            cp = (*path, "clear", str(t))
            if not isinstance(trig, float):
                err(cp, f"clear needs a fixed {t} threshold to clear from", key=True)
            elif (c >= trig) if d != "below" else (c <= trig):
                side = "below" if d != "below" else "above"
                err(cp, f"the {t} clear level must be {side} its trigger {trig:g}",
                    found=f"{c:g}")
    _measure(rule.detector, rule.measure, path, err)
    _calibrated(rule, path, err)
    _features(rule.detector, rule.features, rule.overrides, rule.weights, path, declared, err)


def _draws(rule: SignalRule, settings: DetectorSettings, path: PathT, err: Any) -> None:
    """The null resampling must see a rate's tail at least twice to place its level."""
    draws = settings.calibration.draws
    for th in (rule.thresholds, *rule.overrides.values()):
        for t in ACTION_TIERS:
            v = th.get(t)
            if v is not None and not isinstance(v, float):
                rate = v.calibrated.false_alarm_rate
                if draws * rate < 2:
                    err((*path, "thresholds", str(t), "calibrated", "false_alarm_rate"),
                        f"false_alarm_rate {rate:g} needs at least {math.ceil(2 / rate)} "
                        f"null draws", found=f"detectors.calibration.draws: {draws}",
                        hint="raise detectors.calibration.draws or the rate")


def _calibrated(rule: SignalRule, path: PathT, err: Any) -> None:
    """A calibrated level exists only for some detectors, and for one measure."""
    info = DETECTORS[rule.detector]
    for where, th in (((*path, "thresholds"), rule.thresholds),
                      *(((*path, "overrides", f), ov) for f, ov in rule.overrides.items())):
        for t in ACTION_TIERS:
            v = th.get(t)
            if v is None or isinstance(v, float):
                continue
            if not info.calibrated:
                ok = sorted(n for n, d in DETECTORS.items() if d.calibrated)
                err((*where, str(t)), f"{rule.detector!r} has no calibrated level",
                    hint="give a number, or calibrate one of: " + ", ".join(ok))
            elif rule.measure != info.calibrated_measure:
                err((*where, str(t)), f"a calibrated {rule.detector} level is of its "
                    f"{info.calibrated_measure}, not its {rule.measure}",
                    hint=f"write measure: {info.calibrated_measure} or a number")


def _measure(detector: str, measure: str, path: PathT, err: Any) -> None:
    reported = measures_of(DETECTORS[detector])
    if measure not in reported:
        err((*path, "measure"), f"{detector!r} does not report {measure}",
            hint=f"measures of {detector}: {', '.join(reported)}")


def _ordered(th: TierThresholds, path: PathT, direction: str, err: Any) -> None:
    fixed = [(t, th.get(t)) for t in ACTION_TIERS if isinstance(th.get(t), float)]
    if direction == "abs":
        for t, v in fixed:
            if v < 0:
                err((*path, str(t)), "an abs threshold is a size: it cannot be negative",
                    found=f"{v:g}")
    for (lo_t, lo), (hi_t, hi) in itertools.pairwise(fixed):
        bad = hi >= lo if direction == "below" else hi <= lo
        if bad:
            word = "below" if direction == "below" else "above"
            err((*path, str(hi_t)),
                f"thresholds out of order: {hi_t} must be {word} {lo_t} ({lo:g}) "
                f"for direction {direction!r}", found=f"{hi:g}")
    rates = [(t, th.get(t).calibrated.false_alarm_rate) for t in ACTION_TIERS
             if th.get(t) is not None and not isinstance(th.get(t), float)]
    for (lo_t, lo), (hi_t, hi) in itertools.pairwise(rates):
        if hi >= lo:
            err((*path, str(hi_t), "calibrated", "false_alarm_rate"),
                f"a {hi_t} false_alarm_rate must be smaller than the {lo_t} one ({lo:g})",
                found=f"{hi:g}")


def _features(detector: str, features: Any, overrides: dict[str, Any],
              weights: dict[str, float], path: PathT, declared: list[str] | None,
              err: Any) -> None:
    if DETECTORS[detector].level == "model":
        if features != "all":
            err((*path, "features"), f"{detector!r} is a model-level signal: it has no features",
                hint="remove features: (or write features: all)", key=True)
        for name, mapping in (("overrides", overrides), ("weights", weights)):
            if mapping:
                err((*path, name), f"{detector!r} is a model-level signal: per-feature "
                    f"{name} do not apply", key=True, hint="use weight: for the signal")
        return
    listed = features if isinstance(features, list) else None
    if DETECTORS[detector].level == "metric":  # business metric names, not features
        declared = None
    for i, f in enumerate(listed or []):
        if declared is not None and f not in declared:
            _unknown_feature(f, declared, (*path, "features", i), err, "model.features")
    for name, mapping in (("overrides", overrides), ("weights", weights)):
        for f, v in mapping.items():
            fp = (*path, name, f)
            if listed is not None and f not in listed:
                _unknown_feature(f, listed, fp, err, "this signal's features", key=True)
            elif declared is not None and f not in declared:
                _unknown_feature(f, declared, fp, err, "model.features", key=True)
            if name == "weights" and v <= 0:
                err(fp, "a weight must be greater than 0", found=f"{v:g}")


def _unknown_feature(f: str, valid: list[str], path: PathT, err: Any, where: str,
                     key: bool = False) -> None:
    guess = nearest(f, valid)
    err(path, f"feature {f!r} is not in {where}" + (f" (did you mean {guess!r}?)" if guess
                                                    else ""),
        hint="features: " + ", ".join(valid), key=key)
