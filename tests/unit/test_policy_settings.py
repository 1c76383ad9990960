"""The policy's ``detectors:`` and ``labels:`` settings: each one is acted on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.detectors.assess import assess
from driftwatch.detectors.registry import CALIBRATED_LEVELS
from driftwatch.errors import ConfigError
from driftwatch.pipeline import ModelMonitor
from driftwatch.policy import load_policy_text
from driftwatch.policy.errors import PolicyErrors
from driftwatch.policy.explain import explain_policy
from driftwatch.policy.levels import detector_config, load_reference
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

HEAD = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: settings}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 1000}
signals:
  - detector: psi
    thresholds: {mild: {calibrated: {false_alarm_rate: 0.01}}}
"""
SPEC = WindowSpec(kind="count", pane_size=1000)


def _policy(extra: str = ""):  # type: ignore[no-untyped-def]
    return load_policy_text(HEAD + extra, file="settings.yaml")


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 5000
    return pd.DataFrame({"x": rng.normal(size=n), "y": rng.exponential(size=n),
                         "c": rng.choice([f"l{i}" for i in range(8)], n),
                         "score": rng.beta(2, 5, n), "label": rng.uniform(size=n) < 0.1,
                         "decision": "approve"})


@pytest.fixture(scope="module")
def profile(data) -> ReferenceProfile:
    return ReferenceProfile.build(data, numeric=["x", "y"], categorical=["c"])


