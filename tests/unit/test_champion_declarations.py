"""A bank's own model declared the way it really is.

A classifier trained with class 1 = good (a ``repaid`` flag) while the stream's labels say
1 = default: ``score_is: p_good`` reads it at its other class. A model whose output is no
probability (a scorecard's points, log-odds, a percentage): ``score_scale`` reads it in
that scale. Both apply to the user's own versions, never to those driftwatch's actions made
(retrained, recalibrated), which answer P(bad). Before, the first could not be declared
(``score_is`` was ignored for ``predict_proba`` flavours, and the trial stopped the start
with nothing to declare), the second was refused by its range, and a declared ``score_is``
reached every version, retrained ones included.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mlflow
import mlflow.pyfunc
import mlflow.sklearn
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mlflow.models import infer_signature
from sklearn.linear_model import LogisticRegression

from driftwatch.actions.executor import ActionExecutor
from driftwatch.actions.labelled_buffer import LabelledBuffer
from driftwatch.clock import ManualClock
from driftwatch.errors import ActionError, ConfigError
from driftwatch.gpupool.base import JobRecord, JobSpec, JobState
from driftwatch.policy.decision import Decision
from driftwatch.policy.tiers import Tier
from driftwatch.registry.mlflow_registry import MlflowRegistry
from driftwatch.registry.outputs import read_output
from driftwatch.registry.publish import pointed_at, publish_flavour
from driftwatch.registry.reading import champion_scale
from driftwatch.registry.recalibrated import LogitCalibrator, RecalibratedPyfunc
from driftwatch.registry.scorer import load_scorer
from driftwatch.registry.scorers import ChampionRef
from driftwatch.registry.trial import trial_score
from driftwatch.registry.versions import CHAMPION, TAG_MADE_BY
from driftwatch.scorescale import LOG_ODDS, PERCENT, PROBABILITY, ScoreScale
from driftwatch.windows.profile import ReferenceProfile

from .test_scorer import _data

URI = "models:/pd@champion"
CARD = ScoreScale.points(base=600, odds=50, pdo=20)
X = ["income", "debt_to_income"]
#: declared, not inferred: inferring a pyfunc's requirements starts a subprocess each time
PIP = ["mlflow"]


# -- a classifier trained with class 1 = good ---------------------------------------------------

def _classifier(tmp_path: Path, kind: str, y: np.ndarray) -> tuple[Path, Any, pd.DataFrame]:
    """A classifier of ``kind`` fitted on ``_data()``'s features and ``y``, saved by its
    flavour as a registry download holds it."""
    df = _data()
    x = df[X]
    kw: dict[str, Any] = {}
    if kind == "XGBClassifier":
        model = pytest.importorskip("xgboost").XGBClassifier(n_estimators=20, max_depth=3)
        flavour = "xgboost"
    elif kind == "LGBMClassifier":
        model = pytest.importorskip("lightgbm").LGBMClassifier(n_estimators=20, verbose=-1)
        flavour = "lightgbm"
    else:
        model, flavour = LogisticRegression(max_iter=500), "sklearn"
        kw["serialization_format"] = "cloudpickle"
    model.fit(x, y)
    path = tmp_path / kind
    importlib.import_module(f"mlflow.{flavour}").save_model(
        model, str(path), signature=infer_signature(x, model.predict_proba(x)[:, 1]),
        pip_requirements=PIP, **kw)
    return path, model, df


def sklearn_champion(tmp_path: Path, model: Any, x: pd.DataFrame, name: str = "pd"
                     ) -> MlflowRegistry:
    """``model`` (fitted on ``x``) registered as ``name`` version 1 in a sqlite store under
    ``tmp_path``, its ``champion`` alias on it, as a bank's registry holds its model."""
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    with pointed_at(MlflowRegistry(store)), mlflow.start_run():
        mlflow.sklearn.log_model(model, name="model", registered_model_name=name,
                                 signature=infer_signature(x),
                                 serialization_format="cloudpickle", pip_requirements=PIP)
    reg = MlflowRegistry(store)
    reg.set_alias(name, CHAMPION, "1", at=0.0)
    return reg


