"""``assess`` end to end on seeded streams: each kind of change is flagged by its own
signals and by nothing else."""

from __future__ import annotations

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.detectors.assess import assess
from driftwatch.detectors.base import Assessment
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.config import DetectorConfig, alarm
from driftwatch.errors import ConfigError, DriftwatchError
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

N_REF = 50_000
NUM = [f"x{j}" for j in range(20)]
CAT = ["c0", "c1", "c2"]
LABEL_SIGNALS = {"bad_rate", "auc", "gini", "ks_score", "calibration_ratio"}


def _population(rng, n, *, shift=0.0, spread=1.0, default_mult=1.0):
    cols = {}
    for j in range(20):
        kind = j % 4
        if kind == 0:
            v = rng.normal(0, 1, n)
        elif kind == 1:
            v = rng.lognormal(10, 0.5, n)
        elif kind == 2:
            v = rng.poisson(3, n).astype(float)
        else:
            v = rng.gamma(2.0, 1.0, n)
        cols[f"x{j}"] = v
    cols["x5"] = cols["x5"] + shift * np.exp(10.125) * np.sqrt(np.exp(0.25) - 1)  # in sds
    cols["c0"] = rng.choice(list("abcdef"), n, p=[0.3, 0.25, 0.2, 0.15, 0.07, 0.03])
    cols["c1"] = rng.choice(["x", "y", "z"], n)
    cols["c2"] = rng.choice([f"l{i}" for i in range(25)], n)
    lc = (cols["x0"] + (np.log(cols["x1"]) - 10) / 0.5) / np.sqrt(2)
    score = 0.3 + 0.05 * spread * lc
    cols["score"] = score
    cols["decision"] = np.where(score < 0.3, "approve", "decline")
    cols["label"] = (rng.uniform(size=n) < np.clip(score * default_mult, 0, 1)).astype(float)
    return pd.DataFrame(cols)


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    return ReferenceProfile.build(_population(np.random.default_rng(0), N_REF),
                                  numeric=NUM, categorical=CAT)


@pytest.fixture(scope="module")
def cal(prof) -> Calibrator:
    return Calibrator(prof, np.random.default_rng(1), rates=(0.01,), n_draws=1000)


def _sketch(prof, df: pd.DataFrame, *, labelled: bool = False) -> Sketch:
    n = len(df)
    cat = np.stack(
        [prof.schema.encode_categorical(j, df[c].to_numpy()) for j, c in enumerate(CAT)], 1
    )
    dec = np.where(df["decision"] == "approve", 1, 0)
    s = Sketch.empty(prof.layout)
    s.add_batch(Batch.build("predictions", n=n, n_numeric=20, n_categorical=3,
                            numeric=df[NUM].to_numpy(), categorical=cat,
                            score=df["score"].to_numpy(), decision=dec))
    if labelled:
        ok = dec == 1
        s.add_labelled(df["score"].to_numpy()[ok], df["label"].to_numpy()[ok])
    return s


def _run(prof, cal, sketch, **kw) -> Assessment:
    return assess(prof, sketch, model="credit", window_id=7, start_time=0.0, end_time=3600.0,
                  calibrator=cal, **kw)


def _alarms(a: Assessment) -> set[tuple[str, str | None]]:
    return {(s.signal, s.feature) for s in a.signals if alarm(s)}


@pytest.mark.parametrize("n,seed", [(1_000, 11), (10_000, 12), (100_000, 13)])
def test_no_drift_window_raises_nothing(prof, cal, n, seed) -> None:
    a = _run(prof, cal, _sketch(prof, _population(np.random.default_rng(seed), n), labelled=True))
    assert _alarms(a) == set()
    assert a.n_events == n and a.n_labelled > 0


