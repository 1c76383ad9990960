"""A replay's loop runs with what was built before it frozen out of the garbage
collector, and hands it back after; a caller's own freeze is left as it was."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from driftwatch.replay import replay
from driftwatch.replay.frozen import YOUNG, setup_frozen
from driftwatch.testing.generator import write_scenario

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """A process with nothing frozen before and after the test."""
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_loop_runs_frozen_and_the_replay_unfreezes(tmp_path: Path, unfrozen: None) -> None:
    paths = write_scenario("demo", tmp_path / "rec", n_events=3_000, days=5,
                           reference_rows=1_000, compress=False)
    counts: list[int] = []
    res = replay(ROOT / "connectors" / "demo-file.yaml",
                 [paths["predictions"], paths["outcomes"]], tmp_path / "out",
                 policy=ROOT / "policies" / "credit-risk-demo.yaml",
                 reference=paths["reference"], progress=False, report=False,
                 read_process=False, on_window=lambda _: counts.append(gc.get_freeze_count()))
    assert res.summary["windows"] == len(counts) > 0
    assert min(counts) > 0  # the profile, policy and monitor: frozen in every window
    assert gc.get_freeze_count() == 0


def test_a_block_that_raises_unfreezes(unfrozen: None) -> None:
    with pytest.raises(RuntimeError), setup_frozen():
        assert gc.get_freeze_count() > 0
        raise RuntimeError("boom")
    assert gc.get_freeze_count() == 0


def _frozen(obj: object) -> bool:
    """Whether ``obj`` (a container) is in the permanent generation: the collector's
    lists hold every tracked object but the frozen ones. (The frozen count alone is no
    witness: it drops whenever another thread frees a frozen object.)"""
    return not any(o is obj for o in gc.get_objects())


def test_a_callers_freeze_is_kept(unfrozen: None) -> None:
    old = [1]  # the caller's: frozen by its own freeze
    gc.freeze()
    new = [2]  # built after the caller's freeze
    assert _frozen(old) and not _frozen(new)
    with setup_frozen():
        assert not _frozen(new)  # nothing more frozen
    assert _frozen(old)  # and nothing of the caller's unfrozen
    assert gc.get_freeze_count() > 0


def test_the_young_generation_is_collected_less_often_and_put_back(unfrozen: None) -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 9)
        with pytest.raises(RuntimeError), setup_frozen():
            assert gc.get_threshold() == (YOUNG, 7, 9)
            raise RuntimeError("boom")
        assert gc.get_threshold() == (500, 7, 9)
        gc.set_threshold(YOUNG * 3, 7, 9)  # a caller's higher threshold is kept
        with setup_frozen():
            assert gc.get_threshold() == (YOUNG * 3, 7, 9)
        assert gc.get_threshold() == (YOUNG * 3, 7, 9)
    finally:
        gc.set_threshold(*before)