@pytest.mark.parametrize("kind, coded", [
    ("LogisticRegression", int), ("LogisticRegression", bool), ("XGBClassifier", int),
    ("LGBMClassifier", int)])
def test_a_classifier_trained_on_repaid_is_read_at_its_other_class_when_declared(
        tmp_path: Path, kind: str, coded: type) -> None:
    bad = _data()["label"].to_numpy()
    repaid = (1 - bad).astype(coded)  # 1 (True) = repaid, the good outcome
    path, model, df = _classifier(tmp_path, kind, repaid)
    p_good = model.predict_proba(df[X])[:, 1]
    one, zero = (True, False) if coded is bool else (1, 0)
    misread = load_scorer(path, name="pd", version="1", bad=[1])
    np.testing.assert_allclose(misread.score(df), p_good, rtol=1e-6)  # P(repaid) as P(bad)
    with pytest.raises(ActionError, match=(
            rf"^{URI}: its predict_proba column of class {one} \(read as the bad class: the "
            rf"policy's reference.label.bad\) rank the reference's bad rows below its good "
            rf"ones \(AUC 0\.\d+ on 600 labelled rows\): was it trained with {one} = good .*"
            rf"declare score_is: p_good \(--champion-score-is p_good\) to read class {zero} "
            r"as P\(bad\)$")):
        trial_score(misread, df, URI)
    s = load_scorer(path, name="pd", version="1", bad=[1], score_is="p_good")
    np.testing.assert_allclose(s.score(df), 1 - p_good, rtol=1e-6)
    assert s.meta["score_is"] == "p_good" and s.meta["bad_class"] == zero
    assert trial_score(s, df, URI) > 0.6


def test_a_classifier_declared_p_good_but_trained_on_default_says_drop_it(
        tmp_path: Path) -> None:
    path, _, df = _classifier(tmp_path, "LogisticRegression", _data()["label"].to_numpy())
    s = load_scorer(path, name="pd", version="1", score_is="p_good")
    with pytest.raises(ActionError, match=r"its predict_proba column of class 0 \(read as the "
                       r"bad class because of score_is: p_good\) rank .*was it trained with 0 "
                       r"= good after all \(1 = bad\)\? drop score_is: p_good"):
        trial_score(s, df, URI)


@pytest.mark.parametrize("classes, bad", [(("bad", "good"), ["bad"]),
                                          (("Charged Off", "Fully Paid"), ["Charged Off"])])
def test_classes_that_name_themselves_are_read_at_the_bad_one_and_the_declaration_noted(
        tmp_path: Path, classes: tuple[str, str], bad: list[str]) -> None:
    y = np.where(_data()["label"] == 1, classes[0], classes[1])
    path, model, df = _classifier(tmp_path, "LogisticRegression", y)
    want = model.predict_proba(df[X])[:, list(model.classes_).index(classes[0])]
    for score_is in ("p_bad", "p_good"):
        s = load_scorer(path, name="pd", version="1", bad=bad, score_is=score_is)
        np.testing.assert_allclose(s.score(df), want)
        assert "score_is" not in s.meta and trial_score(s, df, URI) > 0.6
    assert s.meta["note"] == (
        f"score_is: p_good is not applied: its classes ({classes[0]!r}, {classes[1]!r}) name "
        f"the bad one, {classes[0]!r}, whose predict_proba column is read as P(bad); remove "
        "score_is: p_good (--champion-score-is)")


# -- a champion whose output is no probability --------------------------------------------------

