"""A promotion whose new champion's profile MLflow fails to load still reaches the monitor.

The admin API's promote moves the ``champion`` alias, then loads the new champion's
reference profile for the monitor. MLflow stands in for itself (the embedded store); its
artifact download, the profile's load, fails N times with a refused connection (an
outage, as the registry's retry sees one) and then answers. The champion has moved during
the outage; the answer, ``/status``, ``/readyz`` and the pending gauge say so; the
``mlflow`` lane tries again on the backoff; once MLflow answers, the monitor judges on
the new champion's profile, and nothing was promoted or adopted twice.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

import driftwatch.registry.mlflow_registry as mlflow_registry
from driftwatch.actions.reference import ReferenceReader
from driftwatch.clock import ManualClock
from driftwatch.metrics import Metrics
from driftwatch.registry.champion import distil_champion
from driftwatch.registry.versions import CHALLENGER, CHAMPION, PROFILE_ARTIFACT
from driftwatch.service.actions import ModelActions, ServiceActions
from driftwatch.service.config import parse_service_config
from driftwatch.service.daemon_views import ServiceViews
from driftwatch.service.metrics_live import LiveCollector, ModelSnapshot
from driftwatch.testing.generator import reference_table
from driftwatch.windows.profile import ReferenceProfile

MODEL = "credit"
BACKOFF_S = 30.0


class FlakyProfileDownload:
    """MLflow's artifact download, refused for the profile ``failures`` times, then real."""

    def __init__(self, real: Any, failures: int) -> None:
        self.real, self.failures, self.calls = real, failures, 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("artifact_path") == PROFILE_ARTIFACT:
            self.calls += 1
            if self.calls <= self.failures:
                raise ConnectionRefusedError("[Errno 111] Connection refused")
        return self.real(*args, **kwargs)


@pytest.fixture(scope="module")
def profiles() -> tuple[ReferenceProfile, ReferenceProfile]:
    """The champion's reference, and the challenger's (trained on another sample)."""
    return (ReferenceProfile.build(reference_table(1500, seed=0).to_pandas()),
            ReferenceProfile.build(reference_table(1500, seed=1).to_pandas()))


@pytest.fixture(scope="module")
def river_model() -> Any:
    df = reference_table(1500, seed=0).to_pandas()
    s = ReferenceProfile.build(df).schema
    return distil_champion(df, numeric=list(s.numeric), categorical=list(s.categorical))


class Rig:
    """ServiceActions on an embedded MLflow with v1 champion and v2 challenger; the
    monitor's side is a list of the profiles handed to it."""

    def __init__(self, state: Path, profiles: tuple[ReferenceProfile, ReferenceProfile],
                 river_model: Any, *, reference: str | None = None,
                 v1_profile: bool = True) -> None:
        cfg = parse_service_config(
            "models:\n  - connector: c.yaml\n    policy: p.yaml\n"
            f"state_dir: {state}\n"
            f"actions: {{mlflow_attempts: 1, retry_backoff: {BACKOFF_S:g}s, "
            "retry_backoff_max: 2m}\n")
        self.clock = ManualClock(1_700_000_000.0)
        self.actions = ServiceActions(cfg, clock=self.clock,
                                      metrics=Metrics(CollectorRegistry()))
        self.handed: list[tuple[str, str]] = []  # (version, fingerprint) the monitor got
        self.ma: ModelActions = self.actions.add_model(
            MODEL, reference=reference, cutoff=None, shadow_defaults={}, buffer=None,
            on_promote=lambda m, v, p: self.handed.append((v, p.fingerprint)))
        reg = self.actions.registry
        v1 = reg.publish(MODEL, river_model, action_key="bank:v1",
                         profile=profiles[0] if v1_profile else None)
        v2 = reg.publish(MODEL, river_model, action_key="retrain:v2", profile=profiles[1])
        reg.set_alias(MODEL, CHAMPION, v1.version, at=self.clock.now(), by="bank")
        reg.set_alias(MODEL, CHALLENGER, v2.version, at=self.clock.now(), by="retrain")
        self.v1, self.v2 = v1.version, v2.version

    def promote(self) -> tuple[int, dict[str, Any]]:
        res = self.actions.admin("promote", MODEL, {}, "alice")
        return res.status, dict(res.body)

    def champion(self) -> str:
        info = self.actions.registry.by_alias(MODEL, CHAMPION)
        assert info is not None
        return str(info.version)

    def champion_moves(self) -> int:
        return sum(1 for e in self.actions.registry.alias_history(MODEL)
                   if e.get("alias") == CHAMPION)

    def views(self) -> Any:
        """The daemon's readers (``/readyz``, the metrics' snapshot) over these actions."""
        import threading

        return SimpleNamespace(
            clock=self.clock, checkpoints=None, _started=self.clock.monotonic(),
            config=SimpleNamespace(checkpoint=SimpleNamespace(max_age_s=math.inf),
                                   stale_after_s=math.inf),
            runtimes=[SimpleNamespace(name=MODEL, ready=True, done=False,
                                      snapshot=lambda: ModelSnapshot(MODEL))],
            disk=SimpleNamespace(readiness=lambda: (True, None)), _running=True,
            deps=self.actions.deps, actions=self.actions, lock=threading.RLock(),
            _restore_s=0.0)

    def readyz(self) -> tuple[bool, dict[str, Any]]:
        return ServiceViews.ready(self.views())  # type: ignore[arg-type]

    def pending_gauge(self) -> float:
        """``driftwatch_reference_adoption_pending_seconds`` as a scrape reads it."""
        views = self.views()
        reg = CollectorRegistry()
        reg.register(LiveCollector(lambda: ServiceViews.snapshot(views), self.clock))
        value = reg.get_sample_value("driftwatch_reference_adoption_pending_seconds",
                                     {"model": MODEL})
        assert value is not None
        return value


