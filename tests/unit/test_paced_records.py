"""A table whose records carry no time (``event_time: {source: order}``) streamed live by
``run`` is paced by its records: ``live.speed`` (or ``run --speed``) is predictions per wall
second, as its windows and durations count them. It was not paced at all: the poll's event
times are stamped by the monitor, after the pacer, so the pacer saw none and delivered the
whole table at once, whatever the speed."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.clock import ManualClock
from driftwatch.connectors.config import load_connector
from driftwatch.policy.loader import load_policy
from driftwatch.replay.run import build_monitor
from driftwatch.service.live_source import PacedSource
from driftwatch.service.model import open_source

from ._cli import run_cli

N = 600


def _untimed(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Path]:
    """A reference and a scored table with no time and no id; init's connector and policy."""
    rng = np.random.default_rng(3)

    def rows(n: int) -> pd.DataFrame:
        return pd.DataFrame({"amount": rng.integers(100, 9000, n),
                             "purpose": rng.choice(["car", "home", "other"], n),
                             "score": rng.random(n).round(4)})

    ref = rows(2000)
    ref["default"] = (rng.random(2000) < ref["score"] * 0.4).astype(int)
    ref.to_csv(tmp / "train.csv", index=False)
    scored = rows(N)
    scored["default"] = (rng.random(N) < scored["score"] * 0.4).astype(int)
    scored.to_csv(tmp / "scored.csv", index=False)
    code, _, err = run_cli(["init", "-r", str(tmp / "train.csv"), "-s", str(tmp / "scored.csv"),
                            "--connector-out", str(tmp / "c.yaml"), "--policy-out",
                            str(tmp / "p.yaml"), "--force"], capsys)
    assert code == 0, err
    return tmp / "c.yaml", tmp / "p.yaml"


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(speed=st.sampled_from([25.0, 100.0, 600.0]), batch=st.integers(1, 250))
def test_an_untimed_table_goes_by_at_speed_records_a_second(
        tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
        speed: float, batch: int) -> None:
    tmp = tmp_path_factory.mktemp("paced")
    conn_path, policy_path = _untimed(tmp, capsys)
    conn = load_connector(conn_path)
    assert conn.numbers_records()
    monitor = build_monitor(load_policy(policy_path), reference=str(tmp / "train.csv"),
                            connector=conn)
    clock = ManualClock(0.0)
    cfg = SimpleNamespace(batch_size=batch, live_speed=speed)
    src, _ = open_source(conn, monitor, cfg, tmp / "out", clock)  # type: ignore[arg-type]
    assert isinstance(src, PacedSource) and src.count_records
    src._sleep = clock.advance  # the test's clock, instead of a wait on an event
    delivered, started = 0, None
    while (p := src.poll(batch, timeout_s=3600.0)) is not None:
        if not p.n_events:
            continue
        started = clock.monotonic() if started is None else started
        delivered += p.n_events
        # the poll's last record is due (delivered - first poll's) / speed after the first
        first = min(batch, N)
        assert clock.monotonic() - started == pytest.approx((delivered - first) / speed)
    assert delivered == N


def test_a_timed_table_is_still_paced_by_its_event_time() -> None:
    from driftwatch.batch import Batch
    from driftwatch.connectors.base import Polled

    polls = [Polled([Batch.build("predictions", n=2, event_time=[t, t + 30.0])])
             for t in (0.0, 60.0, 120.0)]

    class Recording:
        def poll(self, max_records: int = 10_000, timeout_s: float = 1.0) -> Polled | None:
            return polls.pop(0) if polls else None

        def seek(self, positions: object) -> None: ...
        def commit(self, positions: object) -> None: ...

    clock = ManualClock(0.0)
    src = PacedSource(Recording(), speed=30.0, clock=clock,  # type: ignore[arg-type]
                      sleep=clock.advance)
    times = []
    while (p := src.poll(timeout_s=3600.0)) is not None:
        times.append(clock.monotonic())
        assert p.n_events == 2
    assert times == [0.0, 2.0, 4.0]  # a minute of events every 2 s