def _written(p: np.ndarray, scale: ScoreScale) -> np.ndarray:
    """``p`` (P(bad)) written in ``scale``, as a model of that scale answers."""
    if scale.kind == "points":
        assert scale.base is not None and scale.odds is not None and scale.pdo is not None
        return scale.base + scale.pdo * np.log2((1 - p) / p / scale.odds)
    if scale.kind == "log_odds":
        return np.log(p / (1 - p))
    return p * 100.0 if scale.kind == "percent" else p


class _Scaled(mlflow.pyfunc.PythonModel):
    """A bank's custom model answering its P(bad) (or P(good)) in a scale of its own."""

    def __init__(self, scale: ScoreScale, good: bool = False) -> None:
        self.scale, self.good = scale, good

    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        p = _p_bad(model_input)
        return _written(1 - p if self.good else p, self.scale)


def _p_bad(frame: pd.DataFrame) -> np.ndarray:
    return 1 / (1 + np.exp(-(frame["debt_to_income"].to_numpy() * 4 - 2)))


def _pyfunc(tmp_path: Path, scale: ScoreScale, good: bool = False) -> Path:
    x = _data()[["debt_to_income"]]
    path = tmp_path / f"{scale.kind}-{good}"
    mlflow.pyfunc.save_model(str(path), python_model=_Scaled(scale, good),
                             signature=infer_signature(x, np.zeros(len(x))), pip_requirements=PIP)
    return path


@pytest.mark.parametrize("scale", [CARD, LOG_ODDS, PERCENT], ids=["points", "log_odds",
                                                                 "percent"])
def test_a_pyfunc_champion_in_another_scale_is_read_as_p_bad_when_declared(
        tmp_path: Path, scale: ScoreScale) -> None:
    df = _data()
    path = _pyfunc(tmp_path, scale)
    with pytest.raises(ActionError, match=r"^model pd v1 \(pyfunc\) returned values from "
                       r".* not probabilities in \[0, 1\] .*declare the scale its output is "
                       r"written in, the champion's score_scale \(log_odds, percent, points, "
                       r"or stream for the connector's score scale; --champion-score-scale\)"):
        load_scorer(path, name="pd", version="1").score(df)
    s = load_scorer(path, name="pd", version="1", score_scale=scale)
    np.testing.assert_allclose(s.score(df), _p_bad(df), rtol=1e-9)
    assert s.meta["score_scale"] == scale and trial_score(s, df, URI) > 0.6
    # a recalibration layer on it (an online update, a shadow's challenger) sees P(bad)
    cal = LogitCalibrator()
    cal.learn(s.score(df), df["label"].to_numpy())
    mlflow.pyfunc.save_model(str(tmp_path / "recal"), python_model=RecalibratedPyfunc(
        "models:/pd/1", cal, base_score_scale=scale), pip_requirements=PIP)
    recal = load_scorer(tmp_path / "recal", name="pd", version="2", resolve=lambda uri: s,
                        score_scale=LOG_ODDS)  # driftwatch's own: no declaration applies
    np.testing.assert_allclose(recal.score(df), cal.transform(_p_bad(df)), rtol=1e-9)
    served = mlflow.pyfunc.load_model(str(tmp_path / "recal")).unwrap_python_model()
    assert served.base_score_scale == scale  # served outside driftwatch: read the same way


def test_log_odds_of_good_are_read_with_score_is_and_the_trial_says_which_to_declare(
        tmp_path: Path) -> None:
    df = _data()
    path = _pyfunc(tmp_path, LOG_ODDS, good=True)
    misread = load_scorer(path, name="pd", version="1", score_scale=LOG_ODDS)
    with pytest.raises(ActionError, match=r"its scores, read in log_odds \(score_scale: "
                       r"log_odds\), rank .*it returns P\(good\)\? declare score_is: p_good"):
        trial_score(misread, df, URI)
    s = load_scorer(path, name="pd", version="1", score_scale=LOG_ODDS, score_is="p_good")
    np.testing.assert_allclose(s.score(df), _p_bad(df), rtol=1e-9)
    # points higher for riskier applicants: nothing to declare, said so
    riskier = load_scorer(_pyfunc(tmp_path, CARD, good=True), name="pd", version="2",
                          score_scale=CARD)
    with pytest.raises(ActionError, match=r"read as scorecard points, higher = safer .* "
                       r"are its points higher for riskier applicants\?"):
        trial_score(riskier, df, URI)


