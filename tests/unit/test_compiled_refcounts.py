"""``compiled(refcounts=False)``: a loop compiled without numba's runtime counts no array
references (what the JSON scanner and the Kafka record reader are compiled with, since
their inlined helpers took and dropped an atomic reference per token), and a loop that
would allocate is refused rather than compiled, as ``numba_setup`` says."""

from __future__ import annotations

import numpy as np
import pytest

from driftwatch.numba_setup import compiled, numba_enabled

pytestmark = pytest.mark.skipif(not numba_enabled(), reason="numba is off or not installed")


def _total(a):  # type: ignore[no-untyped-def]
    s = 0.0
    for i in range(a.size):
        s += a[i]
    return s


def test_a_loop_that_only_indexes_runs_without_refcounts() -> None:
    x = np.arange(10.0)
    assert compiled(refcounts=False)(_total)(x) == float(x.sum())


def _zeros_sum(n):  # type: ignore[no-untyped-def]
    return np.zeros(n).sum()


def _zeros_sum_again(n):  # type: ignore[no-untyped-def]
    # the same loop under another name: numba's disk cache keys a loop by its name
    return np.zeros(n).sum()


def test_a_loop_that_allocates_is_refused_without_refcounts() -> None:
    import numba

    assert compiled()(_zeros_sum)(3) == 0.0
    with pytest.raises(numba.core.errors.TypingError):
        compiled(refcounts=False)(_zeros_sum_again)(3)


def test_the_scanner_and_record_reader_are_compiled_without_refcounts() -> None:
    from driftwatch.connectors import _recordloops, _scanloops

    for loop in (_scanloops._scan, _recordloops.read_records):
        assert loop.targetoptions.get("_nrt") is False
