"""Numbers in their domain: a threshold a detector can reach, a window that fits memory.

Types are checked by the schema (and ``.nan``/``.inf`` refused there); this pass refuses
values of the right type that cannot mean anything: a KS threshold of 7 (KS lies in
[0, 1]), a data-quality share of 7, a pane of 10^26 events, a window of a million panes,
an integer too large for a checkpoint.

>>> value_range("ks", "value"), value_range("auc", "change"), value_range("psi", "value")
((0.0, 1.0), (-1.0, 1.0), (0.0, inf))
>>> from driftwatch.yamlio import load_yaml
>>> doc = load_yaml("window: {pane: 100000000000000000000000000}\\n", file="p.yaml")
>>> print(domain_errors(doc)[0])
p.yaml:1:16: a count pane holds at most 1000000000 events, found 100000000000000000000000000
  at window.pane
    1 | window: {pane: 100000000000000000000000000}
      |                ^
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from driftwatch.errors import PolicyError
from driftwatch.policy.catalog import DETECTORS, measure_name
from driftwatch.yamlio import LocatedDoc, PathT

__all__ = ["MAX_INT", "MAX_PANES", "MAX_PANE_EVENTS", "VALUE_RANGES", "domain_errors",
           "value_range"]

#: Integers beyond this cannot round-trip through a float or a JSON checkpoint.
MAX_INT = 2**53
#: Events in one count pane (a pane is one unit of memory; its size is free, but 10^9 events
#: in one pane would never close).
MAX_PANE_EVENTS = 10**9
#: Panes in a window: the ring holds one set of sketches per pane.
MAX_PANES = 1000

_INF = math.inf
_UNIT = (0.0, 1.0)
_POS = (0.0, _INF)

#: The range of each detector's ``value``; changes against the reference follow from it.
VALUE_RANGES: dict[str, tuple[float, float]] = {
    "psi": _POS, "kl_cur_ref": _POS, "kl_ref_cur": _POS, "js": _UNIT, "hellinger": _UNIT,
    "chi2": _POS, "cramers_v": _UNIT, "ks": _UNIT, "wasserstein": _POS,
    "psi_aggregate": _POS, "js_aggregate": _UNIT, "hellinger_aggregate": _UNIT,
    "ks_aggregate": _UNIT, "wasserstein_aggregate": _POS, "cramers_v_aggregate": _UNIT,
    "missing_rate": _UNIT, "out_of_range": _UNIT, "new_category_rate": _UNIT,
    "bad_record_rate": _UNIT,
    "score_psi": _POS, "variance_ratio": _POS, "mean_shift": (-_INF, _INF), "entropy": _POS,
    "approval_rate": _UNIT, "bad_rate": _UNIT, "expected_loss": _POS, "metric": (-_INF, _INF),
    "auc": _UNIT, "gini": (-1.0, 1.0), "ks_score": _UNIT, "calibration_ratio": _POS,
}


def value_range(detector: str, measure: str, direction: str = "above") -> tuple[float, float]:
    """Where ``measure`` of ``detector`` can lie (``abs``: its size)."""
    lo, hi = VALUE_RANGES.get(detector, (-_INF, _INF))
    spec = DETECTORS.get(detector)
    if measure == "rel_change":
        lo, hi = -_INF, _INF
    elif measure != "value" and (spec is None or measure not in spec.variants):
        # change, abs_change, increase: current minus reference
        lo, hi = lo - hi, hi - lo
    if direction == "abs":
        lo, hi = 0.0, max(abs(lo), abs(hi))
    return lo, hi


Err = Callable[..., None]


def domain_errors(doc: LocatedDoc) -> list[PolicyError]:
    """Every number of the right type that is out of its domain, at ``file:line:col``."""
    out: list[PolicyError] = []
    flagged: set[PathT] = set()

    def err(path: PathT, message: str, *, found: str | None = None,
            hint: str | None = None) -> None:
        if path not in flagged:
            flagged.add(path)
            out.append(doc.error(path, message, found=found, hint=hint, cls=PolicyError))

    data = doc.data if isinstance(doc.data, dict) else {}
    _window(data.get("window"), err)
    _huge(data, (), err)
    for i, rule in enumerate(_items(data.get("signals"))):
        _signal(rule, ("signals", i), err)
    gate = data.get("data_quality")
    for i, rule in enumerate(_items(gate.get("signals") if isinstance(gate, dict) else None)):
        _quality(rule, ("data_quality", "signals", i), err)
    return out


def _items(value: Any) -> list[Any]:
    return [v if isinstance(v, dict) else {} for v in value] if isinstance(value, list) else []


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _huge(value: Any, path: PathT, err: Err) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _huge(v, (*path, k), err)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _huge(v, (*path, i), err)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        err(path, "number too large (more than 2^53)", found=str(value))


def _window(w: Any, err: Err) -> None:
    if not isinstance(w, dict):
        return
    pane, panes = w.get("pane"), w.get("panes")
    if w.get("kind", "count") == "count" and isinstance(pane, int) and pane > MAX_PANE_EVENTS:
        err(("window", "pane"), f"a count pane holds at most {MAX_PANE_EVENTS} events",
            found=str(pane))
    if isinstance(panes, int) and not isinstance(panes, bool) and panes > MAX_PANES:
        err(("window", "panes"), f"a window holds at most {MAX_PANES} panes", found=str(panes),
            hint="each pane keeps its own sketches: use larger panes instead")


def _in_range(value: Any, lo: float, hi: float, what: str, path: PathT, err: Err) -> None:
    if not _number(value) or lo <= value <= hi:
        return
    span = f"is at least {lo:g}" if hi == _INF else f"is at most {hi:g}" if lo == -_INF \
        else f"lies between {lo:g} and {hi:g}"
    err(path, f"out of range: {what} {span}", found=f"{value:g}",
        hint="a threshold outside that range is always or never reached")


def _signal(rule: dict[Any, Any], path: PathT, err: Err) -> None:
    det = rule.get("detector")
    if not isinstance(det, str) or det not in DETECTORS:
        return
    info = DETECTORS[det]
    measure = rule.get("measure", info.measure)
    direction = rule.get("direction", info.direction)
    if not isinstance(measure, str) or not isinstance(direction, str):
        return
    lo, hi = value_range(det, measure, direction)
    what = (f"{det} value" if measure == "value" else measure_name(det, measure)) + (
        " (its size, for direction abs)" if direction == "abs" else "")
    groups: list[tuple[PathT, Any]] = [((*path, "thresholds"), rule.get("thresholds")),
                                       ((*path, "clear"), rule.get("clear"))]
    overrides = rule.get("overrides")
    if isinstance(overrides, dict):
        groups += [((*path, "overrides", f), th) for f, th in overrides.items()]
    for gpath, tiers in groups:
        if isinstance(tiers, dict):
            for tier, v in tiers.items():
                _in_range(v, lo, hi, what, (*gpath, tier), err)


def _quality(rule: dict[Any, Any], path: PathT, err: Err) -> None:
    det = rule.get("detector")
    if not isinstance(det, str) or det not in DETECTORS:
        return
    measure = rule.get("measure", DETECTORS[det].measure)
    if not isinstance(measure, str):
        return
    lo, hi = value_range(det, measure)
    what = f"{det} {measure} (a share)"
    _in_range(rule.get("threshold"), lo, hi, what, (*path, "threshold"), err)
    overrides = rule.get("overrides")
    if isinstance(overrides, dict):
        for f, v in overrides.items():
            _in_range(v, lo, hi, what, (*path, "overrides", f), err)