@settings(max_examples=60, deadline=None)
@given(p=st.lists(st.floats(0.001, 0.999), min_size=1, max_size=30),
       scale=st.sampled_from([LOG_ODDS, PERCENT, CARD, ScoreScale.points(base=0, odds=1,
                                                                         pdo=50)]),
       shape=st.sampled_from(["array", "series", "frame", "dict", "records"]))
def test_any_output_shape_written_in_a_scale_reads_back_as_p_bad(
        p: list[float], scale: ScoreScale, shape: str) -> None:
    want = np.array(p)
    col = _written(want, scale)
    raw: Any = {"array": col, "series": pd.Series(col), "frame": pd.DataFrame({"score": col}),
                "dict": {"score": col}, "records": [{"score": v} for v in col]}[shape]
    got, named = read_output(raw, len(p), scale=scale)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    assert not named


# -- contradictions: one line each ----------------------------------------------------------

def test_a_scale_for_a_flavour_that_answers_probabilities_is_refused(tmp_path: Path) -> None:
    path, _, _ = _classifier(tmp_path, "LogisticRegression", _data()["label"].to_numpy())
    with pytest.raises(ActionError) as err:
        load_scorer(path, name="pd", version="3", score_scale=LOG_ODDS)
    assert str(err.value) == (
        "model pd v3 (sklearn) is scored by predict_proba, which gives probabilities, but "
        "the champion declares score_scale: log_odds: that reads a custom pyfunc's predict; "
        "remove score_scale (champion.score_scale, --champion-score-scale)")


def test_points_of_p_good_and_a_stream_without_score_are_contradictions() -> None:
    with pytest.raises(ConfigError) as err:
        ChampionRef.parse(URI, score_is="p_good", score_scale="points:base=600,odds=50,pdo=20")
    assert err.value.message == ("the champion's output is read as scorecard points, which "
                                 "are P(bad) (higher points = safer), but its score_is says "
                                 "P(good)")
    stream = ChampionRef.parse(URI, score_is="p_good", score_scale="stream")
    with pytest.raises(ConfigError, match=r"points \(the stream's, score_scale: stream\)"):
        stream.resolved(CARD)
    assert stream.resolved(LOG_ODDS).scale == LOG_ODDS
    with pytest.raises(ConfigError, match="connector 'c' declares for the stream's score, "
                                          "but it maps no score"):
        stream.resolved(None, connector="connector 'c'")
    with pytest.raises(ConfigError, match="not read yet"):
        _ = stream.scale


@pytest.mark.parametrize("text, said", [
    ("points:base=600,odds=-1,pdo=20", "points odds: expected a number above 0 (the "
                                       "good:bad odds at base points), found -1"),
    ("points:base=600,odds=50", "points need their base, odds and pdo: pdo is missing"),
    ("log-odds", "score_scale must be probability, stream, log_odds, percent or points with "
                 "its base, odds and pdo, found 'log-odds'"),
])
def test_a_bad_scale_names_what_was_expected_and_found(text: str, said: str) -> None:
    with pytest.raises(ConfigError) as err:
        champion_scale(text)
    assert str(err.value).splitlines()[0] == said


# -- the user's own versions, not those driftwatch made ---------------------------------------

MODEL = "credit-risk"
FEATURES = ["debt_to_income", "utilization"]


