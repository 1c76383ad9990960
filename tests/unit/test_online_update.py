"""Online updates against a real MLflow store (SQLite in a temporary folder).

A small labelled window drawn from the demo generator (outcomes a little worse than the
champion expects: concept drift) is learned by the champion's river pipeline; the result
must be a new registered version with its lineage, a reference profile beside it, and the
alias the policy asks for.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from driftwatch.actions.context import ActionContext
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.outbox import Outbox
from driftwatch.actions.records import ActionRecord, ActionState
from driftwatch.clock import EventTimeClock, ManualClock
from driftwatch.errors import ActionError
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.tiers import Tier
from driftwatch.registry.bootstrap import ensure_champion
from driftwatch.registry.learners import build_learner
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.publish import publish_flavour
from driftwatch.registry.retry import RegistryUnavailableError, Retry
from driftwatch.registry.versions import (
    CHALLENGER,
    CHAMPION,
    TAG_ACTION_KEY,
    TAG_DATA_WINDOW,
    TAG_PARENT,
    TAG_PROFILE,
    TAG_RECALIBRATION_OF,
    TAG_UPDATE_DIGEST,
    TAG_VERDICT,
)
from driftwatch.replay.execute import ReplayActions
from driftwatch.testing.generator import reference_table
from driftwatch.windows.profile import ReferenceProfile

MODEL = "credit-risk"


def labelled_window(n: int, seed: int, concept_shift: float = 0.7) -> pd.DataFrame:
    """Applications scored by the champion whose outcomes default more than it predicts."""
    df = reference_table(n, seed=seed).to_pandas()
    logit = np.log(df["score"] / (1 - df["score"])) + concept_shift
    rng = np.random.default_rng(seed + 100)
    df["label"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    return df


@pytest.fixture(scope="module")
def reference() -> pd.DataFrame:
    return reference_table(4000, seed=0).to_pandas()


@pytest.fixture(scope="module")
def profile(reference: pd.DataFrame) -> ReferenceProfile:
    return ReferenceProfile.build(reference)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_700_000_000.0)


@pytest.fixture
def executor(
    tmp_path: Path, clock: ManualClock, reference: pd.DataFrame, profile: ReferenceProfile
) -> Iterator[ActionExecutor]:
    buffer = LabelledBuffer(profile.schema, capacity=5000)
    buffer.add_frame(labelled_window(1500, seed=3))
    promoted: list[tuple[str, str, str]] = []
    ex = ActionExecutor.open(
        tmp_path / "state",
        clock=clock,
        buffer=buffer,
        cutoff=0.25,
        on_promote=lambda m, v, p: promoted.append((m, v, p.fingerprint)),
    )
    ex.promoted = promoted  # type: ignore[attr-defined]
    ensure_champion(ex.registry, MODEL, reference, at=clock.now(), profile=profile)
    yield ex
    ex.close()


def mild(window_id: int = 11, **settings: object) -> Decision:
    base: dict[str, object] = {
        "type": "online_update",
        "opt_in": True,
        "learner": "StandardScaler|LogisticRegression",
        "promote": "challenger",
        "min_labelled": 500,
    }
    base.update(settings)
    reason = Reason("psi", "drift", "income", 0.12, 0.10, Tier.MILD, "above", "demo.yaml:40")
    return Decision(
        MODEL,
        window_id,
        1_699_999_000.0,
        Tier.MILD,
        Tier.MILD,
        action="online_update",
        action_settings=base,
        reasons=(reason,),
        policy="credit-risk-demo",
        policy_digest="sha256:feed",
    )


CONTEXT = ActionContext(window_start=1_699_000_000.0, window_end=1_699_999_000.0)


def test_bootstrap_registers_the_champion_once(executor: ActionExecutor, profile, reference):
    reg = executor.registry
    champion = reg.by_alias(MODEL, CHAMPION)
    assert champion is not None and champion.version == "1"
    assert champion.tags[TAG_PROFILE] == profile.fingerprint
    assert reg.load_profile(MODEL, "1").fingerprint == profile.fingerprint
    again = ensure_champion(reg, MODEL, reference, at=0.0, profile=profile)
    assert again.version == "1" and len(reg.versions(MODEL)) == 1
    # the distilled champion scores like the production model it stands for
    model = reg.load_model(MODEL, "1")
    gap = np.abs(model.predict_proba(reference) - reference["score"].to_numpy())
    assert float(np.median(gap)) < 0.01


def test_online_update_registers_a_challenger_with_lineage(executor: ActionExecutor):
    action_id = executor.submit(mild(), CONTEXT)
    [rec] = executor.run_pending()
    assert rec.state is ActionState.SUCCEEDED, rec.error
    assert rec.outcome["start"] == "warm" and rec.outcome["parent_version"] == "1"

    reg = executor.registry
    v2 = reg.get_version(MODEL, rec.outcome["version"])
    assert v2.version == "2"
    assert v2.tags[TAG_ACTION_KEY] == "credit-risk:mild:11"
    assert v2.tags[TAG_PARENT] == "1"
    assert v2.tags[TAG_DATA_WINDOW] == "1699000000.0/1699999000.0"
    assert v2.tags[TAG_PROFILE] == reg.get_version(MODEL, "1").tags[TAG_PROFILE]
    assert reg.by_alias(MODEL, CHALLENGER).version == "2"
    assert reg.by_alias(MODEL, CHAMPION).version == "1"  # not in production yet

    run = reg.client.get_run(v2.run_id)
    assert run.data.params["learner"] == "StandardScaler|LogisticRegression"
    assert {"pv_auc", "pv_log_loss", "champion_log_loss"} <= set(run.data.metrics)
    # learning the drifted outcomes beats the champion's log loss on the same rows
    assert run.data.metrics["pv_log_loss"] < run.data.metrics["champion_log_loss"]

    # the same decision again changes nothing
    assert executor.submit(mild(), CONTEXT) == action_id
    assert executor.run_pending() == []
    assert [v.version for v in reg.versions(MODEL)] == ["1", "2"]


def test_online_update_changes_the_model(executor: ActionExecutor, reference):
    executor.submit(mild(), CONTEXT)
    [rec] = executor.run_pending()
    before = executor.registry.load_model(MODEL, "1").predict_proba(reference)
    after = executor.registry.load_model(MODEL, rec.outcome["version"]).predict_proba(reference)
    assert after.mean() > before.mean()  # it learned that applicants default more


def test_direct_promotion_makes_it_champion_and_hands_over_its_profile(executor):
    [rec] = (executor.submit(mild(promote="direct"), CONTEXT), executor.run_pending())[1]
    assert rec.state is ActionState.SUCCEEDED, rec.error
    reg = executor.registry
    assert reg.by_alias(MODEL, CHAMPION).version == "2"
    assert reg.by_alias(MODEL, CHALLENGER) is None
    fingerprint = reg.get_version(MODEL, "2").tags[TAG_PROFILE]
    assert executor.promoted == [(MODEL, "2", fingerprint)]
    assert [h["alias"] for h in reg.alias_history(MODEL)] == ["champion", "champion"]


def test_another_learner_starts_fresh_from_the_reference(executor: ActionExecutor, reference):
    executor.env.reference_path = None
    [rec] = (
        executor.submit(mild(learner="StandardScaler|PAClassifier"), CONTEXT),
        executor.run_pending(),
    )[1]
    assert rec.state is ActionState.SUCCEEDED, rec.error
    assert rec.outcome["start"] == "fresh"
    model = executor.registry.load_model(MODEL, rec.outcome["version"])
    assert model.learner == "StandardScaler|PAClassifier"
    assert model.predict_proba(reference.head(50)).shape == (50,)


def test_too_few_labelled_rows_skip_the_update_with_the_reason(executor: ActionExecutor):
    """Not enough labels yet is no error: the update ends skipped (a verdict, as discarded
    and unchanged are), with the reason, and the summary, report and metrics say skipped."""
    from driftwatch.actions.audit import AuditTrail
    from driftwatch.actions.outcomes import action_outcome, metric_outcome, outcome_counts

    [rec] = (executor.submit(mild(min_labelled=100_000), CONTEXT), executor.run_pending())[1]
    assert rec.state is ActionState.SUCCEEDED and rec.error is None
    reason = "only 1500 labelled rows in the window, the policy needs 100000"
    assert rec.outcome["verdict"] == "skipped" and rec.outcome["reason"] == reason
    assert rec.outcome["labelled"] == 1500 and rec.outcome["min_labelled"] == 100_000
    assert len(executor.registry.versions(MODEL)) == 1  # nothing registered
    [entry] = AuditTrail(executor.outbox).entries()  # a line of actions.jsonl
    o = action_outcome(entry)
    assert (o["state"], o["reason"], o["version"]) == ("skipped", reason, None)
    assert outcome_counts([o]) == "1 skipped"
    assert metric_outcome(entry["state"], entry["outcome"]) == "skipped"
    assert executor.run_pending() == []  # final: not tried again


def test_learners_outside_the_allow_list_are_refused():
    with pytest.raises(
        ActionError, match=r"unknown learner step 'XGBoost'; valid: .*StandardScaler"
    ):
        build_learner("StandardScaler|XGBoost")
    with pytest.raises(ActionError, match="exactly one estimator, last"):
        build_learner("LogisticRegression|StandardScaler")


def _mild_against(down: MlflowRegistry, tmp_path: Path, profile: ReferenceProfile,
                  clock: Any) -> tuple[Outbox, ActionExecutor, int]:
    """An executor on registry ``down`` (30 s back-off) with 800 labelled rows, and the
    mild online update it was given: its outbox, itself, the action's id."""
    buffer = LabelledBuffer(profile.schema, capacity=2000)
    buffer.add_frame(labelled_window(800, seed=4))
    box = Outbox(tmp_path / "state", clock=clock)
    ex = ActionExecutor(box, down, None, clock, buffer=buffer, backoff_s=30.0)
    return box, ex, ex.submit(mild(), CONTEXT)


