"""Calibrated levels kept on disk read back as the very numbers a resampling gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.detectors.calibrate import Calibrator, NullThresholds
from driftwatch.policy.level_store import LevelStore
from driftwatch.windows.profile import ReferenceProfile


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    rng = np.random.default_rng(3)
    n = 4000
    df = pd.DataFrame({"x": rng.normal(size=n), "y": rng.exponential(size=n),
                       "c": rng.choice(["a", "b", "c"], n), "score": rng.uniform(size=n),
                       "decision": rng.choice(["approve", "decline"], n)})
    return ReferenceProfile.build(df, numeric=["x", "y"], categorical=["c"], fine_bins=40)


def _calibrator(profile: ReferenceProfile, store: LevelStore | None = None,
                **kw: object) -> Calibrator:
    kw = {"rates": (0.01, 0.05), "n_draws": 200, "sizes": (700,), **kw}
    return Calibrator(profile, np.random.default_rng(11), store=store, **kw)  # type: ignore[arg-type]


def _same(a: dict[float, NullThresholds], b: dict[float, NullThresholds]) -> None:
    assert list(a) == list(b)
    for rate, x in a.items():
        y = b[rate]
        assert (x.n, x.grid, x.alpha) == (y.n, y.grid, y.alpha)
        for block in ("numeric", "categorical"):
            dx, dy = getattr(x, block), getattr(y, block)
            assert list(dx) == list(dy)
            for k in dx:
                assert dx[k].dtype == dy[k].dtype
                np.testing.assert_array_equal(dx[k], dy[k])
        for k in ("score_psi", "variance_ratio", "approval_rate"):
            np.testing.assert_array_equal(getattr(x, k), getattr(y, k))


def test_a_second_run_reads_the_levels_back_unchanged(profile, tmp_path: Path) -> None:
    fresh = _calibrator(profile).levels(600)  # below the count size: carried down from 700
    first, second = LevelStore(tmp_path), LevelStore(tmp_path)
    _same(fresh, _calibrator(profile, first).levels(600))
    assert (first.hits, first.writes) == (0, 1)
    cal = _calibrator(profile, second)
    cal.null_samples = None  # type: ignore[assignment,method-assign]  # a resampling would fail
    _same(fresh, cal.levels(600))
    _same(_calibrator(profile).levels(700), cal.levels(700))  # the same stored size
    assert (second.hits, second.writes) == (1, 0)


def test_other_settings_are_other_keys(profile) -> None:
    base = _calibrator(profile)
    keys = {base.key(700), base.key(701),
            _calibrator(profile, n_draws=300).key(700),
            _calibrator(profile, rates=(0.01,)).key(700),
            _calibrator(profile, reference_noise=False).key(700),
            _calibrator(profile, model_level=False).key(700),
            _calibrator(profile, approval_cutoff=0.3).key(700),
            Calibrator(profile, np.random.default_rng(12), rates=(0.01, 0.05), n_draws=200,
                       sizes=(700,)).key(700)}
    assert len(keys) == 8
    assert _calibrator(profile).key(700) == base.key(700)


@pytest.mark.parametrize("damage", [b"", b"not a zip file", None])
def test_an_unreadable_file_is_resampled_and_written_again(profile, tmp_path: Path,
                                                           damage: bytes | None) -> None:
    fresh = _calibrator(profile, model_level=False).levels(700)
    store = LevelStore(tmp_path)
    cal = _calibrator(profile, store, model_level=False)
    path = tmp_path / f"{cal.key(700)}.npz"
    if damage is None:  # a whole file, cut short
        _calibrator(profile, LevelStore(tmp_path), model_level=False).levels(700)
        path.write_bytes(path.read_bytes()[:200])
    else:
        path.write_bytes(damage)
    _same(fresh, cal.levels(700))
    assert (store.hits, store.writes) == (0, 1)
    again = LevelStore(tmp_path)
    _same(fresh, _calibrator(profile, again, model_level=False).levels(700))
    assert again.hits == 1


def test_a_folder_that_cannot_be_written_only_costs_a_resampling(profile, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    store = LevelStore(blocker / "levels")  # under a file: mkdir fails
    _same(_calibrator(profile, model_level=False).levels(700),
          _calibrator(profile, store, model_level=False).levels(700))
    assert (store.hits, store.writes) == (0, 0)
