"""What is kept between windows changes no window's result.

``assess`` keeps values derived from objects that stay the same from one window to the
next (:class:`~driftwatch.detectors.identity_cache.IdentityCache`). Windows of one size
judged in a row, with the caches on, must serialise to the same bytes (keys in the same
order too) as each judged with every cache off, and no two windows may share a mutable
part of their results.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock

import numpy as np
import orjson
import pytest

from driftwatch.detectors import categorical, distances, divergence, drift, estimated, quality
from driftwatch.detectors.assess import assess, segment_windows
from driftwatch.detectors.calibrate import Calibrator
from driftwatch.detectors.config import DetectorConfig
from driftwatch.detectors.identity_cache import IdentityCache
from driftwatch.windows.profile import ReferenceProfile

from .test_assess_same_numbers import N_REF, _population, _window

#: One settings object for every window, as a monitor holds its policy's.
CONFIG = DetectorConfig(min_labelled=1)

#: Every cache ``assess`` keeps between windows (module, attribute).
CACHES = [(drift, "_PLANS"), (drift, "_PSI_REFERENCE"), (estimated, "_REFERENCE"),
          (divergence, "_REFERENCE"), (categorical, "_REFERENCE"), (distances, "_REFERENCE"),
          (quality, "_REFERENCES")]


@contextlib.contextmanager
def _no_caches() -> Iterator[None]:
    """Every cache replaced by one that keeps nothing (each window builds its values)."""
    with contextlib.ExitStack() as stack:
        for mod, name in CACHES:
            stack.enter_context(mock.patch.object(mod, name, IdentityCache(capacity=0)))
        yield


@pytest.fixture(scope="module")
def prof() -> ReferenceProfile:
    return ReferenceProfile.build(_population(np.random.default_rng(3), N_REF),
                                  numeric=["x0", "x1", "x2"], categorical=["purpose"],
                                  exposure="exposure", segment="channel", segment_top_k=2)


@pytest.fixture(scope="module")
def cal(prof) -> Calibrator:
    # 1000 resampled as it is: its windows read the very same level objects (a cache hit)
    return Calibrator(prof, np.random.default_rng(1), rates=(0.05, 0.01), n_draws=200,
                      sizes=(1000,))


def _assess(prof: ReferenceProfile, cal: Calibrator, seed: int, n: int, shift: float):
    cur, parts = _window(prof, n, seed, shift=shift)
    return assess(prof, cur, model="m", window_id=seed, start_time=0.0, end_time=1.0,
                  calibrator=cal, segments=segment_windows(prof, parts, min_events=1),
                  config=CONFIG)


@pytest.mark.parametrize("sizes", [(1000,) * 4, (1000, 700, 1000, 700, 2500)])
def test_windows_in_a_row_give_the_uncached_bytes(prof, cal, sizes) -> None:
    shifts = (0.0, 0.4, 2.0, 0.1, 0.0)
    got = [_assess(prof, cal, i, n, shifts[i]) for i, n in enumerate(sizes)]
    with _no_caches():
        want = [_assess(prof, cal, i, n, shifts[i]) for i, n in enumerate(sizes)]
    for g, w in zip(got, want, strict=True):
        # no OPT_SORT_KEYS: the keys' order is part of what must not change
        assert orjson.dumps(g.to_dict()) == orjson.dumps(w.to_dict())


def test_windows_share_no_details(prof, cal) -> None:
    a, b = (_assess(prof, cal, i, 1000, 0.0) for i in (7, 8))
    for x, y in zip(a.signals, b.signals, strict=True):
        assert x.details is not y.details
        for k, v in x.details.items():
            if isinstance(v, dict | list):
                assert v is not y.details[k], (x.signal, k)


def test_windows_of_one_size_hit_the_caches(prof, cal) -> None:
    with mock.patch.object(drift, "_PLANS", IdentityCache()), \
            mock.patch.object(drift, "_build_plan", wraps=drift._build_plan) as build:
        _assess(prof, cal, 0, 1000, 0.0)
        first = build.call_count
        for i in (1, 2):
            _assess(prof, cal, i, 1000, 0.3)
    assert first > 0 and build.call_count == first  # the next windows build nothing


def test_the_caches_are_really_off() -> None:
    with _no_caches():
        assert all(getattr(m, n).capacity == 0 for m, n in CACHES)
    assert all(getattr(m, n).capacity > 0 for m, n in CACHES)