def test_an_unreachable_tracking_server_delays_the_action_and_never_loses_it(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile, monkeypatch
):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    slept: list[float] = []
    down = MlflowRegistry("http://127.0.0.1:9", retry=Retry(attempts=3, sleep=slept.append))
    with pytest.raises(RegistryUnavailableError, match="unreachable after 3 attempts"):
        down.versions(MODEL)
    assert slept == [0.5, 1.0]

    box, ex, action_id = _mild_against(down, tmp_path, profile, clock)
    [rec] = ex.run_pending()
    assert rec.state is ActionState.PENDING and rec.attempts == 1
    assert rec.next_attempt_at == clock.now() + 30.0 and "unreachable" in (rec.note or "")
    assert ex.run_pending() == []  # backing off
    clock.advance(31)
    [rec] = ex.run_pending()
    assert rec.state is ActionState.PENDING and rec.next_attempt_at == clock.now() + 60.0
    ex.close()
    box.close()

    # MLflow is back (here: the embedded store): the same action completes
    box = Outbox(tmp_path / "state", clock=clock)
    up = ActionExecutor(box, MlflowRegistry.embedded(tmp_path / "state"), None, clock)
    ensure_champion(
        up.registry,
        MODEL,
        reference_table(3000, seed=0).to_pandas(),
        at=clock.now(),
        profile=profile,
    )
    clock.advance(120)
    [rec] = up.run_pending()
    assert rec.id == action_id and rec.state is ActionState.SUCCEEDED, rec.error
    up.close()


