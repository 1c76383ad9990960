"""Actions read the reference file as the monitor does.

A bank's reference names its own columns (``bad_flag`` coded 1/0, an id to ignore, a
``p_good`` score). The monitor reads it with the policy's ``reference:`` block; an action
that registers a version without a profile of its own, or exports the rows for a
retraining, must read it the same way, or the monitor adopts another reference (the id as a
feature, no label, a flipped score) when that version is promoted.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.actions.context import ActionContext
from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.export import export_training
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.actions.online_update import _profile
from driftwatch.actions.records import ActionState
from driftwatch.actions.reference import ReferenceReader
from driftwatch.clock import ManualClock
from driftwatch.policy.decision import Decision, Reason
from driftwatch.policy.levels import load_reference
from driftwatch.policy.loader import load_policy_text
from driftwatch.policy.tiers import Tier
from driftwatch.policy.watcher import MINIMAL
from driftwatch.registry.bootstrap import distil_champion
from driftwatch.registry.versions import CHAMPION
from driftwatch.testing.generator import reference_table

MODEL = "credit"
POLICY = load_policy_text(MINIMAL + """reference:
  score: p_good
  score_is: p_good
  label: {column: bad_flag, bad: [1], good: [0]}
  ignore: [loan_id]
""", file="p.yaml")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """The generator's applications in the bank's own columns."""
    df = reference_table(3000, seed=0).to_pandas()
    return df.assign(loan_id=np.arange(len(df)), p_good=1.0 - df["score"],
                     bad_flag=df["label"]).drop(columns=["score", "label"])


@pytest.fixture
def ref_path(tmp_path: Path, table: pd.DataFrame) -> Path:
    path = tmp_path / "ref.parquet"
    table.to_parquet(path)
    return path


@pytest.fixture
def executor(tmp_path: Path, ref_path: Path, table: pd.DataFrame) -> Iterator[ActionExecutor]:
    """An executor whose champion, the bank's model, was registered without a profile."""
    monitor_profile = load_reference(ref_path, POLICY)
    rows = ReferenceReader(policy=POLICY).rows(ref_path)
    assert rows is not None
    buffer = LabelledBuffer(monitor_profile.schema, capacity=5000)
    buffer.add_frame(rows.head(1500))
    clock = ManualClock(1_700_000_000.0)
    promoted: list[tuple[str, str, object]] = []
    ex = ActionExecutor.open(tmp_path / "state", clock=clock, buffer=buffer,
                             reference_path=str(ref_path), cutoff=0.25,
                             on_promote=lambda m, v, p: promoted.append((m, v, p)),
                             reference_reader=ReferenceReader(policy=POLICY))
    ex.promoted = promoted  # type: ignore[attr-defined]
    s = monitor_profile.schema
    bank = distil_champion(rows, numeric=list(s.numeric), categorical=list(s.categorical))
    info = ex.registry.publish(MODEL, bank, action_key="bank:v1", profile=None)
    ex.registry.set_alias(MODEL, CHAMPION, info.version, at=clock.now(), by="bank")
    yield ex
    ex.close()


def _mild() -> Decision:
    settings = {"type": "online_update", "opt_in": True, "promote": "direct",
                "learner": "StandardScaler|LogisticRegression", "min_labelled": 500}
    reason = Reason("psi", "drift", "income", 0.12, 0.10, Tier.MILD, "above", "p.yaml:9")
    return Decision(MODEL, 11, 1_699_999_000.0, Tier.MILD, Tier.MILD, action="online_update",
                    action_settings=settings, reasons=(reason,), policy="minimal",
                    policy_digest="sha256:feed")


def test_a_champion_without_a_profile_falls_back_to_the_monitors_reference(
        executor: ActionExecutor, ref_path: Path):
    monitor = load_reference(ref_path, POLICY)
    assert not {"loan_id", "bad_flag", "p_good"} & set(monitor.schema.names)
    for fallback in (executor.env.version_profile(MODEL, "1"),
                     _profile(executor.env, MODEL, "1", ActionContext())):
        assert fallback.schema.names == monitor.schema.names
        assert fallback.fingerprint == monitor.fingerprint