@pytest.fixture
def rig(tmp_path: Path, profiles: tuple[ReferenceProfile, ReferenceProfile],
        river_model: Any) -> Iterator[Rig]:
    r = Rig(tmp_path / "state", profiles, river_model)
    yield r
    r.actions.close()


def test_a_promotion_whose_profile_load_fails_answers_what_happened_and_converges(
        rig: Rig, profiles: tuple[ReferenceProfile, ReferenceProfile],
        monkeypatch: pytest.MonkeyPatch):
    flaky = FlakyProfileDownload(mlflow_registry.download_artifacts, failures=2)
    monkeypatch.setattr(mlflow_registry, "download_artifacts", flaky)
    moves = rig.champion_moves()

    status, body = rig.promote()
    # the champion moved; the profile did not reach the monitor, and the answer says both
    assert status == 202, body
    assert body["champion"] == rig.v2 and body["replaced"] == rig.v1
    assert body["profile"] == "pending" and "MLflow unreachable" in body["profile_error"]
    assert body["retry_in_seconds"] == BACKOFF_S
    assert rig.champion() == rig.v2 and rig.handed == []
    # /status and /readyz tell the truth meanwhile
    shown = rig.actions.status()["profile_adoption"][MODEL]
    assert shown["champion"] == rig.v2 and shown["state"] == "pending"
    assert shown["attempts"] == 1
    ready, details = rig.readyz()  # said, not unready: the monitor judges on meanwhile
    assert ready and details["profile_adoption"][MODEL]["champion"] == rig.v2
    rig.clock.advance(12)
    assert rig.pending_gauge() == 12.0

    # asked again during the outage: nothing is promoted twice, the answer is the same
    status, body = rig.promote()
    assert status == 202 and body["promoted_already"] is True, body
    assert body["champion"] == rig.v2 and body["profile"] == "pending"
    assert rig.actions.status()["profile_adoption"][MODEL]["attempts"] == 2
    assert rig.champion_moves() == moves + 1 and rig.handed == []

    # the lane waits for the backoff (the 2nd failure doubled it), then adopts
    rig.actions.run_registry_actions()
    assert flaky.calls == 2  # not due yet: no call
    rig.clock.advance(2 * BACKOFF_S)
    rig.actions.run_registry_actions()
    assert flaky.calls == 3
    assert rig.handed == [(rig.v2, profiles[1].fingerprint)]
    assert rig.actions.status()["profile_adoption"] == {}
    assert "profile_adoption" not in rig.readyz()[1]
    assert rig.pending_gauge() == 0.0

    # over: more lane runs adopt nothing again; a promote now has nothing to finish
    rig.clock.advance(10 * BACKOFF_S)
    rig.actions.run_registry_actions()
    status, body = rig.promote()
    assert status == 409 and "no challenger" in body["error"]
    assert rig.handed == [(rig.v2, profiles[1].fingerprint)] and flaky.calls == 3
    assert rig.champion_moves() == moves + 1


def test_a_retried_promote_finishes_the_adoption_at_once(
        rig: Rig, profiles: tuple[ReferenceProfile, ReferenceProfile],
        monkeypatch: pytest.MonkeyPatch):
    """The operator's retry does not wait for the backoff: it is the way to finish now."""
    flaky = FlakyProfileDownload(mlflow_registry.download_artifacts, failures=1)
    monkeypatch.setattr(mlflow_registry, "download_artifacts", flaky)
    assert rig.promote()[0] == 202
    status, body = rig.promote()
    assert status == 200, body
    assert body == {"model": MODEL, "champion": rig.v2, "promoted_already": True,
                    "profile": "adopted", "profile_fingerprint": profiles[1].fingerprint}
    assert rig.handed == [(rig.v2, profiles[1].fingerprint)]
    assert rig.actions.status()["profile_adoption"] == {}


