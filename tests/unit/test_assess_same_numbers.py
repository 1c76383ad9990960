"""The vectorised assessment gives the old per-window path's numbers to the last bit.

The old path is kept frozen in ``_old_drift`` and ``_old_quality`` (the code as it was
before it was vectorised). Random counts (zeros, ones, empty rows, padding) go through
both divergence paths; random windows (empty, one event, all missing, unseen levels,
shifted, labelled or not) go through ``assess`` once as it is and once with the old
pieces put back, and the two assessments must serialise to the same bytes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from driftwatch.batch import Batch
from driftwatch.detectors import assess as assess_mod
from driftwatch.detectors import (
    distances,
    divergence,
    drift,
    performance,
    quality,
    segments,
    stacked,
)
from driftwatch.detectors.assess import assess, segment_windows
from driftwatch.detectors.base import SignalResult
from driftwatch.detectors.bins import BinGeometry
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.exact import clopper_pearson
from driftwatch.detectors.prepared import prepare
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

from . import _old_drift as old
from . import _old_quality as old_q

N_REF = 4000
OPT = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal to the last bit (the sign of a zero too), NaN where the other is NaN."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    nan = np.isnan(a)
    return bool((nan == np.isnan(b)).all()
                and (a[~nan].view(np.int64) == b[~nan].view(np.int64)).all())


# -- divergences on raw counts ------------------------------------------------------------
@st.composite
def _counts(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lead = draw(st.sampled_from([(), (1,), (3,)]))
    f, w = draw(st.integers(1, 5)), draw(st.integers(2, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    top = draw(st.sampled_from([1, 2, 10, 10_000]))  # 0/1 counts, small and large ones
    ref = rng.integers(0, top + 1, (f, w))
    cur = rng.integers(0, top + 1, (*lead, f, w))
    if draw(st.booleans()):
        ref[0] = 0  # a feature the reference never saw
    if draw(st.booleans()):
        cur[..., -1, :] = 0  # an empty window for the last feature
    valid = rng.uniform(size=(f, w)) < 0.85
    valid[:, 0] = True
    ref = np.where(valid, ref, 0)  # padding holds no counts
    cur = np.where(valid, cur, 0)
    return ref, cur, valid


@settings(max_examples=120, deadline=None)
@given(data=_counts(), eps=st.sampled_from([1e-4, 1e-2, 0.3]))
def test_divergence_terms_are_the_old_divergences_and_terms(data, eps) -> None:
    ref, cur, valid = data
    new, terms = divergence.divergence_terms(ref, cur, valid, eps)
    was = old.divergences(ref, cur, valid, eps)
    for name in ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger"):
        assert _same_bits(getattr(new, name), getattr(was, name)), name
    assert _same_bits(divergence.divergences(ref, cur, valid, eps).psi, was.psi)
    assert _same_bits(divergence.psi(ref, cur, valid, eps), was.psi)
    old_terms, e, a = old.psi_contributions(ref, cur, valid, eps)
    assert _same_bits(terms, old_terms)
    got = divergence.psi_contributions(ref, cur, valid, eps)
    for x, y in zip(got, (old_terms, e, a), strict=True):
        assert _same_bits(x, y)


@settings(max_examples=120, deadline=None)
@given(data=_counts(), eps=st.sampled_from([1e-4, 1e-2, 0.3]))
def test_psi_without_missing_in_the_same_pass_is_its_own_call(data, eps) -> None:
    """Both masks as one leading axis of two give each half the bits of its own call."""
    ref, cur, valid = data
    cur = cur.reshape(-1, *ref.shape)[0]  # one window
    nomiss = valid.copy()
    nomiss[:, -1] = False
    both = drift.block_stats(ref, cur, valid, eps, without_missing=True)
    alone = drift.block_stats(ref, cur, valid, eps)
    assert alone.psi_without_missing is None
    for name in ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger"):
        assert _same_bits(getattr(both.div, name), getattr(alone.div, name)), name
    assert _same_bits(both.psi_terms, alone.psi_terms)
    assert _same_bits(both.psi_without_missing, divergence.psi(ref, cur, nomiss, eps))
    assert _same_bits(both.psi_without_missing, old.divergences(ref, cur, nomiss, eps).psi)


@settings(max_examples=60, deadline=None)
@given(data=_counts(), k=st.integers(1, 6), ties=st.booleans())
def test_top_bins_pick_the_old_bins(data, k, ties) -> None:
    ref, cur, valid = data
    contrib = old.psi_contributions(ref, cur, valid, 1e-4)[0]
    if ties:
        contrib = np.round(contrib, 1)  # equal contributions: the same tie-breaking
    x = np.where(valid, contrib, -np.inf)
    assert np.array_equal(divergence.top_bins(x, k), old.top_bins(x, k))


@settings(max_examples=60, deadline=None)
@given(data=_counts(), p_values=st.booleans())
def test_ks_and_wasserstein_are_the_old_two_passes(data, p_values) -> None:
    ref, cur, _ = data  # as fine counts: the last column is the missing one
    widths = np.random.default_rng(ref.size).uniform(0, 2, ref.shape[-1] - 1)
    ks, w = distances.ks_and_wasserstein(ref, cur, widths, p_values=p_values)
    ks_o, w_o = old.ks_fine(ref, cur, p_values=p_values), old.wasserstein_fine(ref, cur, widths)
    for x, y in ((ks.stat, ks_o.stat), (ks.bound, ks_o.bound), (w.stat, w_o.stat),
                 (w.bound, w_o.bound)):
        assert _same_bits(x, y)
    assert np.array_equal(ks.argmax, ks_o.argmax)
    assert (ks.p_value is None) == (ks_o.p_value is None) == (not p_values)
    if p_values:
        assert _same_bits(ks.p_value, ks_o.p_value)


# -- the binomial interval ----------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200_000), frac=st.floats(0.0, 1.0),
       alpha=st.sampled_from([0.01, 0.05, 0.001]))
def test_clopper_pearson_is_both_scipy_beta_quantiles(n, frac, alpha) -> None:
    ks = np.unique(np.array([0, 1, int(frac * n), n - 1, n]).clip(0, n))
    lo, hi = clopper_pearson(ks, n, alpha)
    for k, a, b in zip(ks.tolist(), lo.tolist(), hi.tolist(), strict=True):
        assert a == (stats.beta.ppf(alpha / 2, k, n - k + 1) if k > 0 else 0.0)
        assert b == (stats.beta.ppf(1 - alpha / 2, k + 1, n - k) if k < n else 1.0)
    one_lo, one_hi = clopper_pearson(int(ks[-1]), n, alpha)  # a scalar stays a scalar
    assert one_lo.shape == () and float(one_hi) == hi[-1]


# -- whole windows through assess ---------------------------------------------------------
def _population(rng: np.random.Generator, n: int, *, shift: float = 0.0,
                missing: float = 0.0, unseen: float = 0.0) -> pd.DataFrame:
    x0 = rng.normal(shift, 1, n)
    x0[rng.uniform(size=n) < missing] = np.nan
    score = 1 / (1 + np.exp(-(x0 - 1.5)))
    score = np.where(np.isnan(score), 0.2, score)
    purpose = rng.choice(["car", "home", "boat"], n, p=[0.6, 0.3, 0.1]).astype(object)
    purpose[rng.uniform(size=n) < unseen] = "spaceship"
    return pd.DataFrame({
        "x0": x0, "x1": rng.lognormal(10, 0.5, n), "x2": rng.poisson(3, n).astype(float),
        "purpose": purpose, "score": score,
        "label": (rng.uniform(size=n) < score).astype(float),
        "decision": np.where(score < 0.3, "approve", "decline"),
        "exposure": rng.lognormal(9, 0.5, n),
        "channel": rng.choice(["web", "shop", "phone"], n, p=[0.5, 0.4, 0.1])})


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    return ReferenceProfile.build(_population(np.random.default_rng(0), N_REF),
                                  numeric=["x0", "x1", "x2"], categorical=["purpose"],
                                  exposure="exposure", segment="channel", segment_top_k=2)


@pytest.fixture(scope="module")
def cal(prof) -> Calibrator:
    return Calibrator(prof, np.random.default_rng(1), rates=(0.05, 0.01), n_draws=200)


def _window(prof: ReferenceProfile, n: int, seed: int, **kw: float
            ) -> tuple[Sketch, list[Sketch]]:
    """The whole window's sketch and one per segment (the reference's segment order)."""
    df = _population(np.random.default_rng(seed), n, **kw)
    sk = Sketch.empty(prof.layout)
    codes = prof.schema.encode_categorical(0, df["purpose"].to_numpy())[:, None]
    decision = np.where(df["decision"] == "approve", 1, 0).astype(np.int8)
    batch = Batch.build("predictions", n=n, n_numeric=3, n_categorical=1,
                        numeric=df[["x0", "x1", "x2"]].to_numpy(), categorical=codes,
                        score=df["score"].to_numpy(), decision=decision,
                        exposure=df["exposure"].to_numpy(),
                        segment=df["channel"].to_numpy().astype(str))
    sk.add_batch(batch)
    ok = decision == 1
    sk.add_labelled(df["score"].to_numpy()[ok], df["label"].to_numpy()[ok],
                    df["exposure"].to_numpy()[ok])
    parts = [Sketch.empty(prof.layout) for _ in prof.segment_references()]
    for code, rows in prof.segments.coder.split(batch):  # type: ignore[union-attr]
        parts[code].add_batch(rows)
    return sk, parts


def _old_terms(ref, cur, valid, eps):
    return old.divergences(ref, cur, valid, eps), old.psi_contributions(ref, cur, valid, eps)[0]


def _old_quality(prep, cur, cfg, *, row=None, records_at_least=0, **kw):
    """The old quality pass; it computed its own numbers, so a window's row is unread (and
    it had no stub windows, which these windows are not)."""
    assert records_at_least == 0
    return old_q.quality_signals(prep, cur, cfg, **kw)


def _own_pass_block_stats(*args, without_missing: bool = False, **kw):
    return drift.block_stats(*args, **kw)


@contextlib.contextmanager
def _old_path() -> Iterator[None]:
    """``assess`` with the pieces it had before they were vectorised."""
    with contextlib.ExitStack() as stack:
        for target, name, value in (
            (assess_mod, "quality_signals", _old_quality),
            (assess_mod, "aggregate_signals", old.aggregate_signals),
            (assess_mod, "business_signals", old_q.business_signals),
            (segments, "drift_signals", old.drift_signals),
            # the old results took PSI without the missing bin in a pass of their own
            (stacked, "block_stats", _own_pass_block_stats),
            (drift, "divergence_terms", lambda r, c, v, e: (old.divergences(r, c, v, e), None)),
            (drift, "ks_and_wasserstein", lambda r, c, w, p_values=True: (
                old.ks_fine(r, c, p_values=p_values), old.wasserstein_fine(r, c, w))),
            (stacked, "divergence_terms", _old_terms),  # the score's, for score_psi
            (stacked, "top_bins", old.top_bins),
            (performance, "calibration", old_q.calibration),
            (BinGeometry, "coarse", old.coarse),
        ):
            stack.enter_context(mock.patch.object(target, name, value))
        yield


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from([0, 1, 2, 7, 300, 2500]), seed=st.integers(0, 10_000),
       shift=st.sampled_from([0.0, 0.3, 2.0]), missing=st.sampled_from([0.0, 0.4, 1.0]),
       unseen=st.sampled_from([0.0, 0.05, 1.0]), calibrated=st.booleans(),
       with_bad=st.booleans())
def test_assess_gives_the_old_paths_bytes(prof, cal, n, seed, shift, missing, unseen,
                                          calibrated, with_bad) -> None:
    cur, parts = _window(prof, n, seed, shift=shift, missing=missing, unseen=unseen) if n \
        else (Sketch.empty(prof.layout), None)
    kw = {"model": "m", "window_id": 1, "start_time": 0.0, "end_time": 1.0,
          "calibrator": cal if calibrated else None,
          "segments": segment_windows(prof, parts, min_events=1),
          "bad_records": {"rejected": seed % 3} if with_bad else None,
          "config": DetectorConfig(min_labelled=1)}
    new = assess(prof, cur, **kw)
    with _old_path():
        was = assess(prof, cur, **kw)
    assert len(new.signals) == len(was.signals)
    if n > 300:  # the segments' own results are compared too
        assert {s.segment for s in new.signals} == {None, "web", "shop", "other"}
    assert orjson.dumps(_without_bh(new.to_dict()), option=OPT) == \
        orjson.dumps(was.to_dict(), option=OPT)


#: What the new path adds to ``missing_rate`` and ``out_of_range`` (their
#: Benjamini-Hochberg adjustment, checked against scipy's in
#: ``test_quality_flags_match_the_old_path``).
_BH_KEYS = ("p_adjusted", "significant", "fdr")


def _without_bh(d: dict) -> dict:
    for s in d["signals"]:
        if s["signal"] in ("missing_rate", "out_of_range"):
            for k in _BH_KEYS:
                s["details"].pop(k, None)
    return d


def test_old_path_is_really_swapped_in() -> None:
    """The comparison above compares two paths, not one with itself."""
    with _old_path():
        assert assess_mod.quality_signals is _old_quality
        assert segments.drift_signals is old.drift_signals
        assert stacked.top_bins is old.top_bins  # the blocks' and the score's own passes
    assert assess_mod.quality_signals is quality.quality_signals
    assert segments.drift_signals is drift.drift_signals


def test_quality_flags_match_the_old_path(prof) -> None:
    cur, _ = _window(prof, 500, 3, missing=0.4, unseen=0.2)
    res, flags = assess_mod.quality_signals(prepare(prof), cur, DetectorConfig())
    res_o, flags_o = old_q.quality_signals(prepare(prof), cur, DetectorConfig())
    assert flags.numeric.tolist() == flags_o.numeric.tolist() == [True, False, False]
    assert flags.categorical.tolist() == flags_o.categorical.tolist() == [True]
    # the new path adds the missing rates' Benjamini-Hochberg adjustment (checked against
    # scipy's); everything else is as before
    miss = [r for r in res if r.signal == "missing_rate"]
    p = np.array([r.p_value for r in miss])
    want = stats.false_discovery_control(p, method="bh")
    assert [r.details["p_adjusted"] for r in miss] == pytest.approx(want.tolist(), abs=1e-15)
    assert [r.details["significant"] for r in miss] == (want <= 0.01).tolist()
    oor = [r for r in res if r.signal == "out_of_range"]  # the same, over the range tests
    want = stats.false_discovery_control(np.array([r.p_value for r in oor]), method="bh")
    assert [r.details["p_adjusted"] for r in oor] == pytest.approx(want.tolist(), abs=1e-15)
    assert [r.details["significant"] for r in oor] == (want <= 0.01).tolist()
    plain = [r.to_dict() for r in res]
    for d in plain:
        for k in _BH_KEYS:
            d["details"].pop(k, None)
    assert plain == [r.to_dict() for r in res_o]


def test_signal_dict_keeps_its_keys_and_order() -> None:
    r = SignalResult("psi", "drift", 0.2, "x", 0.1, 10, 5, None, {"eps": 1e-4})
    assert list(r.to_dict()) == ["signal", "group", "value", "feature", "threshold", "n_ref",
                                 "n_cur", "p_value", "details"]
    s = SignalResult("psi", "drift", 0.2, "x", 0.1, 10, 5, None, {"eps": 1e-4}, "web")
    d = s.to_dict()
    assert next(iter(d)) == "segment" and SignalResult.from_dict(d) == s
    assert d["details"] == s.details and d["details"] is not s.details
