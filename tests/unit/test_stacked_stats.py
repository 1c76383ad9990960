"""Windows closed together get their statistics in one numpy pass, with the same bits.

:func:`~driftwatch.detectors.stacked.window_stats` stacks the windows of one poll; every
window's assessment must serialise to the bytes of that window assessed alone, the
monitor must take that path for a poll that closes several windows, and a window that
fails must still fail alone.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.batch import Batch
from driftwatch.connectors.base import Polled
from driftwatch.detectors import confidence, performance, quality, segments
from driftwatch.detectors.assess import assess
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.prepared import prepare
from driftwatch.detectors.stacked import window_stats
from driftwatch.pipeline import ModelMonitor
from driftwatch.pipeline import judging as judging_mod
from driftwatch.policy import load_policy_text
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

OPT = orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY
LEVELS = ("car", "home", "boat")


def _frame(rng: np.random.Generator, n: int, shift: float = 0.0,
           missing: float = 0.0) -> pd.DataFrame:
    x0 = rng.normal(shift, 1, n)
    x0[rng.uniform(size=n) < missing] = np.nan
    purpose = rng.choice([*LEVELS, "spaceship"][: 3 + (shift > 0)], n).astype(object)
    return pd.DataFrame({"x0": x0, "x1": rng.lognormal(10, 0.5, n), "purpose": purpose,
                         "score": 1 / (1 + np.exp(-(x0 - 1.5 * shift)))})


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    return ReferenceProfile.build(_frame(np.random.default_rng(0), 4000),
                                  numeric=["x0", "x1"], categorical=["purpose"])


def _batch(prof: ReferenceProfile, df: pd.DataFrame, start: int = 0) -> Batch:
    n = len(df)
    codes = prof.schema.encode_categorical(0, df["purpose"].to_numpy())[:, None]
    return Batch.build("predictions", n=n, n_numeric=2, n_categorical=1,
                       numeric=df[["x0", "x1"]].to_numpy(), categorical=codes,
                       score=np.nan_to_num(df["score"].to_numpy(), nan=0.3),
                       ids=[f"e{start + i}" for i in range(n)],
                       event_time=np.arange(start, start + n, dtype=float))


def _sketch(prof: ReferenceProfile, n: int, seed: int, shift: float,
            missing: float) -> Sketch:
    sk = Sketch.empty(prof.layout)
    if n:
        rng = np.random.default_rng(seed)
        df = _frame(rng, n, shift, missing)
        sk.add_batch(_batch(prof, df))
        score = np.nan_to_num(df["score"].to_numpy(), nan=0.3)
        sk.add_labelled(score, rng.uniform(size=n) < score)  # every event's outcome
    return sk


def _bytes(a) -> bytes:  # type: ignore[no-untyped-def]
    return orjson.dumps(a.to_dict(), option=OPT)


KW = {"model": "m", "window_id": 1, "start_time": 0.0, "end_time": 1.0}
CONFIGS = [DetectorConfig(), DetectorConfig(eps=1e-2, top_bins=5),
           DetectorConfig(detectors=("ks", "chi2", "score_psi")),
           DetectorConfig(detectors=("data_quality",), alpha=0.2, fdr=0.3,
                          spike_excess=0.01),
           DetectorConfig(detectors=("performance",), min_labelled=1)]


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.sampled_from([0, 1, 2, 7, 300, 2000]), min_size=1, max_size=6),
       seed=st.integers(0, 10_000), shift=st.sampled_from([0.0, 0.4, 2.0]),
       missing=st.sampled_from([0.0, 0.3, 1.0]), cfg=st.sampled_from(CONFIGS))
def test_each_row_of_one_pass_is_its_window_alone(prof, sizes, seed, shift, missing,
                                                    cfg) -> None:
    sketches = [_sketch(prof, n, seed + i, shift * (i % 2), missing)
                for i, n in enumerate(sizes)]
    stats = window_stats(prepare(prof), sketches, cfg)
    assert [s.sketch for s in stats] == sketches
    for sk, pre in zip(sketches, stats, strict=True):
        alone = assess(prof, sk, config=cfg, **KW)
        with mock.patch.object(segments, "numeric_stats", side_effect=AssertionError), \
                mock.patch.object(segments, "categorical_stats", side_effect=AssertionError), \
                mock.patch.object(confidence, "score_stats", side_effect=AssertionError), \
                mock.patch.object(quality, "quality_rows", side_effect=AssertionError), \
                mock.patch.object(performance, "discrimination", side_effect=AssertionError):
            together = assess(prof, sk, config=cfg, stats=pre, **KW)  # no pass of its own
        assert _bytes(together) == _bytes(alone)


def test_stats_of_another_window_or_setting_are_not_read(prof) -> None:
    a, b = _sketch(prof, 500, 1, 0.0, 0.0), _sketch(prof, 500, 2, 2.0, 0.3)
    cfg = DetectorConfig()
    stats = window_stats(prepare(prof), [a, b], cfg)
    want = _bytes(assess(prof, b, config=cfg, **KW))
    assert _bytes(assess(prof, b, config=cfg, stats=stats[0], **KW)) == want
    other = DetectorConfig(eps=1e-2)
    assert _bytes(assess(prof, b, config=other, stats=stats[1], **KW)) == \
        _bytes(assess(prof, b, config=other, **KW))
    assert _bytes(assess(prof, b, config=other, **KW)) != want  # eps shows in the bytes


# -- the monitor ----------------------------------------------------------------------
POLICY = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: sliding}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 500, panes: 4, mode: sliding}
signals:
  - detector: psi
    thresholds: {mild: 0.1, severe: 0.5}
persistence: 2
"""


