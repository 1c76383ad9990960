"""A restart after a champion change judges against the champion's profile, checkpoint kept.

The daemon (``driftwatch run``) is started in-process on a file connector, with actions
executing on the embedded MLflow store, as ``driftwatch run`` does. Version 1 (trained on
the configured reference) is the champion, version 2 (another sample, so another profile)
the challenger. The admin API promotes version 2: the monitor adopts its profile and the
final checkpoint is taken on it. A restart builds the configured reference file's profile
first; it must come back to the champion's profile (from the registry, or from the state
folder when MLflow is down), restore the checkpoint without loss, and say what it did.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

import driftwatch.registry.mlflow_registry as mlflow_registry
from driftwatch.clock import ManualClock
from driftwatch.connectors.config import load_connector
from driftwatch.policy.loader import load_policy
from driftwatch.registry.champion import distil_champion
from driftwatch.registry.versions import CHALLENGER, CHAMPION, PROFILE_ARTIFACT
from driftwatch.replay import build_monitor
from driftwatch.service.config import ServiceConfig, parse_service_config
from driftwatch.service.daemon import Service
from driftwatch.windows.profile import ReferenceProfile

MODEL = "credit"

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      paths: ["PRED"]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features: {income: income, age: age}
        score: score
"""

POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: t}
model: {name: credit, reference: REF}
window: {kind: count, pane: 100}
signals:
  - detector: psi
    thresholds: {mild: 0.1}
"""


def _reference(seed: int, shift: float = 0.0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 1200
    return pd.DataFrame({"income": rng.lognormal(10 + shift, 0.5, n),
                         "age": rng.integers(18, 80, n).astype(float),
                         "score": rng.uniform(0.01, 0.6, n).round(4),
                         "label": rng.integers(0, 2, n)})


class Down:
    """MLflow refusing every read of the registry (an outage), as its client meets one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def refused(*_a: Any, **_k: Any) -> Any:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        monkeypatch.setattr(MlflowClient, "search_registered_models", refused)
        monkeypatch.setattr(mlflow_registry, "download_artifacts", refused)


class FlakyProfile:
    """MLflow's artifact download refused for the profile, every other call real."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = mlflow_registry.download_artifacts

        def download(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("artifact_path") == PROFILE_ARTIFACT:
                raise ConnectionRefusedError("[Errno 111] Connection refused")
            return real(*args, **kwargs)
        monkeypatch.setattr(mlflow_registry, "download_artifacts", download)


class Site:
    """The files a daemon runs on, and starts of it on the same state folder."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        _reference(0).to_csv(tmp / "ref.csv", index=False)
        rng = np.random.default_rng(7)
        (tmp / "pred.jsonl").write_text("".join(
            f'{{"id": "a{i}", "ts": {i}, "income": {rng.lognormal(10.3, 0.5):.2f}, '
            f'"age": {int(rng.integers(18, 80))}, "score": 0.2}}\n' for i in range(450)))
        (tmp / "conn.yaml").write_text(CONNECTOR.replace("PRED", str(tmp / "pred.jsonl")))
        (tmp / "pol.yaml").write_text(POLICY.replace("REF", "ref.csv"))
        self.clock = ManualClock(1_700_000_000.0)
        self.config: ServiceConfig = parse_service_config(
            "models:\n  - {connector: conn.yaml, policy: pol.yaml, batch_size: 150}\n"
            f"state_dir: {tmp / 'state'}\nhttp: {{enabled: false}}\n"
            "report: {on_done: false, on_decision: false, rolling: null}\n"
            "actions: {mlflow_attempts: 1, retry_backoff: 30s, retry_backoff_max: 2m}\n",
            base_dir=tmp)
        self.v2_profile = ReferenceProfile.build(_reference(1, shift=0.4))

    def file_fingerprint(self) -> str:
        """The profile a start builds from the reference file (as ``replay`` reads it)."""
        policy = load_policy(self.tmp / "pol.yaml")
        return build_monitor(policy, base_dir=self.tmp,
                             connector=load_connector(self.tmp / "conn.yaml")).profile.fingerprint

    def start(self) -> Service:
        svc = Service(self.config, clock=self.clock)
        svc._open()
        return svc

    def publish(self, svc: Service) -> tuple[str, str]:
        """v1 (the configured reference's profile) champion, v2 challenger."""
        df = _reference(0)
        model = distil_champion(df, numeric=["income", "age"], categorical=[])
        reg = svc.actions.registry
        v1 = reg.publish(MODEL, model, action_key="bank:v1",
                         profile=svc.runtimes[0].monitor.profile)
        v2 = reg.publish(MODEL, model, action_key="retrain:v2", profile=self.v2_profile)
        reg.set_alias(MODEL, CHAMPION, v1.version, at=self.clock.now(), by="bank")
        reg.set_alias(MODEL, CHALLENGER, v2.version, at=self.clock.now(), by="retrain")
        return v1.version, v2.version


def steps(svc: Service, n: int) -> None:
    for _ in range(n):
        svc._once()


def stop(svc: Service) -> None:
    svc._close(final_checkpoint=True)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    yield Site(tmp_path)


def _promoted(site: Site) -> tuple[Service, str, dict[str, Any]]:
    """A daemon that read 300 events, had v2 promoted, read on, and stopped."""
    svc = site.start()
    _, v2 = site.publish(svc)
    steps(svc, 2)
    res = svc.actions.admin("promote", MODEL, {}, "alice")
    assert res.status == 200, res.body
    svc.inbox.drain()  # the loop adopts the promoted profile
    rt = svc.runtimes[0]
    assert rt.monitor.profile.fingerprint == site.v2_profile.fingerprint
    steps(svc, 1)
    seen = {"events": rt.monitor.n_events, "windows": rt.windows,
            "next_id": rt.monitor.window.next_id}
    stop(svc)
    return svc, v2, seen


