"""Every signal the detectors emit, in one table both the detectors and the policy read.

One :class:`SignalSpec` per signal name: its group, whether it is one result per feature
or per model, the direction in which it is worse, what a policy compares by default, the
changes it reports in ``details``, its effect size, and whether a calibrated (null
distribution) level exists for it. The detail keys that carry thresholds are constants
here too, so the key the policy reads is the key the detector writes.

>>> SIGNALS["ks"].calibrated, SIGNALS["ks"].statistic
(True, 'two-sample Kolmogorov-Smirnov distance on the fine bins')
>>> SIGNALS["approval_rate"].calibrated_measure
'abs_change'
>>> SIGNALS["psi"].variants   # PSI over the present values alone, missing bin left out
('psi_without_missing',)
>>> rate_key(0.01), sorted(n for n, s in SIGNALS.items() if s.group == "business")[:3]
('0.01', ['approval_rate', 'bad_rate', 'change_point'])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

__all__ = [
    "AGGREGATED",
    "CALIBRATED",
    "CALIBRATED_LEVELS",
    "CALIBRATED_N",
    "SIGNALS",
    "THRESHOLD_CALIBRATED",
    "THRESHOLD_EFFECT",
    "Direction",
    "Level",
    "Measure",
    "SignalSpec",
    "measure_name",
    "measures_of",
    "rate_key",
]

Direction = Literal["above", "below", "abs"]
Measure = Literal["value", "change", "abs_change", "rel_change", "increase",
                  "psi_without_missing"]
Level = Literal["feature", "model", "metric"]

#: ``details`` key: the null-distribution level at the detector's own ``alpha``.
THRESHOLD_CALIBRATED = "threshold_calibrated"
#: ``details`` key: ``{rate_key(rate): level}`` for every false-alarm rate asked for.
CALIBRATED_LEVELS = "calibrated_thresholds"
#: ``details`` key: the effect size (the rule-of-thumb part of ``threshold``).
THRESHOLD_EFFECT = "threshold_effect"
#: ``details`` key: the window size the calibrated levels were computed for.
CALIBRATED_N = "calibrated_n"


def measures_of(spec: SignalSpec) -> tuple[str, ...]:
    """What a rule on this signal may compare: its value, its changes, its variants.

    >>> measures_of(SIGNALS["psi"])
    ('value', 'psi_without_missing')
    """
    return ("value", *spec.changes, *spec.variants)


def measure_name(detector: str, measure: str) -> str:
    """How a rule's compared number is named in messages: the detector, a change of it,
    or a variant under its own name.

    >>> measure_name("psi", "value"), measure_name("psi", "psi_without_missing")
    ('psi', 'psi_without_missing')
    >>> measure_name("bad_rate", "rel_change")
    'bad_rate rel_change'
    """
    if measure == "value":
        return detector
    spec = SIGNALS.get(detector)
    return measure if spec is not None and measure in spec.variants else f"{detector} {measure}"


def rate_key(rate: float) -> str:
    """The text a false-alarm rate is keyed by in ``details[CALIBRATED_LEVELS]``."""
    return format(float(rate), "g")


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """One signal: see the module docstring. ``effect`` is the default effect size (None:
    no single threshold); ``calibrated_measure`` is what a calibrated level is compared
    with (the measure the null distribution is taken of). ``variants``: other forms of the
    value, in ``details`` under their own name, on the value's own scale (so a threshold
    has the value's range), which a rule may compare instead of it."""

    name: str
    group: str
    level: Level
    statistic: str
    direction: Direction = "above"
    measure: Measure = "value"
    changes: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    effect: float | None = None
    calibrated: bool = False
    calibrated_measure: Measure = "value"


_F, _M = "feature", "model"
_ABS_REL = ("abs_change", "rel_change")