def test_a_known_outage_is_said_once_not_at_every_window_of_a_replay(
    tmp_path: Path, profile: ReferenceProfile, monkeypatch, caplog
):
    """A replay's retry times are in event time, so a waiting action is due again at
    every window: once MLflow is known down (the registry's breaker is open) each try
    fails at once, and neither the log nor the audit trail says so again each time."""
    import logging

    from driftwatch.registry.breaker import CircuitBreaker

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    wall = [0.0]
    slept: list[float] = []
    down = MlflowRegistry("http://127.0.0.1:9", retry=Retry(
        attempts=3, sleep=slept.append,
        breaker=CircuitBreaker(cooloff_s=5.0, monotonic=lambda: wall[0])))
    clock = EventTimeClock()
    clock.observe(1_700_000_000.0)
    box, ex, action_id = _mild_against(down, tmp_path, profile, clock)
    caplog.set_level(logging.WARNING)
    for window in range(1, 41):  # 40 windows, a day of event time each
        clock.observe(1_700_000_000.0 + window * 86_400.0)
        wall[0] += 0.05
        ex.run_pending()
    rec = box.get(action_id)
    assert rec is not None and rec.state is ActionState.PENDING and rec.attempts == 40
    assert slept == [0.5, 1.0]  # one full wait, for the call that found the outage
    said = [r.getMessage() for r in caplog.records]
    assert sum("waits for MLflow" in m for m in said) == 1, said
    assert sum(m.startswith("MLflow is unreachable") for m in said) == 1, said
    notes = [s for s in box.steps(action_id) if s.step == "mlflow_unavailable"]
    assert len(notes) == 1  # wall[0] reached 2 s: no probe yet, nothing new to record
    ex.close()
    box.close()


