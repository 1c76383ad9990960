"""The data-quality gate's ``missing_rate`` increase counts only when significant across
the window's features (Benjamini-Hochberg at ``detectors.fdr``): a wide table's chance
rises are not a broken feed, a lost share of one feature still is."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from driftwatch.policy.loader import load_policy_text
from driftwatch.replay.monitor import Monitor

POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: m}
model: {name: m, reference: ref.parquet}
window: {kind: count, pane: 1000, panes: 1}
signals:
  - detector: psi
    features: all
    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}
data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
actions: {mild: none, moderate: none, severe: none}
"""


def _frame(n: int, features: int, missing: dict[int, int], share: float) -> pd.DataFrame:
    """Every feature missing on exactly ``share`` of the rows, save those in ``missing``
    (feature -> missing rows)."""
    rng = np.random.default_rng(n + features)
    x = rng.normal(size=(n, features))
    for j in range(features):
        k = missing.get(j, round(share * n))
        x[rng.permutation(n)[:k], j] = np.nan
    return pd.DataFrame(x, columns=[f"V{j}" for j in range(features)])


def _fault(features: int, lost: int) -> tuple[bool, float]:
    """Whether the gate closes when feature 0 of ``features`` (half missing in the
    reference) has ``lost`` missing of 1,000 rows; and that increase's binomial p."""
    ref = _frame(40_000, features, {}, 0.5)
    mon = Monitor.from_reference(ref, load_policy_text(POLICY), score=None, label=None,
                                 decision=None)
    v = mon.assess(_frame(1000, features, {0: lost}, 0.5))
    return v.decision.data_quality_fault, float(stats.binom.sf(lost - 1, 1000, 0.5))


def test_one_feature_a_chance_rise_above_the_effect_closes_the_gate() -> None:
    fault, p = _fault(1, 556)  # +5.6 points: above the 0.05 effect, p about 2e-4
    assert p < 0.01 and fault


def test_the_same_rise_among_many_features_is_noise() -> None:
    fault, p = _fault(300, 556)  # the same p, but one of 300 tests: BH needs p < 0.01/300
    assert p > 0.01 / 300
    assert not fault


@pytest.mark.parametrize("features", [1, 300])
def test_a_lost_tenth_closes_the_gate_however_wide(features: int) -> None:
    fault, p = _fault(features, 600)  # the feed lost a tenth of the feature's values
    assert p < 1e-9 and fault