class _Pool:
    """A GPU pool whose job runs at once, in this process, doing what a retraining job does
    (``examples/sklearn_retrain_job.py``): it learns the export's rows, coded as driftwatch
    codes them (label 1 bad), and registers the model under the action's key."""

    def __init__(self, registry: MlflowRegistry) -> None:
        self.registry = registry
        self.jobs: dict[str, JobRecord] = {}

    def submit(self, spec: JobSpec, key: str | None = None) -> str:
        rows = pd.read_parquet(spec.env["DRIFTWATCH_TRAINING_DATA"]).dropna(
            subset=[*FEATURES, "label"])
        x = rows[FEATURES]
        model = LogisticRegression(max_iter=500).fit(x, rows["label"])
        publish_flavour(self.registry, spec.env["DRIFTWATCH_MODEL_NAME"],
                        lambda: mlflow.sklearn.log_model(
                            model, name="model", signature=infer_signature(x),
                            serialization_format="cloudpickle", pip_requirements=PIP),
                        action_key=spec.env["DRIFTWATCH_ACTION_KEY"])
        job_id = f"job-{len(self.jobs) + 1}"
        self.jobs[job_id] = JobRecord(job_id, spec, JobState.SUCCEEDED, len(self.jobs), 0.0,
                                      key=key, attempts=1)
        return job_id

    def get(self, job_id: str) -> JobRecord:
        return self.jobs[job_id]

    def status(self) -> SimpleNamespace:
        return SimpleNamespace(jobs=list(self.jobs.values()))

    def poll(self) -> None:
        """Each job finished when it was submitted."""

    def dispatch(self) -> None:
        """Nothing waits."""


def _auc(p: np.ndarray, y: pd.Series) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, p))


def test_the_declarations_reach_the_users_versions_not_those_driftwatch_made(
        tmp_path: Path) -> None:
    """v1: the bank's classifier, trained on repaid (1 = good) and declared p_good. v2: a
    retraining's, trained on the export (1 = bad): read at class 1. v3: a custom pyfunc of
    P(bad) a retraining registered: never flipped, never read in a declared scale."""
    from driftwatch.actions.recalibrate import recalibrated_candidate
    from driftwatch.registry.bootstrap import require_champion
    from driftwatch.registry.scorers import ScorerCache

    from .test_online_update import CONTEXT, labelled_window

    clock = ManualClock(1_700_000_000.0)
    # the demo misses some utilization: filled, so every row is scored and compared
    train, window = (labelled_window(n, seed=seed).fillna({"utilization": 0.3})
                     for n, seed in ((2000, 1), (1500, 3)))
    state = tmp_path / "state"
    reg = MlflowRegistry.embedded(state)
    bank = LogisticRegression(max_iter=500).fit(train[FEATURES], 1 - train["label"])
    with pointed_at(reg), mlflow.start_run(experiment_id=reg.experiment_id(MODEL)):
        mlflow.sklearn.log_model(bank, name="model", registered_model_name=MODEL,
                                 signature=infer_signature(train[FEATURES]),
                                 serialization_format="cloudpickle",
                                 pip_requirements=PIP)  # as a bank registers it
    reg.set_alias(MODEL, CHAMPION, "1", at=clock.now())
    buffer = LabelledBuffer(ReferenceProfile.build(train).schema, capacity=5000)
    buffer.add_frame(window)
    ex = ActionExecutor.open(state, clock=clock, buffer=buffer, pool=_Pool(reg),
                             score_is="p_good")
    try:
        severe = Decision(MODEL, 12, 1_699_999_000.0, Tier.SEVERE, Tier.SEVERE,
                          action="retrain", action_settings={"type": "retrain",
                                                             "argv": ["python", "job.py"]})
        retrain_id = ex.submit(severe, CONTEXT)
        ex.run_pending()
        rec = ex.outbox.get(retrain_id)  # type: ignore[arg-type]
        assert rec.state.value == "succeeded", rec.error
        assert rec.outcome["version"] == "2"
        assert reg.get_version(MODEL, "2").tags[TAG_MADE_BY] == "retrain"
        y = window["label"]
        user, retrained = ex.env.scorer(MODEL, "1"), ex.env.scorer(MODEL, "2")
        np.testing.assert_allclose(user.score(window),
                                   bank.predict_proba(window[FEATURES])[:, 0], rtol=1e-9)
        assert user.meta["score_is"] == "p_good" and "score_is" not in retrained.meta
        assert _auc(user.score(window), y) > 0.6 and _auc(retrained.score(window), y) > 0.6
        # a recalibration of the user's model reads it, served outside driftwatch too, so
        wrapped, metrics = recalibrated_candidate(ex.env, MODEL, "1", window)
        assert wrapped.base_score_is == "p_good" and metrics["champion_holdout_log_loss"] < 0.6
        # a custom pyfunc a retraining registered answers P(bad): no declaration applies
        v3 = publish_flavour(reg, MODEL, lambda: mlflow.pyfunc.log_model(
            name="model", python_model=_Scaled(PROBABILITY),
            signature=infer_signature(window[FEATURES], np.zeros(len(window))),
            pip_requirements=PIP),
            action_key=f"{MODEL}:severe:13")
        reg.set_version_tag(MODEL, v3.version, TAG_MADE_BY, "retrain")
        np.testing.assert_allclose(ex.env.scorer(MODEL, v3.version).score(window),
                                   _p_bad(window), rtol=1e-9)
        scaled = ScorerCache(reg, tmp_path / "cache", score_is="p_good", score_scale=LOG_ODDS)
        np.testing.assert_allclose(scaled.get(MODEL, v3.version).score(window), _p_bad(window),
                                   rtol=1e-9)
        assert "score_scale" not in scaled.get(MODEL, "2").meta
        with pytest.raises(ActionError, match=r"^model credit-risk v1 \(sklearn\) is scored by "
                           "predict_proba, which gives probabilities, but the champion "
                           "declares score_scale: log_odds"):
            scaled.get(MODEL, "1")
        # the retrained version promoted: the start says the declaration is not its own
        reg.set_alias(MODEL, CHAMPION, "2", at=clock.now())
        notes: list[str] = []
        require_champion(reg, ChampionRef.parse(f"models:/{MODEL}@champion",
                                                score_is="p_good"),
                         FEATURES, ex.env.scorers(), window.drop(columns="score"), notes.append)
        assert notes == [
            f"models:/{MODEL}@champion: version 2 was made by driftwatch (driftwatch.made_by="
            "retrain) and answers P(bad): what the champion declares (score_is: p_good) "
            "describes your own versions and is not applied to it"]
    finally:
        ex.close()


