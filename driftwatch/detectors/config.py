"""What :func:`~driftwatch.detectors.assess.assess` computes, and its alarm levels.

Every result's ``threshold`` is an *effect size* (a change worth acting on) combined with
a *significance* level for the window's size: ``max(effect, null quantile)``. Small
windows then do not alarm on noise, and large windows do not alarm on negligible shifts
(DOMAIN.md: at 1M rows any shift is "significant"). The null quantile comes from a
:class:`~driftwatch.detectors.calibrate.Calibrator` (resampling) for the histogram
statistics, and from each statistic's sampling distribution for the moment and rate
statistics (variance ratio, mean shift, entropy, bad rate, calibration, AUC).

>>> cfg = DetectorConfig(thresholds={"psi": 0.2})
>>> cfg.threshold("psi"), cfg.threshold("ks")
(0.2, 0.1)
>>> cfg.wants("psi", "drift"), DetectorConfig(detectors=("confidence",)).wants("psi", "drift")
(True, False)
>>> DetectorConfig(thresholds={"pis": 0.2})
Traceback (most recent call last):
...
driftwatch.errors.ConfigError: unknown threshold name 'pis', found did you mean 'psi'?
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from driftwatch.detectors.base import BELOW, TWO_SIDED, SignalResult
from driftwatch.detectors.divergence import DEFAULT_EPS
from driftwatch.detectors.registry import AGGREGATED
from driftwatch.detectors.registry import SIGNALS as REGISTRY
from driftwatch.errors import ConfigError

__all__ = ["BELOW", "DEFAULT_THRESHOLDS", "SIGNALS", "TWO_SIDED", "DetectorConfig", "alarm"]

#: Signal name -> group, for every per-window signal ``assess`` can emit (from the registry).
SIGNALS: Mapping[str, str] = MappingProxyType(
    {n: s.group for n, s in REGISTRY.items() if not n.endswith("_aggregate")}
)

#: Effect sizes (from :data:`~driftwatch.detectors.registry.SIGNALS`). Drift: the
#: statistic itself (``wasserstein`` in reference-sd units). ``missing_rate``: absolute
#: increase over the reference share; ``out_of_range`` and ``new_category_rate``,
#: ``bad_record_rate``: shares. ``variance_ratio``: ratio; ``mean_shift``: reference sds;
#: ``entropy``, ``bad_rate``, ``expected_loss``: relative increase; ``calibration_ratio``:
#: relative excess over 1; ``approval_rate``: absolute change; ``auc``, ``gini``,
#: ``ks_score``: absolute drop.
DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {n: s.effect for n, s in REGISTRY.items() if s.effect is not None}
)

def alarm(result: SignalResult) -> bool:
    """The detector's own verdict on one result, by the signal's direction
    (:attr:`SignalResult.exceeds <driftwatch.detectors.base.SignalResult.exceeds>`).

    >>> from driftwatch.detectors.base import SignalResult
    >>> alarm(SignalResult("auc", "performance", 0.70, threshold=0.72))
    True
    """
    return result.exceeds


_AGGREGATE = AGGREGATED


def _unknown(kind: str, name: str, valid: list[str]) -> ConfigError:
    close = difflib.get_close_matches(name, valid, n=1)
    found = f"did you mean {close[0]!r}?" if close else f"valid: {', '.join(sorted(valid))}"
    return ConfigError(f"unknown {kind} name {name!r}", found=found)


@dataclass(frozen=True)
class DetectorConfig:
    """Which detectors run on which features, and their alarm levels.

    ``detectors``: signal or group names to compute (None: all). ``features``: feature
    names to report (None: all). ``eps``: share floor for PSI/KL (see
    :mod:`~driftwatch.detectors.divergence`). ``alpha``: false-alarm rate per signal and
    feature for significance-based thresholds. ``fdr``: Benjamini–Hochberg level for the
    ``chi2`` and ``ks`` p-values across features. ``thresholds``: effect sizes overriding
    :data:`DEFAULT_THRESHOLDS`. ``aggregate``: drift statistics summarised across features
    (``<name>_aggregate`` results). ``weights``: feature weights for the weighted mean
    (default 1). ``top_bins``: moved bins listed per feature. ``approval_cutoff``: when
    no decision field is mapped, scores at or below it count as approved.
    ``spike_excess``: share by which one fine bin must exceed its reference share (and be
    5× it) to count as a point mass, the signature of a default value filling nulls.
    ``min_labelled``: joined outcomes a window needs before its label-based signals
    (bad rate, AUC/Gini/KS, calibration) are reported at all: a handful of early
    outcomes says nothing about a cohort.
    """

    detectors: tuple[str, ...] | None = None
    features: tuple[str, ...] | None = None
    eps: float = DEFAULT_EPS
    alpha: float = 0.01
    fdr: float = 0.01
    thresholds: Mapping[str, float] = field(default_factory=dict)
    aggregate: tuple[str, ...] = _AGGREGATE
    weights: Mapping[str, float] = field(default_factory=dict)
    top_bins: int = 3
    approval_cutoff: float | None = None
    spike_excess: float = 0.05
    min_labelled: int = 500

    def __post_init__(self) -> None:
        valid = [*SIGNALS, *set(SIGNALS.values())]
        for name in self.detectors or ():
            if name not in valid:
                raise _unknown("detector", name, valid)
        for name in self.thresholds:
            if name not in DEFAULT_THRESHOLDS:
                raise _unknown("threshold", name, list(DEFAULT_THRESHOLDS))
        for name in self.aggregate:
            if name not in _AGGREGATE:
                raise _unknown("aggregate", name, list(_AGGREGATE))
        if not (0 < self.alpha < 1 and 0 < self.fdr < 1):
            raise ConfigError("alpha and fdr must be in (0, 1)", found=f"{self.alpha}, {self.fdr}")
        if not self.eps > 0:
            raise ConfigError("eps must be positive", found=repr(self.eps))
        merged = {**DEFAULT_THRESHOLDS, **self.thresholds}
        object.__setattr__(self, "thresholds", MappingProxyType(merged))

    def threshold(self, signal: str) -> float:
        return float(self.thresholds[signal])

    def wants(self, signal: str, group: str | None = None) -> bool:
        """Whether ``signal`` (of ``group``) is selected."""
        if self.detectors is None:
            return True
        return signal in self.detectors or (group or SIGNALS.get(signal)) in self.detectors

    def wants_group(self, group: str) -> bool:
        if self.detectors is None:
            return True
        return any(d == group or SIGNALS.get(d) == group for d in self.detectors)
