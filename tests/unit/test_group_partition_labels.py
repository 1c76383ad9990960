"""A partition adds a poll's joined outcomes to its panes in one call: each pane ends with
the counts and sums that adding its own rows alone gives, to the bit."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.labels.joiner import Joined
from driftwatch.service.group.partition import PartitionPanes
from driftwatch.windows.sketch import Sketch, SketchLayout

LAYOUT = SketchLayout.fit(numeric_names=("x",), numeric=np.linspace(0.0, 10.0, 200)[:, None])
SIZE = 10.0


def _joined(score: np.ndarray, label: np.ndarray, exposure: np.ndarray) -> Joined:
    n = score.size
    z = np.zeros(n)
    return Joined(np.arange(n, dtype=np.uint64), score, label, exposure,
                  np.zeros(n, np.int8), z, z, z, np.full(n, -1, np.int64))


def _state(sk: Sketch) -> dict[str, object]:
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v)
            for k, v in vars(sk).items() if k.startswith("lab_")}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300),
       frontier=st.one_of(st.none(), st.integers(0, 6)),
       exposure=st.booleans())
def test_each_pane_gets_what_its_own_rows_give(seed: int, n: int, frontier: int | None,
                                               exposure: bool) -> None:
    rng = np.random.default_rng(seed)
    time = rng.uniform(-5.0, 100.0, n)
    time[rng.random(n) < 0.05] = np.nan  # no event time: the first pane
    score = rng.random(n)
    label = rng.choice([0.0, 1.0, np.nan], n, p=[0.6, 0.35, 0.05])
    ex = rng.lognormal(8, 1, n) if exposure else np.full(n, np.nan)
    part = PartitionPanes(LAYOUT, pane_size=SIZE)
    part.frontier = frontier
    part._label(_joined(score, label, ex), time)
    # the oracle: the pane each row belongs to, written out, and one call per pane
    panes = [_pane_of(t, frontier) for t in time]
    want: dict[int, Sketch] = {}
    for k in sorted(set(panes)):
        rows = [i for i in range(n) if panes[i] == k]
        want[k] = Sketch.empty(LAYOUT)
        want[k].add_labelled(score[rows], label[rows], ex[rows])
    assert sorted(part.panes) == sorted(want)
    for k, sk in want.items():
        assert _state(part.panes[k]) == _state(sk), k


def _pane_of(t: float, frontier: int | None) -> int:
    """Its own pane, or the first open one when that one closed; no time: the first
    open one (pane 0 before any closed)."""
    if math.isnan(t):
        return 0 if frontier is None else frontier
    own = math.floor(t / SIZE)
    return own if frontier is None else max(own, frontier)