def _counts(svc: Service) -> dict[str, Any]:
    rt = svc.runtimes[0]
    return {"events": rt.monitor.n_events, "windows": rt.windows,
            "next_id": rt.monitor.window.next_id}


def test_a_restart_after_a_promotion_judges_on_the_champions_profile(site: Site):
    _, v2, seen = _promoted(site)
    again = site.start()
    try:
        rt = again.runtimes[0]
        assert rt.monitor.profile.fingerprint == site.v2_profile.fingerprint
        assert _counts(again) == seen  # the checkpoint restored, nothing read again
        assert rt.status()["reference_champion"] == v2
    finally:
        stop(again)


def test_a_restart_with_mlflow_down_keeps_the_adopted_champions_profile_and_says_so(
        site: Site, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture):
    _, v2, seen = _promoted(site)
    Down(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="driftwatch.service"):
        again = site.start()
    try:
        rt = again.runtimes[0]
        assert rt.monitor.profile.fingerprint == site.v2_profile.fingerprint
        assert _counts(again) == seen
        shown = again.actions.status()["profile_adoption"][MODEL]
        assert shown["champion"] == v2 and "MLflow could not be read at start" in shown["note"]
        assert f"champion v{v2}'s profile kept in the state folder" in shown["note"]
        _, details = again.ready()
        assert details["dependencies"]["mlflow"]["state"] == "down"
        assert any("MLflow could not be read at start" in r.getMessage()
                   for r in caplog.records)
        # MLflow back: the champion is read again, nothing changes, the wait is over
        monkeypatch.undo()
        site.clock.advance(60)
        again.actions.run_registry_actions()
        again.inbox.drain()
        assert again.actions.status()["profile_adoption"] == {}
        assert rt.monitor.profile.fingerprint == site.v2_profile.fingerprint
        assert _counts(again) == seen  # the same profile again: no window closed early
    finally:
        stop(again)


def test_a_pending_adoption_survives_a_restart_and_finishes_when_mlflow_answers(
        site: Site, monkeypatch: pytest.MonkeyPatch):
    svc = site.start()
    _, v2 = site.publish(svc)
    steps(svc, 2)
    FlakyProfile(monkeypatch)
    res = svc.actions.admin("promote", MODEL, {}, "alice")
    assert res.status == 202 and res.body["profile"] == "pending", res.body
    since = svc.actions.pending_adoption(MODEL).since
    stop(svc)

    site.clock.advance(100)  # MLflow still refuses the profile at the restart
    again = site.start()
    try:
        shown = again.actions.status()["profile_adoption"][MODEL]
        assert shown["champion"] == v2 and shown["attempts"] == 2
        assert shown["pending_seconds"] == 100.0  # counted from the promotion, not the start
        assert again.runtimes[0].monitor.profile.fingerprint == site.file_fingerprint()
    finally:
        stop(again)

    monkeypatch.undo()  # and answers at the next one
    third = site.start()
    try:
        assert third.runtimes[0].monitor.profile.fingerprint == site.v2_profile.fingerprint
        assert third.actions.status()["profile_adoption"] == {}
        assert since == pytest.approx(1_700_000_000.0)
    finally:
        stop(third)


def test_a_champion_moved_while_the_daemon_was_down_is_adopted_at_start(site: Site):
    _, _, seen = _promoted(site)
    from driftwatch.registry.mlflow_registry import MlflowRegistry

    reg = MlflowRegistry.embedded(site.tmp / "state")
    reg.set_alias(MODEL, CHAMPION, "1", at=site.clock.now(), by="someone in the MLflow UI")
    again = site.start()
    try:
        rt = again.runtimes[0]
        assert rt.monitor.profile.fingerprint == site.file_fingerprint()
        assert rt.champion == "1"
        # restored on v2's profile, then its open window closed (partial) for v1's
        assert rt.monitor.n_events == seen["events"]
        assert rt.windows == seen["windows"] + 1
    finally:
        stop(again)


def test_a_crash_after_a_promotion_before_its_checkpoint_restarts_on_the_champion(
        site: Site):
    svc = site.start()
    site.publish(svc)
    steps(svc, 2)
    stop(svc)  # the checkpoint: on the reference file's profile
    seen = None
    svc = site.start()
    seen = _counts(svc)
    assert svc.actions.admin("promote", MODEL, {}, "alice").status == 200
    svc.inbox.drain()
    svc._close(final_checkpoint=False)  # a crash: no checkpoint names v2's profile
    again = site.start()
    try:
        rt = again.runtimes[0]
        assert rt.monitor.profile.fingerprint == site.v2_profile.fingerprint
        assert rt.monitor.n_events == seen["events"]
    finally:
        stop(again)


def test_a_reference_file_replaced_while_the_daemon_was_down_is_adopted_at_start(
        site: Site):
    svc = site.start()
    steps(svc, 2)
    seen = _counts(svc)
    before = svc.runtimes[0].monitor.profile.fingerprint
    stop(svc)
    _reference(5, shift=0.2).to_csv(site.tmp / "ref.csv", index=False)
    again = site.start()  # was: the checkpoint refused, the daemon did not start
    try:
        rt = again.runtimes[0]
        assert rt.monitor.profile.fingerprint == site.file_fingerprint() != before
        assert rt.monitor.n_events == seen["events"] and rt.champion is None
    finally:
        stop(again)