def test_a_02_sd_shift_in_one_feature_is_flagged_on_it_alone(prof, cal) -> None:
    df = _population(np.random.default_rng(21), 10_000, shift=0.2)
    a = _run(prof, cal, _sketch(prof, df))
    flagged = {f for sig, f in _alarms(a)}
    assert flagged == {"x5"}
    assert {sig for sig, f in _alarms(a)} <= {"wasserstein", "ks", "chi2", "psi", "js",
                                               "hellinger", "cramers_v", "kl_cur_ref",
                                               "kl_ref_cur"}
    w = next(a.select(signal="wasserstein", feature="x5"))
    assert w.value == pytest.approx(0.2, abs=0.04)  # in reference sds
    psi = next(a.select(signal="psi", feature="x5"))
    top = psi.details["top_bins"][0]
    assert top["bin"].startswith("(") and top["cur"] != top["ref"]
    lo, hi = top["lo"], top["hi"]
    assert (lo is None or lo in prof.layout.numeric.coarse_edges[5]) and (
        hi is None or hi in prof.layout.numeric.coarse_edges[5])
    agg = next(a.select(signal="wasserstein_aggregate"))
    assert agg.details["feature"] == "x5" and agg.details["above"] == ["x5"]


def test_score_variance_doubling_is_flagged_by_confidence_alone(prof, cal) -> None:
    df = _population(np.random.default_rng(22), 10_000, spread=np.sqrt(2.0))
    a = _run(prof, cal, _sketch(prof, df))
    groups = {s.group for s in a.signals if alarm(s)}
    assert groups == {"confidence"}
    vr = next(a.select(signal="variance_ratio"))
    assert alarm(vr) and vr.value == pytest.approx(2.0, rel=0.08)
    assert vr.details["ci_low"] > 1.5
    assert not alarm(next(a.select(signal="mean_shift")))


def test_outcome_change_with_unchanged_features_is_flagged_by_label_signals_only(prof, cal) -> None:
    df = _population(np.random.default_rng(23), 10_000, default_mult=1.6)
    a = _run(prof, cal, _sketch(prof, df, labelled=True))
    flagged = {sig for sig, _ in _alarms(a)}
    assert flagged <= LABEL_SIGNALS
    assert {"bad_rate", "calibration_ratio"} <= flagged


def test_feature_and_detector_selection(prof, cal) -> None:
    s = _sketch(prof, _population(np.random.default_rng(24), 2_000))
    cfg = DetectorConfig(detectors=("drift", "variance_ratio"), features=("x1", "c0"))
    a = _run(prof, cal, s, config=cfg)
    assert {x.group for x in a.signals} == {"drift", "confidence"}
    assert {x.feature for x in a.select(group="drift")} == {"x1", "c0", None}
    assert {x.signal for x in a.select(group="confidence")} == {"variance_ratio"}
    a2 = _run(prof, None, s, config=DetectorConfig(detectors=("psi",), aggregate=()))
    assert {x.signal for x in a2.signals} == {"psi"} and len(a2.signals) == 23
    with pytest.raises(ConfigError, match="did you mean 'wasserstein'"):
        DetectorConfig(detectors=("wasserstien",))


def test_results_carry_what_a_person_needs(prof, cal) -> None:
    a = _run(prof, cal, _sketch(prof, _population(np.random.default_rng(25), 5_000)))
    psi = next(a.select(signal="psi", feature="c2"))
    assert (psi.n_ref, psi.n_cur) == (N_REF, 5_000)
    assert psi.threshold == max(0.1, psi.details["threshold_calibrated"])
    assert {"bin", "ref", "cur", "psi"} == set(psi.details["top_bins"][0])
    ks = next(a.select(signal="ks", feature="x0"))
    assert {"bound", "at", "p_adjusted", "significant"} <= set(ks.details)
    chi = next(a.select(signal="chi2", feature="c0"))
    assert chi.details["dof"] == 5 and 0 <= chi.p_value <= chi.details["p_adjusted"] <= 1


def test_assessment_is_json_safe_and_deterministic(prof, cal) -> None:
    s = _sketch(prof, _population(np.random.default_rng(26), 3_000, shift=0.5), labelled=True)
    a, b = _run(prof, cal, s), _run(prof, cal, s)
    blob = orjson.dumps(a.to_dict())
    assert blob == orjson.dumps(b.to_dict())
    assert Assessment.from_dict(orjson.loads(blob)) == a


def test_empty_window_and_foreign_layout(prof, cal) -> None:
    a = _run(prof, cal, Sketch.empty(prof.layout))
    assert a.n_events == 0 and not any(alarm(s) for s in a.signals)
    other = ReferenceProfile.build(_population(np.random.default_rng(3), 500),
                                   numeric=NUM, categorical=CAT)
    with pytest.raises(DriftwatchError, match="layout"):
        _run(prof, cal, Sketch.empty(other.layout))