def _monitor(prof: ReferenceProfile) -> ModelMonitor:
    pol = load_policy_text(POLICY, file="sliding.yaml")
    return ModelMonitor("credit", prof, WindowSpec(kind="count", pane_size=500, panes=4,
                                                   mode="sliding"), policy=pol)


def _polls(prof: ReferenceProfile) -> list[Polled]:
    rng = np.random.default_rng(5)
    out = []
    for i, shift in enumerate([0.0, 1.0, 0.0]):  # each poll closes several windows
        df = _frame(rng, 3000, shift, 0.2 * (i == 1))
        out.append(Polled(batches=[_batch(prof, df, start=3000 * i)]))
    return out


def _records(results) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [orjson.dumps({"a": r.assessment.to_dict(), "w": r.window.window_id,
                          "d": None if r.decision is None else r.decision.tier,
                          "e": None if r.error is None else r.error.stage}, option=OPT)
            for r in results]


def _one_by_one(prof: ReferenceProfile) -> list[bytes]:
    mon = _monitor(prof)
    with mock.patch.object(judging_mod, "window_stats", side_effect=AssertionError):
        out = [r for p in _polls(prof) for r in mon.process(p)] + mon.flush()
    return _records(out)


def test_a_poll_closing_several_windows_assesses_them_in_one_pass(prof) -> None:
    mon = _monitor(prof)
    seen: list[int] = []

    def spy(prep, sketches, cfg):  # type: ignore[no-untyped-def]
        seen.append(len(sketches))
        return window_stats(prep, sketches, cfg)

    with mock.patch.object(judging_mod, "window_stats", side_effect=spy):
        got = [r for p in _polls(prof) for r in mon.process(p)] + mon.flush()
    assert seen and max(seen) >= 5  # a poll of six panes closes six windows
    assert all(r.error is None for r in got)
    assert {r.decision.tier for r in got if r.decision} != {"none"}  # the shift is seen
    assert _records(got) == _one_by_one(prof)


def test_a_data_quality_only_monitor_takes_the_one_pass_too(prof) -> None:
    """The data-quality numbers are computed for every window (drift reads their fault
    flags), so windows closed together share one pass whatever the detectors."""
    cfg = DetectorConfig(detectors=("missing_rate", "new_category_rate"))
    spec = WindowSpec(kind="count", pane_size=500, panes=4, mode="sliding")
    seen: list[int] = []

    def spy(prep, sketches, cfg):  # type: ignore[no-untyped-def]
        seen.append(len(sketches))
        return window_stats(prep, sketches, cfg)

    mon = ModelMonitor("credit", prof, spec, detectors=cfg)
    with mock.patch.object(judging_mod, "window_stats", side_effect=spy):
        got = [r for p in _polls(prof) for r in mon.process(p)] + mon.flush()
    alone = ModelMonitor("credit", prof, spec, detectors=cfg)
    with mock.patch.object(judging_mod, "window_stats", side_effect=AssertionError):
        want = [r for p in _polls(prof) for r in alone.process(p)] + alone.flush()
    assert seen and max(seen) >= 5
    assert {s.signal for r in got for s in r.assessment.signals} == {
        "missing_rate", "new_category_rate"}
    assert any(s.exceeds for r in got for s in r.assessment.signals)  # the 20% missing
    assert _records(got) == _records(want)


def test_a_failing_pass_leaves_each_window_to_its_own(prof) -> None:
    mon = _monitor(prof)
    with mock.patch.object(judging_mod, "window_stats", side_effect=RuntimeError("boom")):
        got = [r for p in _polls(prof) for r in mon.process(p)] + mon.flush()
    assert _records(got) == _one_by_one(prof)


def test_a_window_that_fails_fails_alone(prof) -> None:
    mon = _monitor(prof)
    real = judging_mod.assess

    def flaky(*args, **kw):  # type: ignore[no-untyped-def]
        if kw["window_id"] == 3:
            raise RuntimeError("detector broke")
        return real(*args, **kw)

    with mock.patch.object(judging_mod, "assess", side_effect=flaky):
        got = [r for p in _polls(prof) for r in mon.process(p)]
    failed = [r.window.window_id for r in got if r.error is not None]
    assert failed == [3]
    assert got[3].error.stage == "detectors"  # type: ignore[union-attr]
    want = _one_by_one(prof)
    ok = [i for i, r in enumerate(got) if r.window.window_id < 3]  # before the failure
    assert [_records(got)[i] for i in ok] == want[: len(ok)]