def test_a_promotion_with_mlflow_up_adopts_at_once(
        rig: Rig, profiles: tuple[ReferenceProfile, ReferenceProfile]):
    status, body = rig.promote()
    assert status == 200, body
    assert body["profile"] == "adopted"
    assert body["profile_fingerprint"] == profiles[1].fingerprint
    assert rig.handed == [(rig.v2, profiles[1].fingerprint)]


def test_a_rollback_whose_profile_load_fails_is_pending_too(
        rig: Rig, profiles: tuple[ReferenceProfile, ReferenceProfile],
        monkeypatch: pytest.MonkeyPatch):
    assert rig.promote()[0] == 200
    flaky = FlakyProfileDownload(mlflow_registry.download_artifacts, failures=1)
    monkeypatch.setattr(mlflow_registry, "download_artifacts", flaky)
    res = rig.actions.admin("rollback", MODEL, {}, "alice")
    assert res.status == 202 and res.body["champion"] == rig.v1, res.body
    assert res.body["profile"] == "pending"
    assert rig.champion() == rig.v1
    rig.clock.advance(BACKOFF_S)
    rig.actions.run_registry_actions()
    assert rig.handed[-1] == (rig.v1, profiles[0].fingerprint)
    assert rig.actions.status()["profile_adoption"] == {}


def test_a_rollback_to_a_version_registered_without_a_profile_judges_on_the_reference(
        tmp_path: Path, profiles: tuple[ReferenceProfile, ReferenceProfile],
        river_model: Any):
    """The bank's own v1 carries no profile: the monitor judged it on the reference file
    before the first promotion, and does again after a rollback to it. It had been kept
    pending, retried forever, while the monitor judged v1 against v2's profile."""
    ref = tmp_path / "reference.parquet"
    reference_table(1500, seed=0).to_pandas().to_parquet(ref)
    rig = Rig(tmp_path / "state", profiles, river_model, reference=str(ref), v1_profile=False)
    try:
        assert rig.promote()[0] == 200
        assert rig.handed == [(rig.v2, profiles[1].fingerprint)]
        res = rig.actions.admin("rollback", MODEL, {}, "alice")
        assert res.status == 200, res.body
        assert res.body["champion"] == rig.v1 and res.body["profile"] == "adopted"
        assert "registered without a reference_profile.json" in res.body["profile_note"]
        # the reference file's profile, as the monitor reads that file (not v2's)
        version, fingerprint = rig.handed[-1]
        assert version == rig.v1 and fingerprint != profiles[1].fingerprint
        assert fingerprint == ReferenceReader().profile(str(ref)).fingerprint
        assert rig.actions.status()["profile_adoption"] == {}
    finally:
        rig.actions.close()


def test_a_profile_less_version_without_a_reference_file_stays_pending_and_says_why(
        tmp_path: Path, profiles: tuple[ReferenceProfile, ReferenceProfile],
        river_model: Any):
    rig = Rig(tmp_path / "state", profiles, river_model, v1_profile=False)
    try:
        assert rig.promote()[0] == 200
        res = rig.actions.admin("rollback", MODEL, {}, "alice")
        assert res.status == 202 and res.body["profile"] == "pending", res.body
        assert "no reference file is configured" in res.body["profile_error"]
    finally:
        rig.actions.close()


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(failures=st.integers(0, 5))
def test_after_any_outage_the_monitor_ends_on_the_new_champions_profile_once(
        tmp_path_factory: pytest.TempPathFactory,
        profiles: tuple[ReferenceProfile, ReferenceProfile], river_model: Any,
        failures: int):
    rig = Rig(tmp_path_factory.mktemp("state"), profiles, river_model)
    real = mlflow_registry.download_artifacts
    flaky = FlakyProfileDownload(real, failures=failures)
    mlflow_registry.download_artifacts = flaky  # type: ignore[assignment]
    try:
        status, _ = rig.promote()
        assert status == (200 if failures == 0 else 202)
        for _ in range(failures + 3):  # each lane run after the longest wait it may have
            rig.clock.advance(120.0)
            rig.actions.run_registry_actions()
        assert rig.handed == [(rig.v2, profiles[1].fingerprint)]
        assert flaky.calls == failures + 1
        assert rig.actions.status()["profile_adoption"] == {}
        assert not math.isnan(rig.pending_gauge()) and rig.pending_gauge() == 0.0
    finally:
        mlflow_registry.download_artifacts = real  # type: ignore[assignment]
        rig.actions.close()