def test_a_replays_end_does_not_wait_for_a_retry_time_its_clock_never_reaches(
    tmp_path: Path, profile: ReferenceProfile, monkeypatch
):
    """At the end of a replay event time stops: an action backing off from an unreachable
    MLflow gets one more try and is left open, rather than holding the replay until the
    drain's timeout (15 minutes with the replay's default) for a retry time never reached."""
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    clock = EventTimeClock()
    clock.observe(1_700_000_000.0)
    down = MlflowRegistry("http://127.0.0.1:9", retry=Retry(attempts=1))
    box, ex, action_id = _mild_against(down, tmp_path, profile, clock)
    [rec] = ex.run_pending()
    assert rec.attempts == 1 and rec.next_attempt_at == clock.now() + 30.0
    waited = [0.0]

    def sleep(s: float) -> None:
        waited[0] += s

    still_open = ex.drain(900.0, sleep=sleep, monotonic=lambda: waited[0], clock_stopped=True)
    assert [r.id for r in still_open] == [action_id]
    assert waited[0] == 0.0  # not a second spent waiting for the retry time
    rec = box.get(action_id)
    assert rec is not None and rec.attempts == 2  # the one more try at the end
    assert rec.state is ActionState.PENDING and "unreachable" in (rec.note or "")

    # replay's end goes this way: one more try each time, no wait
    replay_end = ReplayActions.__new__(ReplayActions)
    replay_end.executor = ex
    assert [r.id for r in replay_end.finish(timeout_s=5.0)] == [action_id]
    assert box.get(action_id).attempts == 3  # type: ignore[union-attr]
    ex.close()
    box.close()


def test_a_newer_update_supersedes_the_waiting_challenger(executor: ActionExecutor):
    executor.submit(mild(window_id=11), CONTEXT)
    executor.env.buffer.add_frame(labelled_window(200, seed=5))  # new labels came in
    executor.submit(mild(window_id=12), CONTEXT)
    first, second = executor.run_pending()
    assert second.outcome["version"] == "3"
    reg = executor.registry
    assert reg.by_alias(MODEL, CHALLENGER).version == "3"
    assert reg.get_version(MODEL, first.outcome["version"]).tags["driftwatch.verdict"] == (
        "superseded"
    )


@pytest.mark.parametrize("method", ["learner", "recalibrate"])
def test_the_same_rows_on_the_same_parent_register_no_second_version(
    executor: ActionExecutor, method: str
):
    [first] = (executor.submit(mild(11, method=method), CONTEXT), executor.run_pending())[1]
    assert first.state is ActionState.SUCCEEDED, first.error
    reg = executor.registry
    assert reg.get_version(MODEL, "2").tags[TAG_UPDATE_DIGEST].startswith("sha256:")

    # the next mild window, before any new label: the same parent, learner and rows
    [again] = (executor.submit(mild(12, method=method), CONTEXT), executor.run_pending())[1]
    assert again.state is ActionState.SUCCEEDED, again.error
    assert again.outcome["verdict"] == "unchanged"
    assert again.outcome["reason"] == "unchanged: same data and parent as version 2"
    assert again.outcome["same_as"] == "2" and again.outcome["alias"] == CHALLENGER
    assert "version" not in again.outcome  # the audit credits v2 to the first action only
    assert [v.version for v in reg.versions(MODEL)] == ["1", "2"]
    assert reg.by_alias(MODEL, CHALLENGER).version == "2"
    assert TAG_VERDICT not in reg.get_version(MODEL, "2").tags  # not superseded by itself


def test_an_unchanged_update_reuses_its_version_as_challenger_unless_judged(
    executor: ActionExecutor,
):
    executor.submit(mild(11), CONTEXT)
    executor.run_pending()
    reg = executor.registry
    reg.delete_alias(MODEL, CHALLENGER, at=0.0)
    [rec] = (executor.submit(mild(12), CONTEXT), executor.run_pending())[1]
    assert rec.outcome["verdict"] == "unchanged" and rec.outcome["alias"] == CHALLENGER
    assert reg.by_alias(MODEL, CHALLENGER).version == "2"

    reg.delete_alias(MODEL, CHALLENGER, at=0.0)
    reg.set_version_tag(MODEL, "2", TAG_VERDICT, "discarded")
    [rec] = (executor.submit(mild(13), CONTEXT), executor.run_pending())[1]
    assert rec.outcome["verdict"] == "unchanged" and rec.outcome["alias"] is None
    assert rec.outcome["earlier_verdict"] == "discarded"
    assert reg.by_alias(MODEL, CHALLENGER) is None
    assert [v.version for v in reg.versions(MODEL)] == ["1", "2"]