def test_a_direct_online_update_hands_the_monitor_the_reference_it_started_with(
        executor: ActionExecutor, ref_path: Path):
    monitor = load_reference(ref_path, POLICY)
    [rec] = (executor.submit(_mild(), ActionContext()), executor.run_pending())[1]
    assert rec.state is ActionState.SUCCEEDED, rec.error
    [(_, version, adopted)] = executor.promoted  # type: ignore[attr-defined]
    assert version == rec.outcome["version"]
    assert adopted.schema.names == monitor.schema.names
    assert adopted.fingerprint == monitor.fingerprint


def _shifted(rows: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Labelled rows whose outcomes default more than the score says (concept drift)."""
    p = rows["score"].to_numpy(np.float64)
    logit = np.log(p / (1 - p)) + 1.0
    rng = np.random.default_rng(seed)
    return rows.assign(label=(rng.random(len(rows)) < 1 / (1 + np.exp(-logit))).astype(float))


def test_a_promoted_shadow_hands_the_monitor_the_reference_it_started_with(
        tmp_path: Path, ref_path: Path):
    monitor = load_reference(ref_path, POLICY)
    rows = ReferenceReader(policy=POLICY).rows(ref_path)
    assert rows is not None
    buffer = LabelledBuffer(monitor.schema, capacity=10_000)
    buffer.add_frame(_shifted(rows.iloc[:1500], seed=1))  # what the challenger learns
    clock = ManualClock(1_700_000_000.0)
    promoted: list[tuple[str, str, object]] = []
    ex = ActionExecutor.open(tmp_path / "state", clock=clock, buffer=buffer,
                             reference_path=str(ref_path),
                             on_promote=lambda m, v, p: promoted.append((m, v, p)),
                             reference_reader=ReferenceReader(policy=POLICY))
    try:
        s = monitor.schema
        bank = distil_champion(rows, numeric=list(s.numeric), categorical=list(s.categorical))
        info = ex.registry.publish(MODEL, bank, action_key="bank:v1", profile=None)
        ex.registry.set_alias(MODEL, CHAMPION, info.version, at=clock.now(), by="bank")
        decision = Decision(MODEL, 21, 1_699_999_000.0, Tier.MODERATE, Tier.MODERATE,
                            action="shadow", requires_approval=False, policy="minimal",
                            action_settings={"type": "shadow", "metric": "brier",
                                             "min_labelled": 1000, "margin": 0.0},
                            policy_digest="sha256:feed")
        action_id = ex.submit(decision, ActionContext())
        [rec] = ex.run_pending()
        assert rec.state is ActionState.RUNNING, rec.error
        buffer.add_frame(_shifted(rows.iloc[1500:], seed=2))  # outcomes it never saw
        ex.run_pending()
        rec = ex.outbox.get(action_id)
        assert rec is not None and rec.outcome["verdict"] == "promoted", rec
        [(_, version, adopted)] = promoted
        assert version == rec.artifacts["shadow"]["challenger_version"]
        assert adopted.schema.names == monitor.schema.names  # type: ignore[attr-defined]
        assert adopted.fingerprint == monitor.fingerprint  # type: ignore[attr-defined]
    finally:
        ex.close()


def test_a_fresh_learner_starts_on_the_reference_rows_coded_as_live(
        executor: ActionExecutor, table: pd.DataFrame):
    rows = executor.env.reference_rows()
    assert rows is not None and "loan_id" not in rows.columns
    np.testing.assert_array_equal(rows["label"].to_numpy(), table["bad_flag"].to_numpy())
    np.testing.assert_allclose(rows["score"].to_numpy(), 1.0 - table["p_good"].to_numpy())


def test_the_retraining_export_codes_the_label_as_the_window_does(
        executor: ActionExecutor, table: pd.DataFrame, tmp_path: Path):
    out = tmp_path / "training.parquet"
    export_training(None, executor.env.reference_rows(), out)
    got = pd.read_parquet(out)
    assert {"label", "score", "origin"} <= set(got.columns)
    assert not {"bad_flag", "p_good", "loan_id"} & set(got.columns)
    assert got["label"].sum() == table["bad_flag"].sum()


def test_without_a_policy_the_default_columns_are_read():
    assert ReferenceReader().conventions().ignore == ()


# -- the composition roots: one reader for the monitor and its actions ------------------------

def _sba(tmp: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, object, object]:
    """The SBA loan table's shape, mapped by ``init``: amounts written as money text, the
    outcome in ``MIS_Status``. Returns the reference, its policy and connector."""
    from driftwatch.connectors.config import load_connector
    from driftwatch.policy.loader import load_policy

    from ._cli import run_cli

    rng = np.random.default_rng(5)
    n = 1000
    pd.DataFrame({"Term": rng.integers(12, 300, n),
                  "DisbursementGross": [f"${v:,.2f} " for v in rng.lognormal(11, 1, n)],
                  "MIS_Status": rng.choice(["P I F", "CHGOFF"], n, p=[0.8, 0.2])}
                 ).to_csv(tmp / "ref.csv", index=False)
    pd.DataFrame({"id": np.arange(50), "ts": 1_700_000_000 + 60 * np.arange(50),
                  "Term": rng.integers(12, 300, 50),
                  "DisbursementGross": [f"${v:,.2f} " for v in rng.lognormal(11, 1, 50)],
                  "score": rng.uniform(0, 1, 50).round(4)}).to_csv(tmp / "live.csv", index=False)
    code, _, err = run_cli(["init", "--reference", str(tmp / "ref.csv"), "--sample",
                            str(tmp / "live.csv"), "--pane", "500", "--model", "m",
                            "--label-field", "MIS_Status", "--label-bad", "CHGOFF",
                            "--connector-out", str(tmp / "c.yaml"),
                            "--policy-out", str(tmp / "p.yaml")], capsys)
    assert code == 0, err
    return tmp / "ref.csv", load_policy(tmp / "p.yaml"), load_connector(tmp / "c.yaml")


def test_the_replay_and_the_daemon_hand_their_actions_the_monitors_reader(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    from types import SimpleNamespace

    from driftwatch.replay.execute import ReplayActions
    from driftwatch.replay.run import build_monitor
    from driftwatch.service.daemon import _reference_reader

    ref, policy, conn = _sba(tmp_path, capsys)
    monitor = build_monitor(policy, reference=ref, connector=conn)  # type: ignore[arg-type]
    reader = _reference_reader(SimpleNamespace(monitor=monitor, connector=conn))
    assert reader == ReferenceReader.of(policy, conn)
    assert reader.profile(ref).fingerprint == monitor.profile.fingerprint
    assert "DisbursementGross" in monitor.profile.schema.numeric  # money text read as amounts
    # the policy's columns alone are not enough: the connector reads the money text
    assert ReferenceReader(policy=policy).profile(ref).fingerprint != monitor.profile.fingerprint
    actions = ReplayActions(tmp_path / "state", monitor, reference=ref,
                            reference_reader=reader)
    try:
        env = actions.executor.env
        assert env.reader is reader
        fallback = env.reference_profile()
        assert fallback is not None and fallback.fingerprint == monitor.profile.fingerprint
    finally:
        actions.close()


def test_a_saved_profile_gives_no_rows_to_learn_or_export(tmp_path: Path, ref_path: Path):
    saved = load_reference(ref_path, POLICY).save(tmp_path / "ref.json.gz")
    assert ReferenceReader(policy=POLICY).rows(saved) is None


def test_a_reloaded_policy_reaches_the_daemons_reader(tmp_path: Path):
    """A hot reload that renames a reference column is read so by the monitor's next
    reference check; the actions must read it the same way."""
    from prometheus_client import CollectorRegistry

    from driftwatch.metrics import Metrics
    from driftwatch.service.actions import ServiceActions
    from driftwatch.service.config import parse_service_config

    cfg = parse_service_config("models:\n  - connector: c.yaml\n    policy: p.yaml\n"
                               f"state_dir: {tmp_path}\n")
    actions = ServiceActions(cfg, clock=ManualClock(1000.0), metrics=Metrics(CollectorRegistry()))
    try:
        reader = ReferenceReader(policy=POLICY, formats={"x": "percent"})
        ma = actions.add_model(MODEL, reference=None, cutoff=None, shadow_defaults={},
                               buffer=None, on_promote=None, policy=POLICY,
                               reference_reader=reader)
        assert ma.executor is not None and ma.executor.env.reader is reader
        reloaded = load_policy_text(MINIMAL, file="p.yaml")
        actions.set_policy(MODEL, reloaded)
        got = ma.executor.env.reader
        assert got.policy is reloaded and got.formats == {"x": "percent"}
        assert got.conventions().label == "label"
    finally:
        actions.close()


def test_reference_rows_hold_the_connectors_missing_values_as_missing(
        tmp_path: Path, table: pd.DataFrame):
    """Live rows hold a declared sentinel as missing (the decoder reads it so); the rows a
    learner starts on and a retraining exports must too, or -999 is learnt as an income."""
    from driftwatch.sentinels import MissingValues

    df = table.copy()
    sentinel = np.arange(len(df)) % 7 == 0
    df.loc[sentinel, "income"] = -999.0
    df["purpose"] = df["purpose"].astype(object)
    df.loc[np.arange(len(df)) % 11 == 0, "purpose"] = "?"
    path = tmp_path / "ref.parquet"
    df.to_parquet(path)
    missing = MissingValues(by_feature={"income": (-999,), "purpose": ("?",)})
    rows = ReferenceReader(policy=POLICY, missing=missing).rows(path)
    assert rows is not None
    assert rows["income"].isna().to_numpy().tolist() == (
        sentinel | df["income"].isna().to_numpy()).tolist()
    assert (rows["income"] != -999.0).all()
    assert rows["purpose"].isna().sum() == (np.arange(len(df)) % 11 == 0).sum() + int(
        table["purpose"].isna().sum())
    # the label and score are no features: a default sentinel never touches them
    everywhere = ReferenceReader(policy=POLICY, missing=MissingValues(default=(1,)))
    assert everywhere.rows(path)["label"].sum() == table["bad_flag"].sum()


def test_a_reloaded_policy_gives_the_shadow_after_a_retraining_its_settings(tmp_path: Path):
    """A retraining's challenger goes to shadow on the policy's shadow settings; after a
    hot reload that changes them (min_labelled, metric, approval), on the reloaded ones,
    as the reload's retrain settings and limits are."""
    from prometheus_client import CollectorRegistry

    from driftwatch.actions.context import shadow_defaults
    from driftwatch.actions.shadow import shadow_settings
    from driftwatch.metrics import Metrics
    from driftwatch.service.actions import ServiceActions
    from driftwatch.service.config import parse_service_config

    cfg = parse_service_config("models:\n  - connector: c.yaml\n    policy: p.yaml\n"
                               f"state_dir: {tmp_path}\n")
    actions = ServiceActions(cfg, clock=ManualClock(1000.0), metrics=Metrics(CollectorRegistry()))
    try:
        ma = actions.add_model(MODEL, reference=None, cutoff=None,
                               shadow_defaults=shadow_defaults(POLICY), buffer=None,
                               on_promote=None, policy=POLICY)
        assert ma.executor is not None
        reloaded = load_policy_text(MINIMAL + "actions:\n  moderate: {type: shadow, "
                                    "min_labelled: 7, metric: brier, require_approval: false}\n",
                                    file="p.yaml")
        actions.set_policy(MODEL, reloaded)
        got = shadow_settings({}, dict(ma.executor.env.shadow_defaults))
        assert (got.min_labelled, got.metric, got.require_approval) == (7, "brier", False)
    finally:
        actions.close()