def test_require_champion_passes_on_the_note_of_a_needless_declaration(tmp_path: Path) -> None:
    from driftwatch.registry.bootstrap import require_champion
    from driftwatch.registry.scorers import ScorerCache

    df = _data()
    model = LogisticRegression().fit(df[X], np.where(df["label"] == 1, "bad", "good"))
    reg = sklearn_champion(tmp_path, model, df[X])
    notes: list[str] = []
    ref = ChampionRef.parse(URI, score_is="p_good")
    require_champion(reg, ref, X, ScorerCache(reg, tmp_path / "c", bad=["bad"],
                                              score_is="p_good"), df, notes.append)
    assert notes == [f"{URI}: score_is: p_good is not applied: its classes ('bad', 'good') "
                     "name the bad one, 'bad', whose predict_proba column is read as P(bad); "
                     "remove score_is: p_good (--champion-score-is)"]


# -- the replay's options and the daemon's keys, acted on ------------------------------------

def _register(store: str, log: Any) -> None:
    """``log()`` (a flavour's log_model) registered as bank-pd v1, aliased champion."""
    with pointed_at(MlflowRegistry(store)), mlflow.start_run():
        log()
    mlflow.MlflowClient(store).set_registered_model_alias("bank-pd", "champion", "1")


class _LogOdds(mlflow.pyfunc.PythonModel):
    """A bank's custom model answering the log-odds of default."""

    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        z = 4 * model_input["debt_to_income"] + 2 * model_input["utilization"].fillna(0.3)
        return (z - 3).to_numpy(np.float64)