def _window(profile: ReferenceProfile, n: int, *, labelled: int = 0, seed: int = 5,
            spread: float = 1.0, clump: bool = True) -> Sketch:
    rng = np.random.default_rng(seed)
    s = Sketch.empty(profile.layout)
    num = np.c_[rng.normal(size=n) * spread, rng.exponential(size=n)]
    if clump:
        num[: n // 20, 0] = 9.0  # a clump beyond the reference: empty reference bins
    s.add_batch(Batch.build("predictions", n=n, n_numeric=2, n_categorical=1, numeric=num,
                            categorical=rng.integers(0, 8, (n, 1)).astype(np.int32),
                            score=rng.beta(2, 5, n) * spread, decision=np.ones(n, np.int8)))
    if labelled:
        s.add_labelled(rng.beta(2, 5, labelled), (rng.uniform(size=labelled) < 0.1) * 1.0)
    return s


def _signal(profile, policy, sketch, name, feature=None):  # type: ignore[no-untyped-def]
    a = assess(profile, sketch, model="m", window_id=0, start_time=0.0, end_time=1.0,
               config=detector_config(policy))
    return next(a.select(signal=name, feature=feature), None)


def test_eps_fdr_alpha_and_min_labelled_reach_the_detectors(profile) -> None:
    base, tuned = _policy(), _policy(
        "detectors: {eps: 0.01, fdr: 0.2, alpha: 0.2, min_labelled: 50}\n")
    cfg = detector_config(tuned)
    assert (cfg.eps, cfg.fdr, cfg.alpha, cfg.min_labelled) == (0.01, 0.2, 0.2, 50)
    w = _window(profile, 2000, labelled=100, spread=1.02)
    p0, p1 = (_signal(profile, p, w, "psi", "x") for p in (base, tuned))
    assert p1.details["eps"] == 0.01 and p1.value != p0.value  # the empty-bin floor
    clean = _window(profile, 2000, clump=False)
    c0, c1 = (_signal(profile, p, clean, "chi2", "y") for p in (base, tuned))
    assert c1.details["fdr"] == 0.2 and c1.threshold < c0.threshold  # BH at 0.2 cuts lower
    v0, v1 = (_signal(profile, p, w, "mean_shift") for p in (base, tuned))
    assert v1.threshold <= v0.threshold  # the significance margin at alpha 0.2 is narrower
    assert _signal(profile, base, w, "bad_rate") is None  # 100 outcomes < 500
    assert _signal(profile, tuned, w, "bad_rate") is not None  # >= 50


def test_calibration_draws_and_reference_noise_reach_the_calibrator(profile) -> None:
    with_noise = ModelMonitor("m", profile, SPEC, policy=_policy(
        "detectors: {calibration: {draws: 500}}\n"))
    without = ModelMonitor("m", profile, SPEC, policy=_policy(
        "detectors: {calibration: {draws: 500, reference_noise: false}}\n"))
    assert with_noise.calibrator.n_draws == 500 and with_noise.calibrator.reference_noise
    assert not without.calibrator.reference_noise
    a = with_noise.calibrator.thresholds(1000).numeric["psi"]
    b = without.calibrator.thresholds(1000).numeric["psi"]
    assert np.all(a > b)  # the reference's own noise widens the null: (1/n + 1/n_ref)


def test_too_few_draws_for_a_rate_is_a_policy_error() -> None:
    with pytest.raises(PolicyErrors, match="needs at least 2000 null draws"):
        load_policy_text(HEAD.replace("0.01}", "0.001}") + "detectors: {calibration: "
                         "{draws: 1000}}\n", file="settings.yaml")


def test_bins_fine_bins_and_top_k_bin_a_dataset_reference(tmp_path, data) -> None:
    path = tmp_path / "ref.csv"
    data.to_csv(path, index=False)
    policy = _policy("detectors: {bins: 5, fine_bins: 40, top_k: 3}\n")
    prof = load_reference(path, policy)
    lay = prof.layout
    assert int(lay.numeric.n_coarse[0]) == 5
    assert len(lay.numeric.fine_edges[0]) <= 41
    assert len(prof.schema.levels[0]) == 3
    saved = prof.save(tmp_path / "ref.json")
    assert load_reference(saved, policy).layout.to_dict() == lay.to_dict()
    with pytest.raises(ConfigError, match="saved reference profile has bins=5"):
        load_reference(saved, _policy("detectors: {bins: 10}\n"))
    load_reference(saved, _policy())  # defaults are not a request for other bins


def test_label_settings_size_the_joiner_and_buffers(profile) -> None:
    policy = _policy("labels: {ttl: 30d, max_pending: 5000, pending_feature_rows: 700, "
                     "labelled_rows: 300}\n")
    mon = ModelMonitor("m", profile, SPEC, policy=policy)
    assert mon.joiner.ttl == 30 * 86400 and mon.joiner.max_pending == 5000
    assert mon.joiner.max_orphans == 500
    assert mon.pending_features.capacity == 700 and mon.labelled_buffer.capacity == 300
    mon.policy = _policy("labels: {ttl: 7d, max_pending: 10}\n")  # a hot reload
    mon.apply_label_settings()
    assert mon.joiner.ttl == 7 * 86400 and mon.joiner.max_pending == 10
    # outcomes waiting for their prediction: a tenth of max_pending, as when built
    assert mon.joiner.max_orphans == 1


def test_buffer_sizes_follow_a_reload_and_a_restored_checkpoint(profile) -> None:
    # both were fixed when the monitor was built: a hot reload kept the old sizes, and a
    # checkpoint brought back the sizes it was saved with, whatever the policy said since
    import json

    mon = ModelMonitor("m", profile, SPEC, policy=_policy(
        "labels: {pending_feature_rows: 700, labelled_rows: 300}\n"))
    mon.process(_feed(profile, 600))  # 600 predictions wait for their outcome
    rng = np.random.default_rng(1)
    mon.labelled_buffer.add(numeric=rng.normal(size=(300, 2)),
                            categorical=np.zeros((300, 1), np.int32),
                            label=np.ones(300), score=np.full(300, 0.3))
    held = mon.labelled_buffer
    assert (len(mon.pending_features), len(held)) == (600, 300)

    mon.policy = _policy("labels: {pending_feature_rows: 50, labelled_rows: 100}\n")
    mon.apply_label_settings()  # what a hot reload does
    assert (mon.pending_features.capacity, len(mon.pending_features)) == (50, 50)
    assert mon.pending_features.evicted == 550
    assert mon.labelled_buffer is held  # the actions hold this object
    assert (held.capacity, len(held), held.seq) == (100, 100, 300)
    assert held.frame()["seq"].tolist() == list(range(201, 301))

    saved = json.loads(json.dumps(mon.state_dict()))
    again = ModelMonitor("m", profile, SPEC, policy=_policy(
        "labels: {pending_feature_rows: 80, labelled_rows: 20}\n"))
    again.load_state(saved)
    assert (again.pending_features.capacity, len(again.pending_features)) == (80, 50)
    assert (again.labelled_buffer.capacity, len(again.labelled_buffer)) == (20, 20)
    assert again.labelled_buffer.frame()["seq"].tolist() == list(range(281, 301))


def test_explain_shows_every_default_and_the_levels_with_a_reference(profile) -> None:
    from driftwatch.policy.levels import calibrated_table

    policy = _policy()
    text = explain_policy(policy)
    for key in ("fdr: 0.01", "eps: 0.0001", "min_labelled: 500", "draws: 2000",
                "reference_noise: true", "ttl: 120d", "max_pending: 1000000", "bins: 10"):
        assert key in text, key
    assert "its calibrated level (0.01 false alarms)" in text
    table = calibrated_table(policy, profile, 1000)
    shown = explain_policy(policy, levels=(1000, table))
    x = table["psi"]["x"][0.01]
    assert f"at 1000 events: x {x:.4g}, y " in shown
    mon = ModelMonitor("m", profile, SPEC, policy=policy)
    (res,) = mon.process(_feed(profile, 1000))
    psi = next(res.assessment.select(signal="psi", feature="x"))
    assert psi.details[CALIBRATED_LEVELS]["0.01"] == pytest.approx(x)  # explain = replay


def _feed(profile: ReferenceProfile, n: int):  # type: ignore[no-untyped-def]
    from driftwatch.connectors.base import Polled

    rng = np.random.default_rng(8)
    b = Batch.build("predictions", n=n, n_numeric=2, n_categorical=1,
                    numeric=np.c_[rng.normal(size=n), rng.exponential(size=n)],
                    categorical=rng.integers(0, 8, (n, 1)).astype(np.int32),
                    event_time=np.arange(n, dtype=float), score=rng.beta(2, 5, n))
    return Polled(batches=[b])
