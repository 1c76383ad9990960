"""A champion that fails its check holds its model's actions and is tried again on the
actions' back-off schedule: the daemon logs the reason once an attempt, not on every
actions tick (every 5 s, or a quarter second while draining)."""

from __future__ import annotations

import errno
import logging
from types import SimpleNamespace

import pytest

from driftwatch.actions.backoff import Backoff
from driftwatch.errors import ActionError, StateError
from driftwatch.service.action_champion import ChampionCheck


class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


class _Check(ChampionCheck):
    def __init__(self, error: Exception | None) -> None:
        self.clock = _Clock()
        self.backoff = Backoff(30.0, 600.0)
        self._champion_wait: dict[str, tuple[int, float]] = {}
        self.error = error
        self.calls = 0

    def _ensure_champion(self, ma: object) -> None:
        self.calls += 1
        if self.error is not None:
            raise self.error


def test_a_failing_champion_is_retried_after_the_backoff_not_every_tick(
        caplog: pytest.LogCaptureFixture) -> None:
    check = _Check(ActionError("models:/pd@champion: its scores rank the reference's bad "
                               "rows below its good ones (AUC 0.28)"))
    ma = SimpleNamespace(model="credit")
    with caplog.at_level(logging.ERROR, logger="driftwatch.service.actions"):
        assert check._champion_ready(ma) is False  # type: ignore[arg-type]
        for _ in range(100):  # 100 ticks within the first 30 s: no new attempt, no new line
            check.clock.t += 0.25
            assert check._champion_ready(ma) is False  # type: ignore[arg-type]
    assert check.calls == 1
    assert len(caplog.records) == 1
    assert "credit: the champion fails its check" in caplog.text and "AUC 0.28" in caplog.text
    check.clock.t = 1000.0 + 30.0  # the first back-off has passed: tried again
    assert check._champion_ready(ma) is False  # type: ignore[arg-type]
    assert check.calls == 2
    assert check._champion_wait["credit"] == (2, 1030.0 + 60.0)  # then 60 s
    check.error = None  # fixed (a new version aliased champion): the actions go on
    check.clock.t = 1100.0
    assert check._champion_ready(ma) is True  # type: ignore[arg-type]
    assert "credit" not in check._champion_wait


def test_a_full_disk_during_the_check_is_not_taken_for_a_bad_champion() -> None:
    disk = StateError("outbox not written")
    disk.__cause__ = OSError(errno.ENOSPC, "No space left on device")
    check = _Check(disk)
    with pytest.raises(StateError):
        check._champion_ready(SimpleNamespace(model="credit"))  # type: ignore[arg-type]
    assert check._champion_wait == {}
