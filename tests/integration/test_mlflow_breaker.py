"""A real ``mlflow server`` killed and restarted under a replay's executor, and a tracking
URI where something accepts connections but never answers.

A replay's retry times are in event time, so an action waiting for MLflow is due again at
every window: before the registry's circuit breaker, each try paid the full connection wait
(three attempts, 1.5 s of pauses) and logged a ``waits for MLflow`` line, which made a
replay with MLflow down about five times slower. Now the outage is said once, calls fail
at once until a wall-clock cool-off (an injected clock here) passes, one probe then finds
MLflow back, and the action completes exactly once. A silent server fails the replay's
start within seconds, on one line that names the URI (before: 3 requests of 10 s each).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import pytest
from mlflow import MlflowClient

from driftwatch.actions.context import ActionContext
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionState
from driftwatch.cli import main
from driftwatch.clock import EventTimeClock
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.bootstrap import ensure_champion
from driftwatch.registry.breaker import CircuitBreaker
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.retry import HTTP_TIMEOUT_ENV, Retry
from driftwatch.testing.generator import reference_table
from driftwatch.testing.mlflow_server import start_mlflow_server, stop
from driftwatch.windows.profile import ReferenceProfile

pytestmark = pytest.mark.integration

MODEL = "credit-risk"
ROOT = Path(__file__).resolve().parents[2]
DAY_S = 86_400.0


def _window(n: int, seed: int) -> pd.DataFrame:
    df = reference_table(n, seed=seed).to_pandas()
    logit = np.log(df["score"] / (1 - df["score"])) + 0.7
    df["label"] = (np.random.default_rng(seed).random(n) < 1 / (1 + np.exp(-logit))) * 1.0
    return df


def test_a_killed_server_is_said_once_and_back_once_and_the_action_completes_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv(HTTP_TIMEOUT_ENV, "10")
    root = tmp_path / "mlflow"
    root.mkdir()
    url, server, log = start_mlflow_server(root)
    restarted = None
    try:
        wall = [0.0]
        seen: list[object] = []  # what the daemon's readiness model would hear
        registry = MlflowRegistry(url, retry=Retry(
            attempts=3, base_delay=0.2, observer=seen.append,
            breaker=CircuitBreaker(cooloff_s=5.0, monotonic=lambda: wall[0])))
        reference = reference_table(3000, seed=0).to_pandas()
        profile = ReferenceProfile.build(reference)
        ensure_champion(registry, MODEL, reference, at=0.0, profile=profile)
        clock = EventTimeClock()
        clock.observe(1_700_000_000.0)
        buffer = LabelledBuffer(profile.schema, capacity=2000)
        buffer.add_frame(_window(800, seed=4))
        box = Outbox(tmp_path / "state", clock=clock)
        ex = ActionExecutor(box, registry, None, clock, buffer=buffer, backoff_s=30.0)
        settings = {"type": "online_update", "opt_in": True, "min_labelled": 100,
                    "learner": "StandardScaler|LogisticRegression", "promote": "challenger"}
        decision = Decision(MODEL, 7, clock.now(), Tier.MILD, Tier.MILD,
                            action="online_update", action_settings=settings)
        action_id = ex.submit(decision, ActionContext(window_start=0.0, window_end=clock.now()))
        assert action_id is not None

        stop(server)  # down before the action's first call
        caplog.set_level(logging.WARNING)
        started = time.monotonic()
        for window in range(1, 31):  # 30 windows of a replay, a day of event time each
            clock.observe(1_700_000_000.0 + window * DAY_S)
            wall[0] += 0.1
            ex.run_pending()
        took = time.monotonic() - started
        rec = box.get(action_id)
        assert rec is not None and rec.state is ActionState.PENDING and rec.attempts == 30
        said = [r.getMessage() for r in caplog.records]
        assert sum("waits for MLflow" in m for m in said) == 1, said
        assert sum(m.startswith("MLflow is unreachable") for m in said) == 1, said
        # one connection wait (3 attempts, 0.6 s of pauses), not thirty (18 s of pauses)
        assert took < 15.0, took
        assert isinstance(seen[-1], Exception)  # heard down once, still down

        _, restarted, log2 = start_mlflow_server(root, urlparse(url).port)
        log2.close()
        wall[0] += 5.0  # the cool-off passes: the next try probes and finds MLflow back
        clock.observe(1_700_000_000.0 + 40 * DAY_S)
        [rec] = ex.run_pending()
        assert rec.id == action_id and rec.state is ActionState.SUCCEEDED, rec.error
        assert seen[-1] is None  # heard up again
        said = [r.getMessage() for r in caplog.records]
        assert sum(m.startswith("MLflow answers again") for m in said) == 1, said
        assert sum("waits for MLflow" in m for m in said) == 1, said
        ex.close()
        box.close()

        client = MlflowClient(tracking_uri=url, registry_uri=url)
        made = client.search_model_versions(
            f"name = '{MODEL}' and tags.`driftwatch.action_key` = '{rec.key}'")
        assert len(made) == 1  # completed exactly once
    finally:
        stop(server)
        if restarted is not None:
            stop(restarted)
        log.close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A listener that accepts connections and never answers (a hung server or proxy)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held: list[socket.socket] = []
    stopping = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not stopping.is_set():
            try:
                held.append(sock.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        stopping.set()
        thread.join(timeout=5)
        for c in held:
            c.close()
        sock.close()


def test_a_server_that_never_answers_fails_the_replays_start_in_seconds_on_one_line(
        silent_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.unit.test_replay_mlflow_errors import _argv

    monkeypatch.chdir(ROOT)
    monkeypatch.delenv(HTTP_TIMEOUT_ENV, raising=False)
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    argv = _argv(tmp_path, silent_server)
    started = time.monotonic()
    assert main(argv) == 1
    took = time.monotonic() - started
    err = capsys.readouterr().err
    assert err == (f"error: tracking URI {silent_server}: no answer within 5 s: something "
                   "accepts connections there but does not answer (is it an MLflow tracking "
                   "server, and is it up?)\n"), err
    assert took < 25.0, took  # before: three requests of 10 s each, then a cut-off line

    # a longer wait the user asked for is said at once, before it is waited
    monkeypatch.setenv(HTTP_TIMEOUT_ENV, "7")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[0] == (f"waiting up to 7 s ({HTTP_TIMEOUT_ENV}) for MLflow at "
                                   f"{silent_server} to answer")
    assert "no answer within 7 s" in err.splitlines()[1]