def test_another_learner_or_parent_is_a_new_update(executor: ActionExecutor):
    executor.submit(mild(11), CONTEXT)
    executor.run_pending()
    # the waiting challenger, asked again with direct promotion, is promoted
    [rec] = (executor.submit(mild(12, promote="direct"), CONTEXT), executor.run_pending())[1]
    assert rec.outcome["verdict"] == "unchanged" and rec.outcome["same_as"] == "2"
    assert executor.registry.by_alias(MODEL, CHAMPION).version == "2"
    assert executor.promoted[-1][1] == "2"
    # v2 is the parent now: the same rows on it are a new update, and so is another learner
    [rec] = (executor.submit(mild(13), CONTEXT), executor.run_pending())[1]
    assert rec.outcome["version"] == "3" and rec.outcome["parent_version"] == "2"
    [rec] = (executor.submit(mild(14, learner="StandardScaler|PAClassifier"), CONTEXT),
             executor.run_pending())[1]
    assert rec.outcome["version"] == "4" and "verdict" not in rec.outcome


class _GoodScore:
    """A bank's custom pyfunc that answers P(good): high debt and utilisation, low."""

    @staticmethod
    def p_good(x: pd.DataFrame) -> np.ndarray:
        z = 4 * x["debt_to_income"].to_numpy(np.float64) + 2 * x["utilization"].to_numpy(
            np.float64) - 3
        return 1 / (1 + np.exp(z))


def _register_good_score(state: Path, clock: ManualClock,
                         profile: ReferenceProfile) -> MlflowRegistry:
    """An embedded registry under ``state`` whose champion is the :class:`_GoodScore`
    pyfunc (version 1)."""
    import mlflow.pyfunc
    from mlflow.models import infer_signature

    class GoodScore(mlflow.pyfunc.PythonModel):
        def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
            return _GoodScore.p_good(model_input)

    reg = MlflowRegistry.embedded(state)
    x = labelled_window(50, seed=1)[["debt_to_income", "utilization"]].astype(np.float64)
    info = publish_flavour(
        reg, MODEL,
        lambda: mlflow.pyfunc.log_model(name="model", python_model=GoodScore(),
                                        signature=infer_signature(x, _GoodScore.p_good(x))),
        action_key="bank:v1", profile=profile)
    reg.set_alias(MODEL, CHAMPION, info.version, at=clock.now())
    return reg


def _custom_champion_update(tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
                            score_is: str) -> tuple[ActionExecutor, object]:
    window = labelled_window(1500, seed=3)
    state = tmp_path / score_is
    _register_good_score(state, clock, profile)
    buffer = LabelledBuffer(profile.schema, capacity=5000)
    buffer.add_frame(window)
    ex = ActionExecutor.open(state, clock=clock, buffer=buffer, score_is=score_is)
    [rec] = (ex.submit(mild(method="auto"), CONTEXT), ex.run_pending())[1]
    assert rec.state is ActionState.SUCCEEDED, rec.error
    assert rec.outcome["start"] == "recalibrate"
    return ex, rec


def test_a_champion_declared_p_good_is_scored_and_recalibrated_as_p_bad(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile
):
    ex, rec = _custom_champion_update(tmp_path, clock, profile, "p_good")
    window = labelled_window(300, seed=8)
    np.testing.assert_allclose(ex.env.scorer(MODEL, "1").score(window),
                               1 - _GoodScore.p_good(window))
    ex.close()
    plain, misread = _custom_champion_update(tmp_path, clock, profile, "p_bad")
    plain.close()
    # read as P(bad), its P(good) ranks applicants backwards: a far worse log loss
    declared = rec.outcome["metrics"]["champion_holdout_log_loss"]
    assert declared < misread.outcome["metrics"]["champion_holdout_log_loss"]