def test_replay_reads_a_log_odds_champion_with_champion_score_scale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from driftwatch.actions.handoff import read_replay_state
    from driftwatch.cli import main

    from .test_champion_trial import ROOT, demo_replay_argv

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    x = pd.DataFrame({"debt_to_income": [0.2, 0.4], "utilization": [0.1, 0.9]})
    _register(store, lambda: mlflow.pyfunc.log_model(
        name="model", python_model=_LogOdds(), registered_model_name="bank-pd",
        signature=infer_signature(x, np.zeros(2)), pip_requirements=PIP))
    monkeypatch.chdir(ROOT)
    argv = demo_replay_argv(tmp_path, store, "models:/bank-pd@champion")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "bank-pd v1 (pyfunc) returned values from" in err
    assert "the champion's score_scale (log_odds, percent, points, or stream" in err
    # the demo connector's score is a probability: the stream's scale reads it as one
    assert main([*argv, "--champion-score-scale", "stream"]) == 1
    assert "returned values from" in capsys.readouterr().err
    assert main([*argv, "--champion-score-scale", "log-odds"]) == 2
    assert capsys.readouterr().err.strip().splitlines()[0] == (
        "error: --champion-score-scale: score_scale must be probability, stream, log_odds, "
        "percent or points with its base, odds and pdo, found 'log-odds'")
    assert main([*argv, "--champion-score-scale", "log_odds"]) == 0
    saved = read_replay_state(tmp_path / "out" / "state")
    assert saved is not None and saved["score_scale"] == "log_odds"


def test_replay_reads_a_classifier_trained_on_repaid_with_champion_score_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from driftwatch.cli import main

    from .test_champion_trial import ROOT, demo_replay_argv

    ref = pd.read_parquet(ROOT / "data/demo/reference.parquet").sample(3000, random_state=0)
    x = ref[FEATURES].fillna(0.3)
    model = LogisticRegression(max_iter=500).fit(x, 1 - ref["label"])  # 1 = repaid
    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    _register(store, lambda: mlflow.sklearn.log_model(
        model, name="model", registered_model_name="bank-pd", signature=infer_signature(x),
        serialization_format="cloudpickle", pip_requirements=PIP))
    monkeypatch.chdir(ROOT)
    argv = demo_replay_argv(tmp_path, store, "models:/bank-pd@champion")
    assert main(argv) == 1
    assert ("was it trained with 1 = good (a repaid flag, where the stream's labels say 1 = "
            "default)? declare score_is: p_good (--champion-score-is p_good) to read class 0 "
            "as P(bad)") in capsys.readouterr().err
    assert main([*argv, "--champion-score-is", "p_good"]) == 0