def _specs() -> dict[str, SignalSpec]:
    s = [
        SignalSpec("psi", "drift", _F, "population stability index on reference deciles",
                   variants=("psi_without_missing",), effect=0.1, calibrated=True),
        SignalSpec("kl_cur_ref", "drift", _F, "KL divergence of current from reference",
                   effect=0.05, calibrated=True),
        SignalSpec("kl_ref_cur", "drift", _F, "KL divergence of reference from current",
                   effect=0.05, calibrated=True),
        SignalSpec("js", "drift", _F, "Jensen-Shannon distance (base 2)", effect=0.1,
                   calibrated=True),
        SignalSpec("hellinger", "drift", _F, "Hellinger distance", effect=0.1, calibrated=True),
        SignalSpec("chi2", "drift", _F, "chi-square homogeneity statistic", calibrated=True),
        SignalSpec("cramers_v", "drift", _F, "Cramer's V of the chi-square table", effect=0.1,
                   calibrated=True),
        SignalSpec("ks", "drift", _F, "two-sample Kolmogorov-Smirnov distance on the fine bins",
                   effect=0.1, calibrated=True),
        SignalSpec("wasserstein", "drift", _F, "Wasserstein-1 distance in reference sds",
                   effect=0.1, calibrated=True),
        SignalSpec("missing_rate", "data_quality", _F, "share of missing values",
                   measure="increase", changes=("increase",), effect=0.02),
        SignalSpec("out_of_range", "data_quality", _F,
                   "share of values outside the reference range", effect=0.01),
        SignalSpec("new_category_rate", "data_quality", _F,
                   "share of levels the reference never saw", effect=0.01),
        SignalSpec("bad_record_rate", "data_quality", _M, "share of records rejected",
                   effect=0.01),
        SignalSpec("field_absent", "data_quality", _F,
                   "share of the run's first records without the feature's mapped path",
                   effect=0.5),
        SignalSpec("score_psi", "confidence", _M, "PSI of the model score (system stability)",
                   effect=0.1, calibrated=True),
        SignalSpec("variance_ratio", "confidence", _M, "score variance, current / reference",
                   effect=1.5, calibrated=True),
        SignalSpec("mean_shift", "confidence", _M, "score mean change in reference sds",
                   direction="abs", effect=0.1),
        SignalSpec("entropy", "confidence", _M, "mean binary predictive entropy of the score",
                   changes=("change", "rel_change"), effect=0.1),
        SignalSpec("approval_rate", "business", _M, "share of approved applications",
                   direction="abs", measure="abs_change", changes=_ABS_REL, effect=0.05,
                   calibrated=True, calibrated_measure="abs_change"),
        SignalSpec("bad_rate", "business", _M, "bad share among labelled events",
                   changes=_ABS_REL, effect=0.2),
        SignalSpec("expected_loss", "business", _M, "predicted loss per unit of exposure",
                   changes=("rel_change",), effect=0.2),
        SignalSpec("metric", "business", "metric", "mean of a user metric field",
                   direction="abs", measure="change", changes=("change",)),
        SignalSpec("change_point", "business", "metric",
                   "ADWIN or Page-Hinkley change in a metric series (1 in the window it fires)"),
        SignalSpec("auc", "performance", _M, "AUC on labelled events", direction="below",
                   changes=("change",), effect=0.03),
        SignalSpec("gini", "performance", _M, "Gini (2 AUC - 1) on labelled events",
                   direction="below", changes=("change",), effect=0.06),
        SignalSpec("ks_score", "performance", _M, "KS between the classes' score CDFs",
                   direction="below", changes=("change",), effect=0.05),
        SignalSpec("calibration_ratio", "performance", _M, "observed / expected bads",
                   changes=("change",), effect=0.2),
        SignalSpec("expected_bad_rate", "estimated", _M,
                   "mean P(bad) of the window's approved predictions (label-free)",
                   changes=_ABS_REL, effect=0.2),
        SignalSpec("expected_gini", "estimated", _M,
                   "Gini the window's scores imply if the champion stays calibrated "
                   "(label-free)", direction="below", changes=("change",), effect=0.06),
        SignalSpec("cohort_bad_rate", "cohort", "metric",
                   "bad share of one prediction window's outcomes (named cohort)",
                   changes=_ABS_REL, effect=0.2),
        SignalSpec("cohort_gini", "cohort", "metric",
                   "Gini of one prediction window's outcomes (named cohort)",
                   direction="below", changes=("change",), effect=0.06),
        SignalSpec("cohort_bad_rate_gap", "cohort", "metric",
                   "realised minus expected bad rate of a cohort (expected: mean P(bad))"),
        SignalSpec("cohort_gini_gap", "cohort", "metric",
                   "realised minus expected Gini of a cohort", direction="below"),
    ]
    out = {x.name: x for x in s}
    for name in AGGREGATED:
        out[f"{name}_aggregate"] = SignalSpec(
            f"{name}_aggregate", "drift", _M,
            f"the worst feature's {name}, with the spread across features in details")
    return out


#: Drift statistics that get a ``<name>_aggregate`` summary across features.
AGGREGATED = ("psi", "js", "hellinger", "ks", "wasserstein", "cramers_v")

#: Every signal, by name.
SIGNALS: Mapping[str, SignalSpec] = MappingProxyType(_specs())

#: Signals with a calibrated (null-distribution) level.
CALIBRATED: frozenset[str] = frozenset(n for n, s in SIGNALS.items() if s.calibrated)