def test_a_discarded_recalibration_is_not_made_again_on_the_same_rows(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
    monkeypatch: pytest.MonkeyPatch,
):
    """Before, each mild window on the same labelled rows refitted the layer on them, to be
    discarded again: the discarded ones carried no digest that a later update looked for."""

    from driftwatch.actions import online_update

    def window(n: int, seed: int) -> pd.DataFrame:  # outcomes as the champion expects them
        df = labelled_window(n, seed=seed)
        rng = np.random.default_rng(seed + 7)
        return df.assign(label=(rng.random(n) > _GoodScore.p_good(df)).astype(np.float64))

    fits: list[str] = []
    real = online_update.recalibrated_candidate
    monkeypatch.setattr(online_update, "recalibrated_candidate",
                        lambda env, m, v, w: fits.append(v) or real(env, m, v, w))
    state = tmp_path / "state"
    reg = _register_good_score(state, clock, profile)

    def run(window_id: int, rows: pd.DataFrame) -> ActionRecord:
        buffer = LabelledBuffer(profile.schema, capacity=5000)
        buffer.add_frame(rows)
        ex = ActionExecutor.open(state, clock=clock, buffer=buffer, score_is="p_good")
        try:
            [rec] = (ex.submit(mild(window_id, method="auto"), CONTEXT), ex.run_pending())[1]
        finally:
            ex.close()  # each run is a start of its own: only the outbox carries over
        assert rec.state is ActionState.SUCCEEDED, rec.error
        return rec

    rows = window(1500, seed=3)
    first = run(11, rows)
    assert first.outcome["verdict"] == "discarded", first.outcome  # the premise
    assert fits == ["1"]
    for window_id in (12, 13):
        again = run(window_id, rows)
        assert again.outcome["verdict"] == "discarded"
        assert again.outcome["reason"] == (f"same data and parent as action {first.id}, "
                                           f"discarded then: {first.outcome['reason']}")
        assert again.outcome["same_as_action"] == first.id
        assert fits == ["1"]  # nothing scored or fitted again
    assert [v.version for v in reg.versions(MODEL)] == ["1"]
    # new labels are new data: the layer is fitted again
    run(14, pd.concat([rows, window(300, seed=9)], ignore_index=True))
    assert fits == ["1", "1"]


def test_method_learner_on_a_champion_that_is_no_river_model_fails_and_registers_nothing(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
):
    """Before, a fresh river pipeline was registered as the bank's model's challenger (or
    champion, with promote: direct): its model family replaced, not updated."""

    state = tmp_path / "state"
    reg = _register_good_score(state, clock, profile)
    buffer = LabelledBuffer(profile.schema, capacity=5000)
    buffer.add_frame(labelled_window(1500, seed=3))
    ex = ActionExecutor.open(state, clock=clock, buffer=buffer, score_is="p_good")
    [rec] = (ex.submit(mild(method="learner", promote="direct"), CONTEXT), ex.run_pending())[1]
    ex.close()
    assert rec.state is ActionState.FAILED
    assert rec.error == (
        f"online_update method: learner needs a river champion, and {MODEL} v1 is a pyfunc "
        "model: a fresh StandardScaler|LogisticRegression would be registered in its place "
        "instead of updating it; set method: recalibrate (or auto) to recalibrate its score")
    assert [v.version for v in reg.versions(MODEL)] == ["1"]
    assert reg.by_alias(MODEL, CHAMPION).version == "1"


def _policy_actions(method: str) -> object:
    from types import SimpleNamespace

    from driftwatch.policy.actions import OnlineUpdateAction

    return SimpleNamespace(mild=OnlineUpdateAction(method=method, opt_in=True),
                           moderate=None, severe=None)