def test_the_daemon_reads_the_champions_keys_and_hands_them_to_its_actions(
        tmp_path: Path) -> None:
    from prometheus_client import CollectorRegistry

    from driftwatch.connectors.config import load_connector
    from driftwatch.metrics import Metrics
    from driftwatch.policy.loader import load_policy
    from driftwatch.service.actions import ServiceActions
    from driftwatch.service.config import parse_service_config
    from driftwatch.service.model import resolved_champion

    from .test_champion_trial import ROOT

    text = ("models:\n  - connector: c.yaml\n    policy: p.yaml\n    champion:\n"
            "      uri: models:/credit-pd@champion\n      score_is: p_good\n"
            f"      score_scale: stream\nstate_dir: {tmp_path}\n")
    plain = parse_service_config(text.replace("      score_scale: stream\n", ""))
    assert plain.models[0].champion.score_scale == PROBABILITY
    assert plain.models[0].champion_scale_at is None
    cfg = parse_service_config(text, file="d.yaml")
    model = cfg.models[0]
    assert model.champion.score_scale == "stream" and model.champion_scale_at is not None
    policy = load_policy(ROOT / "policies/credit-risk-demo.yaml")
    demo = load_connector(ROOT / "connectors/demo-file.yaml")  # a probability score
    resolved = resolved_champion(model, demo, policy)
    assert resolved.scale == PROBABILITY and resolved.score_is == "p_good"
    actions = ServiceActions(cfg, clock=ManualClock(0.0), metrics=Metrics(CollectorRegistry()))
    try:
        ma = actions.add_model("credit-pd", reference=None, cutoff=None, shadow_defaults={},
                               buffer=None, on_promote=None, policy=policy,
                               champion=resolved.resolved(LOG_ODDS))
        cache = ma.executor.env.scorers()  # type: ignore[union-attr]
        assert (cache.score_is, cache.score_scale) == ("p_good", PROBABILITY)
    finally:
        actions.close()
    # a connector that maps no score: the error is the config's, at its line
    bare = dataclasses.replace(demo, streams=tuple(dataclasses.replace(s, score=None)
                                                   for s in demo.streams))
    with pytest.raises(ConfigError) as err:
        resolved_champion(model, bare, policy)
    assert str(err.value).splitlines()[0] == (
        "d.yaml:7:20: the champion's score_scale: stream reads its output in the scale "
        f"connector {demo.name!r} declares for the stream's score, but it maps no score")


@pytest.mark.parametrize("written, said", [
    ("log-odds", "d.yaml:7:20: score_scale must be probability, stream, log_odds, percent or "
                 "points with its base, odds and pdo, found 'log-odds'"),
    ("{points: {base: 600, odds: 50, pdo: -20}}",
     "d.yaml:7:56: points pdo: expected a number above 0 (the points that double the odds; "
     "higher points always mean safer), found -20"),
    ("{points: {base: 600, odds: 50, pdo: 20}}\n      score_is: p_good",
     "d.yaml:7:20: the champion's output is read as scorecard points, which are P(bad) "
     "(higher points = safer), but its score_is says P(good)"),
])
def test_a_bad_champion_scale_in_the_config_is_located(written: str, said: str) -> None:
    from driftwatch.service.config import parse_service_config

    text = ("models:\n  - connector: c.yaml\n    policy: p.yaml\n    champion:\n"
            f"      uri: models:/credit-pd@champion\n      columns: {{}}\n"
            f"      score_scale: {written}\n")
    with pytest.raises(ConfigError) as err:
        parse_service_config(text, file="d.yaml")
    assert str(err.value).splitlines()[0] == said


def test_the_readmes_champion_block_is_a_configuration_that_says_what_it_shows() -> None:
    import re

    from driftwatch.service.config import parse_service_config

    from .test_champion_trial import ROOT

    section = (ROOT / "README.md").read_text(encoding="utf-8").split(
        "## Your own model as champion")[1]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    [model] = parse_service_config(block.group(1), file="README.md").models
    assert (model.champion.score_is, model.champion.score_scale) == ("p_bad", PROBABILITY)
    assert "score_scale: probability" in block.group(1)


def test_the_daemon_reads_a_stream_scale_from_its_connector_for_its_actions(
        tmp_path: Path) -> None:
    from .test_restart_champion import CONNECTOR, Site, stop

    site = Site(tmp_path)  # a file connector whose score is written as log-odds
    (tmp_path / "conn.yaml").write_text(CONNECTOR.replace("PRED", str(tmp_path / "pred.jsonl"))
                                        .replace("score: score",
                                                 "score: {path: score, log_odds: true}"))
    ref = ChampionRef.parse("models:/credit@champion", score_scale="stream")
    model = dataclasses.replace(site.config.models[0], name="credit", champion=ref)
    site.config = dataclasses.replace(site.config, models=(model,))
    svc = site.start()
    try:
        env = svc.actions.models["credit"].executor.env  # type: ignore[union-attr]
        assert env.score_scale == LOG_ODDS and env.scorers().score_scale == LOG_ODDS
    finally:
        stop(svc)
