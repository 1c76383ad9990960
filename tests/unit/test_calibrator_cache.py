"""A hot-reloaded policy reuses the levels already drawn unless their inputs changed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy import load_policy_text
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

HEAD = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: reload}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 1000}
detectors: {calibration: {draws: 200}}
signals:
  - detector: psi
"""


def _policy(thresholds: str, persistence: int = 1):  # type: ignore[no-untyped-def]
    return load_policy_text(HEAD + f"    thresholds: {thresholds}\npersistence: {persistence}\n",
                            file="reload.yaml")


def _polled(rng: np.random.Generator, n: int, start: int) -> Polled:
    return Polled(batches=[Batch.build(
        "predictions", n=n, n_numeric=1, numeric=rng.normal(size=(n, 1)),
        ids=[f"e{start + i}" for i in range(n)], score=rng.uniform(size=n),
        event_time=np.arange(start, start + n, dtype=float))])


def test_reloads_that_keep_the_rates_do_not_resample() -> None:
    rng = np.random.default_rng(0)
    prof = ReferenceProfile.build(pd.DataFrame({"x": rng.normal(size=5000),
                                                "score": rng.uniform(size=5000)}),
                                  numeric=["x"])
    cal = "{calibrated: {false_alarm_rate: 0.01}}"
    mon = ModelMonitor("credit", prof, WindowSpec(kind="count", pane_size=1000),
                       policy=_policy(f"{{mild: {cal}}}"))
    assert len(mon.process(_polled(rng, 1000, 0))) == 1
    first = mon.calibrator
    assert mon.calibrators.built == 1
    # edits that leave the rates alone: new tiers, persistence; each is a new Policy object
    for n, edit in enumerate([_policy(f"{{mild: {cal}, severe: 0.9}}"),
                              _policy(f"{{mild: {cal}}}", persistence=2)]):
        mon.policy = edit
        assert len(mon.process(_polled(rng, 1000, 1000 * (n + 1)))) == 1
        assert mon.calibrator is first
    assert mon.calibrators.built == 1
    assert sorted(first._cache) == [1000]  # one resampling for the window size
    # a new rate needs new levels, once; going back reuses the first ones
    mon.policy = _policy("{mild: {calibrated: {false_alarm_rate: 0.05}}}")
    assert mon.calibrator is not first and mon.calibrators.built == 2
    mon.policy = _policy(f"{{mild: {cal}}}")
    assert mon.calibrator is first and mon.calibrators.built == 2


def test_calibration_rates_kept_on_the_policy_are_the_rates_asked_each_time() -> None:
    from driftwatch.detectors.config import DetectorConfig
    from driftwatch.policy.levels import calibration_rates

    pol = _policy("{mild: {calibrated: {false_alarm_rate: 0.02}}, severe: 0.3}")
    for alpha in (0.01, 0.05, 0.01):  # asked again: the kept tuple, alpha by alpha
        cfg = DetectorConfig(alpha=alpha)
        want = {r for rs in pol.calibrated_rates().values() for r in rs} | {alpha}
        assert calibration_rates(pol, cfg) == tuple(sorted(want, reverse=True))
    assert calibration_rates(_policy("{mild: 0.1}"), DetectorConfig()) == ()