def test_promoting_a_model_that_is_no_river_one_warns_the_learner_updates(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A retraining that promotes the bank's pyfunc model left `method: learner` online
    updates to fail one by one later, with nothing said at the promotion (the start's check
    saw the river champion of then)."""
    from driftwatch.actions.online_update import learner_after_promotion

    state = tmp_path / "state"
    _register_good_score(state, clock, profile)  # v1: a pyfunc, no river model
    ex = ActionExecutor.open(state, clock=clock, policy_actions=_policy_actions("learner"))
    with caplog.at_level("WARNING", logger="driftwatch.actions.online_update"):
        said = learner_after_promotion(ex.env, MODEL, "1")
    assert said is not None and said.startswith(f"promoted {MODEL} v1, a pyfunc model: ")
    assert "mild tier: online_update method: learner needs a river champion" in said
    assert said in caplog.text
    # recalibrate (or auto) updates any model: nothing to say; nor without a policy
    ex.env.policy_actions = _policy_actions("auto")
    assert learner_after_promotion(ex.env, MODEL, "1") is None
    ex.env.policy_actions = None
    assert learner_after_promotion(ex.env, MODEL, "1") is None
    ex.close()


def test_a_river_champion_promoted_says_nothing(executor: ActionExecutor) -> None:
    from driftwatch.actions.online_update import learner_after_promotion

    executor.env.policy_actions = _policy_actions("learner")
    assert learner_after_promotion(executor.env, MODEL, "1") is None  # the river stand-in


def test_the_promotion_warning_reaches_the_replay_summary_line() -> None:
    from driftwatch.actions.outcomes import action_outcome, outcome_line

    o = action_outcome({"id": 4, "action": "shadow", "window_id": 9, "state": "succeeded",
                        "outcome": {"verdict": "promoted", "version": "3",
                                    "warning": "promoted m v3, a sklearn model: ..."}})
    assert o["warning"] == "promoted m v3, a sklearn model: ..."
    assert outcome_line(o) == ("action 4 shadow (window 9): done; promoted v3; warning: "
                               "promoted m v3, a sklearn model: ...")


def _moderate(window_id: int, **settings: object) -> Decision:
    return Decision(MODEL, window_id, 1_699_999_000.0, Tier.MODERATE, Tier.MODERATE,
                    action="shadow", action_settings={"type": "shadow", **settings},
                    requires_approval=False, policy="credit-risk-demo",
                    policy_digest="sha256:feed")


def test_a_recalibrated_challenger_is_judged_on_log_loss_not_on_a_ranking_metric(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
):
    """A bank's model (no river pipeline) gets a recalibration layer as its challenger: it
    ranks every row as the champion does, so on the default metric (auc) its gain was 0
    whatever the outcomes, and every such shadow was discarded."""

    def outcomes(n: int, seed: int) -> pd.DataFrame:  # defaulting more than it predicts
        df = labelled_window(n, seed=seed)
        p_bad = 1 - _GoodScore.p_good(df)
        logit = np.log(p_bad / (1 - p_bad)) + 1.2
        rng = np.random.default_rng(seed + 7)
        return df.assign(label=(rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64))

    state = tmp_path / "state"
    _register_good_score(state, clock, profile)
    buffer = LabelledBuffer(profile.schema, capacity=10_000)
    buffer.add_frame(outcomes(1500, seed=3))  # what the layer is fitted on
    ex = ActionExecutor.open(state, clock=clock, buffer=buffer, score_is="p_good")
    try:
        action_id = ex.submit(_moderate(21, min_labelled=1000, margin=0.0), CONTEXT)
        [rec] = ex.run_pending()
        assert rec.state is ActionState.RUNNING, rec.error
        ev = rec.artifacts["shadow"]
        assert (ev["metric"], ev["metric_instead_of"]) == ("log_loss", "auc")
        challenger = ev["challenger_version"]
        assert ex.registry.get_version(MODEL, challenger).tags[TAG_RECALIBRATION_OF] == "1"
        buffer.add_frame(outcomes(1200, seed=4))  # outcomes the challenger never saw
        [rec] = ex.run_pending()
        rec = ex.outbox.get(action_id)
        assert rec is not None and rec.state is ActionState.SUCCEEDED, rec
        assert rec.outcome["verdict"] == "promoted", rec.outcome
        ev = rec.artifacts["shadow"]
        # the premise: on auc the two are alike, so auc alone could never promote it
        auc = (ev["metrics"]["champion"]["auc"], ev["metrics"]["challenger"]["auc"])
        assert abs(auc[0] - auc[1]) < 2e-3, auc
        assert ev["metrics"]["challenger"]["log_loss"] < ev["metrics"]["champion"]["log_loss"]
        assert ev["reason"].startswith("challenger log_loss beats the champion's by the margin 0")
        assert ("; judged on log_loss, not auc: a recalibration ranks rows as the champion "
                "does") in ev["reason"], ev["reason"]
    finally:
        ex.close()


def test_a_recalibration_left_as_challenger_is_judged_on_log_loss_too(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
):
    """A shadow that finds a recalibration of its champion already under the `challenger`
    alias (one an earlier replay against the same tracking server left undecided) judged
    it on auc, where it can never win: each such shadow was discarded, gain 0."""
    state = tmp_path / "state"
    reg = _register_good_score(state, clock, profile)
    buffer = LabelledBuffer(profile.schema, capacity=10_000)
    buffer.add_frame(labelled_window(1500, seed=3))
    first = ActionExecutor.open(state, clock=clock, buffer=buffer, score_is="p_good")
    try:  # makes the recalibration and leaves it in shadow, undecided
        first.submit(_moderate(21, min_labelled=1000), CONTEXT)
        [rec] = first.run_pending()
        assert rec.state is ActionState.RUNNING, rec.error
        made = rec.artifacts["shadow"]["challenger_version"]
    finally:
        first.close()
    assert reg.by_alias(MODEL, CHALLENGER).version == made
    # a second run: its own outbox, the same registry
    second = ActionExecutor(Outbox(tmp_path / "again", clock=clock), reg, None, clock,
                            buffer=buffer, score_is="p_good")
    try:
        assert len(_shadow_judges_on_log_loss(second, 22, made)) == 1  # the shadow alone
    finally:
        second.close()


def _shadow_judges_on_log_loss(ex: ActionExecutor, window: int, made: str) -> list[Any]:
    """A moderate window's shadow takes the recalibration ``made`` as its challenger and
    judges it on log loss instead of auc; returns the records the run gave."""
    ex.submit(_moderate(window, min_labelled=1000), CONTEXT)
    records = ex.run_pending()
    [shadow] = [r for r in records if r.action == "shadow"]
    assert shadow.state is ActionState.RUNNING, shadow.error
    ev = shadow.artifacts["shadow"]
    assert ev["challenger_version"] == made
    assert (ev["metric"], ev["metric_instead_of"]) == ("log_loss", "auc")
    return records


def test_an_online_updates_recalibration_left_as_challenger_is_judged_on_log_loss(
    tmp_path: Path, clock: ManualClock, profile: ReferenceProfile,
):
    """A mild window's online update of a bank's model registers a recalibration layer
    under the `challenger` alias; the next moderate window's shadow took it and judged it
    on the policy's ranking metric, which it can never win (its versions carried no
    driftwatch.recalibration_of tag): every such shadow was discarded, gain about 0."""
    ex, rec = _custom_champion_update(tmp_path, clock, profile, "p_good")
    try:
        made = rec.outcome["version"]
        assert ex.registry.by_alias(MODEL, CHALLENGER).version == made
        assert ex.registry.get_version(MODEL, made).tags[TAG_RECALIBRATION_OF] == "1"
        _shadow_judges_on_log_loss(ex, 21, made)
    finally:
        ex.close()


def test_a_river_challenger_keeps_the_policys_metric(executor: ActionExecutor):
    executor.submit(_moderate(22, min_labelled=1000), CONTEXT)
    [rec] = executor.run_pending()
    assert rec.state is ActionState.RUNNING, rec.error
    ev = rec.artifacts["shadow"]
    assert (ev["metric"], ev["metric_instead_of"]) == ("auc", None)


def test_a_shadow_awaiting_approval_is_closed_when_its_comparison_no_longer_holds(
    executor: ActionExecutor,
):
    """Two shadows of one retrained version (the retraining's own and a moderate
    window's): approving one promoted the version, and the other still waited for an
    approval that would promote it against a champion it never met."""
    box = executor.outbox
    ids = {}
    shadows = {31: ("0", "1"), 32: ("7", "8"), 33: ("1", "2"), 34: ("0", "1")}
    for window_id, (was, challenger) in shadows.items():
        state = ActionState.RUNNING if window_id == 34 else ActionState.AWAITING_APPROVAL
        ids[window_id], _ = box.record(_moderate(window_id), state=state)
        box.update(ids[window_id], artifacts={"shadow": {
            "champion_version": was, "challenger_version": challenger}})
    executor.run_pending()  # the champion is v1
    first, second, third, running = (box.get(ids[w]) for w in (31, 32, 33, 34))
    assert first.state is ActionState.SUCCEEDED and first.outcome == {
        "verdict": "superseded", "version": "1",
        "reason": "challenger v1 is the champion already"}
    assert second.state is ActionState.SUCCEEDED and second.outcome["reason"] == (
        "the champion changed from v7 to v1 since the comparison began: it compared v8 against "
        "v7")
    assert third.state is ActionState.AWAITING_APPROVAL  # compared against v1: still holds
    # a shadow still gathering outcomes for a version that is champion now: closed too
    assert running.state is ActionState.SUCCEEDED and running.outcome["verdict"] == "superseded"
    with pytest.raises(ActionError, match="nothing to approve"):
        executor.approve(ids[31], "ana")


def test_a_shadow_that_promoted_its_own_challenger_before_a_crash_carries_on(
    executor: ActionExecutor,
):
    """After a crash between its promote step and the end, a shadow's challenger is the
    champion: that is its own doing, not a stale comparison, and its remaining steps (the
    profile the monitor adopts) must still run."""
    from driftwatch.actions.steps import StepRunner

    box = executor.outbox
    rec_id, _ = box.record(_moderate(35), state=ActionState.RUNNING)
    box.update(rec_id, artifacts={"shadow": {"champion_version": "0",
                                             "challenger_version": "1"}})
    StepRunner(box, rec_id).run("promote", lambda: {"previous": "0"})
    assert executor.close_stale_approvals() == []
    assert box.get(rec_id).state is ActionState.RUNNING
