"""Any registered flavour scores connector features: scikit-learn, XGBoost, custom pyfunc,
driftwatch's own river and recalibrated models. Models are saved to local folders (no
tracking store), exactly as the registry hands them out after a download."""

from __future__ import annotations

from pathlib import Path

import mlflow.pyfunc
import mlflow.sklearn
import numpy as np
import pandas as pd
import pytest
from mlflow.models import infer_signature
from sklearn.ensemble import HistGradientBoostingClassifier

from driftwatch.errors import ActionError
from driftwatch.registry.champion import distil_champion
from driftwatch.registry.pyfunc import save_river_model
from driftwatch.registry.recalibrated import LogitCalibrator, RecalibratedPyfunc
from driftwatch.registry.scorer import Scorer, load_scorer


def _data(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10.5, 0.5, n)
    dti = rng.uniform(0, 0.6, n)
    p = 1 / (1 + np.exp(-(-2.0 + 3.0 * dti - 0.00001 * income)))
    return pd.DataFrame({"income": income, "debt_to_income": dti,
                         "label": (rng.random(n) < p).astype(float), "score": p})


@pytest.fixture(scope="module")
def sklearn_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, pd.DataFrame]:
    df = _data()
    x = df[["income", "debt_to_income"]].rename(columns={"income": "annual_income"})
    model = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(x, df["label"])
    path = tmp_path_factory.mktemp("sk") / "model"
    mlflow.sklearn.save_model(
        model, str(path), signature=infer_signature(x, model.predict_proba(x)[:, 1]),
        serialization_format="cloudpickle",
    )
    return path, model, df


def test_sklearn_scores_by_predict_proba_with_mapped_columns(sklearn_dir) -> None:
    path, model, df = sklearn_dir
    s = load_scorer(path, name="pd", version="1", columns={"annual_income": "income"})
    assert s.flavor == "sklearn" and s.inputs == ("annual_income", "debt_to_income")
    x = df[["income", "debt_to_income"]].rename(columns={"income": "annual_income"})
    np.testing.assert_allclose(s.score(df), model.predict_proba(x)[:, 1])  # not class labels


def test_a_column_the_connector_lacks_is_named(sklearn_dir) -> None:
    path, _, df = sklearn_dir
    s = load_scorer(path, name="pd", version="1")
    with pytest.raises(ActionError, match=r"needs input column 'annual_income'.*features: "
                                          r"income, debt_to_income"):
        s.score(df[["income", "debt_to_income"]])


class _Custom(mlflow.pyfunc.PythonModel):
    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        p = 1 / (1 + np.exp(-(model_input["debt_to_income"].to_numpy() * 4 - 2)))
        return pd.DataFrame({"good": 1 - p, "bad": p})


def test_custom_pyfunc_with_a_signature(tmp_path: Path) -> None:
    df = _data()
    x = df[["debt_to_income"]]
    path = tmp_path / "custom"
    mlflow.pyfunc.save_model(str(path), python_model=_Custom(),
                             signature=infer_signature(x, np.zeros(len(x))))
    s = load_scorer(path, name="pd", version="2")
    assert s.flavor == "pyfunc" and s.inputs == ("debt_to_income",)
    expected = 1 / (1 + np.exp(-(df["debt_to_income"].to_numpy() * 4 - 2)))
    np.testing.assert_allclose(s.score(df), expected)


class _GoodScore(mlflow.pyfunc.PythonModel):
    """A bank's custom model that answers P(good), one value per row."""

    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        return 1 / (1 + np.exp(model_input["debt_to_income"].to_numpy() * 4 - 2))


def test_a_custom_pyfunc_declared_p_good_is_read_as_p_bad(tmp_path: Path) -> None:
    df = _data()
    x = df[["debt_to_income"]]
    path = tmp_path / "good"
    mlflow.pyfunc.save_model(str(path), python_model=_GoodScore(),
                             signature=infer_signature(x, np.zeros(len(x))))
    p_bad = 1 / (1 + np.exp(-(df["debt_to_income"].to_numpy() * 4 - 2)))
    s = load_scorer(path, name="pd", version="2", score_is="p_good")
    np.testing.assert_allclose(s.score(df), p_bad)
    np.testing.assert_allclose(load_scorer(path, name="pd", version="2").score(df), 1 - p_bad)
    with pytest.raises(ActionError, match="score_is must be one of p_bad, p_good"):
        load_scorer(path, name="pd", version="2", score_is="good")

    # a recalibrated version wrapping it learns and scores on P(bad)
    cal = LogitCalibrator()
    cal.learn(s.score(df), df["label"].to_numpy())
    recal = tmp_path / "recal"
    mlflow.pyfunc.save_model(str(recal), python_model=RecalibratedPyfunc(
        "models:/pd/2", cal, base_score_is="p_good"))
    r = load_scorer(recal, name="pd", version="3", resolve=lambda uri: s)
    np.testing.assert_allclose(r.score(df), cal.transform(p_bad))
    served = mlflow.pyfunc.load_model(str(recal)).unwrap_python_model()
    assert served.base_score_is == "p_good"  # served outside driftwatch, read the same way


def test_p_good_reads_a_classifier_whose_classes_are_codes_at_its_lower_class(
        sklearn_dir) -> None:
    # classes 0/1 say nothing of which is bad: declared p_good, 1 was the good outcome
    # (test_champion_declarations covers the flavours, text classes and the trial)
    path, model, df = sklearn_dir
    s = load_scorer(path, name="pd", version="1", columns={"annual_income": "income"},
                    score_is="p_good")
    x = df[["income", "debt_to_income"]].rename(columns={"income": "annual_income"})
    np.testing.assert_allclose(s.score(df), model.predict_proba(x)[:, 0])


def test_a_custom_pyfunc_without_signature_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nosig"
    mlflow.pyfunc.save_model(str(path), python_model=_Custom())
    with pytest.raises(ActionError, match="has no signature"):
        load_scorer(path, name="pd", version="3")


def test_xgboost_flavour_scores_by_predict_proba(tmp_path: Path) -> None:
    xgboost = pytest.importorskip("xgboost")
    import mlflow.xgboost

    df = _data()
    x = df[["income", "debt_to_income"]]
    model = xgboost.XGBClassifier(n_estimators=20, max_depth=3).fit(x, df["label"])
    path = tmp_path / "xgb"
    mlflow.xgboost.save_model(model, str(path),
                              signature=infer_signature(x, model.predict_proba(x)[:, 1]))
    s = load_scorer(path, name="pd", version="4")
    assert s.flavor == "xgboost"
    np.testing.assert_allclose(s.score(df), model.predict_proba(x)[:, 1], rtol=1e-6)


def test_river_model_reads_its_encoder_features(tmp_path: Path) -> None:
    df = _data()
    river = distil_champion(df, numeric=["income", "debt_to_income"])
    save_river_model(river, tmp_path / "river")
    s = load_scorer(tmp_path / "river", name="pd", version="5")
    assert s.flavor == "river" and s.inputs == ("income", "debt_to_income")
    np.testing.assert_allclose(s.score(df), river.predict_proba(df))


def test_recalibrated_version_wraps_its_base_by_uri(tmp_path: Path) -> None:
    df = _data()
    base = Scorer("pd", "1", "custom", ("debt_to_income",),
                  lambda x: np.clip(x["debt_to_income"].to_numpy(), 0.01, 0.99))
    cal = LogitCalibrator()
    cal.learn(base.score(df), df["label"].to_numpy())
    path = tmp_path / "recal"
    mlflow.pyfunc.save_model(str(path), python_model=RecalibratedPyfunc("models:/pd/1", cal))
    asked: list[str] = []

    def resolve(uri: str) -> Scorer:
        asked.append(uri)
        return base

    s = load_scorer(path, name="pd", version="6", resolve=resolve)
    assert asked == ["models:/pd/1"] and s.flavor == "recalibrated"
    assert s.meta["base_version"] == "1"
    np.testing.assert_allclose(s.score(df), cal.transform(base.score(df)))


def test_publishing_leaves_the_process_mlflow_uris_as_they_were(tmp_path, monkeypatch):
    """mlflow.set_tracking_uri writes $MLFLOW_TRACKING_URI: a leak would point every later
    subprocess (a retraining job, a daemon) at a registry that may be gone."""
    import os
    from types import SimpleNamespace

    import mlflow

    from driftwatch.registry.publish import pointed_at

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setenv("MLFLOW_REGISTRY_URI", "sqlite:///elsewhere.db")
    before = mlflow.get_tracking_uri()
    reg = SimpleNamespace(tracking_uri=f"sqlite:///{tmp_path / 'a.db'}",
                          registry_uri=f"sqlite:///{tmp_path / 'a.db'}")
    with pointed_at(reg):  # type: ignore[arg-type]
        assert os.environ["MLFLOW_TRACKING_URI"] == reg.tracking_uri
        assert mlflow.get_tracking_uri() == reg.tracking_uri
    assert "MLFLOW_TRACKING_URI" not in os.environ
    assert os.environ["MLFLOW_REGISTRY_URI"] == "sqlite:///elsewhere.db"
    assert mlflow.get_tracking_uri() == before


def _credit(n: int = 400, seed: int = 1) -> pd.DataFrame:
    """Connector-shaped rows: numbers as float64 (NaN for missing), text levels."""
    rng = np.random.default_rng(seed)
    home = rng.choice(["RENT", "OWN", "MORTGAGE"], n)
    age = rng.integers(21, 80, n)
    util = rng.uniform(0, 1, n)
    p = 1 / (1 + np.exp(-(-1.5 + 2.5 * util + 1.0 * (home == "RENT") - 0.02 * (age - 45))))
    return pd.DataFrame({"util": util, "age": age.astype(np.float64), "home": home,
                         "label": (rng.random(n) < p).astype(int)})


def _typed(df: pd.DataFrame, categorical: bool) -> pd.DataFrame:
    x = df[["util", "age", "home"]].astype({"age": np.int64})
    return x.astype({"home": "category"}) if categorical else x


def _categorical_booster(tmp_path, flavour):  # type: ignore[no-untyped-def]
    """The credit frame, its typed features, a booster of ``flavour`` fitted on them with
    ``home`` a category, and its scorer as loaded from an MLflow model directory."""
    df = _credit()
    x = _typed(df, categorical=True)
    if flavour == "xgboost":
        import mlflow.xgboost
        import xgboost

        model = xgboost.XGBClassifier(n_estimators=20, max_depth=3, enable_categorical=True)
        save = mlflow.xgboost.save_model
    else:
        import lightgbm
        import mlflow.lightgbm

        model = lightgbm.LGBMClassifier(n_estimators=20, verbose=-1)
        save = mlflow.lightgbm.save_model
    model.fit(x, df["label"])
    save(model, str(tmp_path / "m"), signature=infer_signature(x, model.predict_proba(x)))
    return df, x, model, load_scorer(tmp_path / "m", name="pd", version="1")


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
def test_text_levels_reach_a_categorical_booster_with_its_training_codes(tmp_path, flavour):
    df, x, model, s = _categorical_booster(tmp_path, flavour)
    # a live batch without MORTGAGE rows: its own levels would code RENT differently
    live = df[df["home"] != "MORTGAGE"].reset_index(drop=True)
    expected = model.predict_proba(_typed(live, categorical=True).astype(
        {"home": x["home"].dtype}))[:, 1]
    np.testing.assert_allclose(s.score(live), expected, rtol=1e-6)


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
@pytest.mark.parametrize("unseen", ["AAA_NEW", "ZZZ_NEW"])
def test_a_level_the_booster_never_saw_scores_as_missing(tmp_path, flavour, unseen):
    """XGBoost 3.2 fed a batch's own levels refused a batch holding a level it never saw
    (`Found a category not in the training set`: the shadow or update failed) or, when the
    level sorted before every training one, scored it silently as the first of them."""
    df, x, model, s = _categorical_booster(tmp_path, flavour)
    live = df.head(300).copy()
    live.loc[:20, "home"] = unseen
    missing = _typed(live, categorical=True).astype({"home": x["home"].dtype})  # unseen: NaN
    assert missing["home"].isna().sum() == 21
    np.testing.assert_allclose(s.score(live), model.predict_proba(missing)[:, 1], rtol=1e-6)


def test_string_class_labels_read_the_bad_column(tmp_path: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    df = _credit()
    x = df[["util", "age"]]
    y = np.where(df["label"] == 1, "bad", "good")  # classes_ sorted: ["bad", "good"]
    model = LogisticRegression().fit(x, y)
    mlflow.sklearn.save_model(model, str(tmp_path / "m"), serialization_format="cloudpickle",
                              signature=infer_signature(x, model.predict_proba(x)))
    s = load_scorer(tmp_path / "m", name="pd", version="1", bad=["bad"])
    np.testing.assert_allclose(s.score(df), model.predict_proba(x)[:, 0])


def test_a_classifier_whose_bad_class_is_unknowable_is_refused(tmp_path: Path) -> None:
    from sklearn.linear_model import LogisticRegression

    df = _credit()
    model = LogisticRegression().fit(df[["util"]], np.where(df["label"] == 1, "N", "Y"))
    mlflow.sklearn.save_model(model, str(tmp_path / "m"), serialization_format="cloudpickle",
                              signature=infer_signature(df[["util"]], np.zeros(len(df))))
    with pytest.raises(ActionError, match=r"classes \['N', 'Y'\].*reference.label.bad"):
        load_scorer(tmp_path / "m", name="pd", version="1", bad=[1])


class _Scorecard(mlflow.pyfunc.PythonModel):
    def predict(self, context, model_input, params=None):
        z = -1.5 + 2.5 * model_input["util"] - 0.02 * (model_input["age"] - 45)
        return pd.DataFrame({"p_bad": 1 / (1 + np.exp(-z))})


def test_an_integer_signature_column_takes_connector_floats(tmp_path: Path) -> None:
    df = _credit()
    x = _typed(df, categorical=False)
    mlflow.pyfunc.save_model(str(tmp_path / "m"), python_model=_Scorecard(),
                             signature=infer_signature(x, pd.DataFrame({"p_bad": [0.1]})))
    s = load_scorer(tmp_path / "m", name="pd", version="1")
    assert s.types["age"] == "long" and df["age"].dtype == np.float64
    np.testing.assert_allclose(s.score(df), _Scorecard().predict(None, x)["p_bad"])
    # a missing age cannot go through MLflow's schema: that row alone is left unscored
    gap = df.copy()
    gap.loc[3, "age"] = np.nan
    p = s.score(gap)
    assert np.isnan(p[3]) and np.isfinite(np.delete(p, 3)).all() and s.unscored == 1


def test_a_model_error_is_one_short_line(tmp_path: Path) -> None:
    df = _credit(2000)

    def boom(x: pd.DataFrame) -> np.ndarray:
        raise ValueError(f"Failed to enforce schema of data '{x}' with schema 'x'. "
                         "Error: Incompatible input types for column age.")

    s = Scorer("pd", "1", "pyfunc", ("util",), boom, {"util": "double"})
    with pytest.raises(ActionError) as err:
        s.score(df)
    assert str(err.value) == ("model pd v1 (pyfunc) failed to score: Incompatible input "
                              "types for column age.")


def test_a_recalibration_that_loses_on_its_holdout_is_not_registered() -> None:
    from driftwatch.actions.recalibrate import recalibration_loses

    # the trial's numbers: a layer fitted on the older 70% that does worse on the newest 30%
    lost = {"champion_holdout_log_loss": 0.59665, "recalibrated_holdout_log_loss": 0.59736,
            "holdout_rows": 2400.0}
    assert "does not beat the champion on the newest 2400 rows" in recalibration_loses(lost)
    assert recalibration_loses({**lost, "recalibrated_holdout_log_loss": 0.59}) is None
    assert recalibration_loses({**lost, "recalibrated_holdout_log_loss": None}) is not None


class _OptionalBureau(mlflow.pyfunc.PythonModel):
    """P(bad) from the debt ratio, shifted by a bureau score when the caller has one."""

    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        p = model_input["debt_to_income"].to_numpy(np.float64)
        if "bureau" in model_input.columns:
            p = p / 2
        return p


def test_an_optional_signature_column_the_connector_lacks_is_left_out(tmp_path: Path) -> None:
    from mlflow.models import ModelSignature
    from mlflow.types.schema import ColSpec, Schema

    sig = ModelSignature(inputs=Schema([ColSpec("double", "debt_to_income"),
                                        ColSpec("double", "bureau", required=False)]))
    path = tmp_path / "optional"
    mlflow.pyfunc.save_model(str(path), python_model=_OptionalBureau(), signature=sig)
    s = load_scorer(path, name="pd", version="1")
    s.check(["debt_to_income"])  # before: 'needs input column bureau', and the start stopped
    frame = pd.DataFrame({"debt_to_income": [0.2, 0.6]})
    np.testing.assert_allclose(s.score(frame), [0.2, 0.6])
    np.testing.assert_allclose(s.score(frame.assign(bureau=[700.0, 650.0])), [0.1, 0.3])
    with pytest.raises(ActionError, match="needs input column 'debt_to_income'"):
        s.check(["bureau"])  # a required one is still required


def test_text_for_a_numeric_signature_column_is_refused_not_read_as_missing(
        tmp_path: Path) -> None:
    """A model trained on a category's integer codes, fed the connector's text levels:
    before, every level read as missing and the model scored without its category."""
    from sklearn.linear_model import LogisticRegression

    x = pd.DataFrame({"purpose": [0, 1, 2, 0, 1, 2], "dti": [0.1, 0.5, 0.3, 0.2, 0.6, 0.4]})
    model = LogisticRegression().fit(x, [0, 1, 1, 0, 1, 0])
    path = tmp_path / "codes"
    mlflow.sklearn.save_model(model, str(path), signature=infer_signature(x, np.zeros(6)),
                              serialization_format="cloudpickle")
    s = load_scorer(path, name="pd", version="4")
    with pytest.raises(ActionError, match=r"takes input column 'purpose' as long \(its "
                                          r"signature\), but connector feature 'purpose' holds "
                                          r"text such as 'car'"):
        s.score(pd.DataFrame({"purpose": ["car", None], "dti": [0.2, 0.3]}))
    codes = pd.DataFrame({"purpose": [2.0, 1.0], "dti": [0.2, 0.4]})  # the connector's floats
    expected = model.predict_proba(pd.DataFrame({"purpose": [2, 1], "dti": [0.2, 0.4]}))[:, 1]
    np.testing.assert_allclose(s.score(codes), expected)


def test_a_flavour_without_signature_reads_the_columns_it_was_fitted_on(tmp_path: Path) -> None:
    """A scikit-learn Pipeline and a LightGBM model logged without a signature name their
    columns themselves; before, both were refused for the missing signature."""
    import lightgbm
    import mlflow.lightgbm
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    df = _credit()
    x = df[["util", "age", "home"]]
    pipe = Pipeline([("pre", ColumnTransformer([("home", OneHotEncoder(), ["home"])],
                                               remainder="passthrough")),
                     ("lr", LogisticRegression(max_iter=500))]).fit(x, df["label"])
    mlflow.sklearn.save_model(pipe, str(tmp_path / "pipe"), serialization_format="cloudpickle")
    s = load_scorer(tmp_path / "pipe", name="pd", version="1")
    assert s.inputs == ("util", "age", "home")
    np.testing.assert_allclose(s.score(df.iloc[::-1].reset_index(drop=True)),
                               pipe.predict_proba(x.iloc[::-1])[:, 1])

    boost = lightgbm.LGBMClassifier(n_estimators=10, verbose=-1).fit(
        _typed(df, categorical=True), df["label"])
    mlflow.lightgbm.save_model(boost, str(tmp_path / "lgb"))
    s = load_scorer(tmp_path / "lgb", name="pd", version="2")
    assert s.inputs == ("util", "age", "home")
    np.testing.assert_allclose(s.score(df), boost.predict_proba(_typed(df, True))[:, 1],
                               rtol=1e-6)

    arrays = LogisticRegression().fit(x[["util", "age"]].to_numpy(), df["label"])
    mlflow.sklearn.save_model(arrays, str(tmp_path / "arrays"),
                              serialization_format="cloudpickle")
    with pytest.raises(ActionError, match=r"has no signature, and the model does not name its "
                                          r"input columns"):
        load_scorer(tmp_path / "arrays", name="pd", version="3")


def test_a_boolean_signature_column_reads_a_categorical_flag() -> None:
    """init makes a yes/no column categorical, so the connector carries its levels as text
    ('true', 'false'); a model whose signature takes it as boolean gets booleans."""
    seen: list[pd.DataFrame] = []

    def predict(x: pd.DataFrame) -> np.ndarray:
        seen.append(x)
        return np.where(x["owns_home"].to_numpy(), 0.1, 0.3)

    s = Scorer("pd", "5", "sklearn", ("owns_home",), predict, types={"owns_home": "boolean"})
    p = s.score(pd.DataFrame({"owns_home": ["true", "false", "True", "no"]}))
    np.testing.assert_allclose(p, [0.1, 0.3, 0.1, 0.3])
    assert seen[0]["owns_home"].dtype == np.bool_


def test_a_missing_input_column_suggests_the_mapping_to_its_nearest_feature() -> None:
    s = Scorer("pd", "6", "sklearn", ("AnnualIncome", "bureau_score"), lambda x: x)
    with pytest.raises(ActionError, match=r"needs input columns 'AnnualIncome' and "
                       r"'bureau_score', .*features: "
                       r"annual_income, age; map it: --champion-column "
                       r"AnnualIncome=annual_income \(champion.columns"):
        s.check(["annual_income", "age"])
    with pytest.raises(ActionError, match=r"'bureau_score', .*features: annual_income, age, "
                                          r"AnnualIncome$"):
        s.check(["annual_income", "age", "AnnualIncome"])


def _bare_booster(tmp_path: Path, flavour: str, label: np.ndarray,
                  objective: str = "binary") -> tuple[Path, pd.DataFrame, np.ndarray]:
    """A native Booster (not the scikit-learn wrapper) saved by its flavour; its raw
    ``predict`` of the features."""
    df = _data()
    x = df[["income", "debt_to_income"]]
    path = tmp_path / flavour
    if flavour == "xgboost":
        import mlflow.xgboost
        import xgboost

        booster = xgboost.train({"objective": objective, "max_depth": 3},
                                xgboost.DMatrix(x, label=label), 20)
        raw = booster.predict(xgboost.DMatrix(x))
        mlflow.xgboost.save_model(booster, str(path), signature=infer_signature(x, raw))
    else:
        import lightgbm
        import mlflow.lightgbm

        booster = lightgbm.train({"objective": objective, "verbose": -1},
                                 lightgbm.Dataset(x, label), 20)
        raw = booster.predict(x)
        mlflow.lightgbm.save_model(booster, str(path), signature=infer_signature(x, raw))
    return path, df, np.asarray(raw, np.float64)


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm"])
def test_a_bare_booster_answers_p_of_label_1_read_at_the_policys_bad_class(
        tmp_path: Path, flavour: str) -> None:
    pytest.importorskip(flavour)
    good = 1.0 - _data()["label"].to_numpy()  # trained on "repaid": 1 is the good outcome
    objective = "binary:logistic" if flavour == "xgboost" else "binary"
    path, df, raw = _bare_booster(tmp_path, flavour, good, objective)
    # the policy's bad label is 0: the booster's P(label 1) is P(good)
    s = load_scorer(path, name="pd", version="1", bad=[0])
    np.testing.assert_allclose(s.score(df), 1.0 - raw, rtol=1e-6)
    # bad = 1, as its scikit-learn wrapper would read classes [0, 1]
    s = load_scorer(path, name="pd", version="1", bad=[1])
    np.testing.assert_allclose(s.score(df), raw, rtol=1e-6)


def test_an_xgboost_logitraw_booster_is_read_through_the_sigmoid(tmp_path: Path) -> None:
    pytest.importorskip("xgboost")
    path, df, margin = _bare_booster(tmp_path, "xgboost", _data()["label"].to_numpy(),
                                     "binary:logitraw")
    assert margin.min() < 0  # margins, not probabilities
    s = load_scorer(path, name="pd", version="1")
    np.testing.assert_allclose(s.score(df), 1 / (1 + np.exp(-margin)), rtol=1e-6)


def test_rows_with_a_missing_value_a_model_refuses_are_left_unscored(tmp_path: Path) -> None:
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    df = _credit()
    x = _typed(df, categorical=False)  # text home, integer age: a string and a long column
    pipe = Pipeline([
        ("pre", ColumnTransformer([("home", OneHotEncoder(handle_unknown="ignore"), ["home"])],
                                  remainder="passthrough")),
        ("lr", LogisticRegression(max_iter=500)),
    ]).fit(x, df["label"])
    mlflow.sklearn.save_model(pipe, str(tmp_path / "m"), serialization_format="cloudpickle",
                              signature=infer_signature(x, pipe.predict_proba(x)[:, 1]))
    s = load_scorer(tmp_path / "m", name="pd", version="1")
    assert (s.types["age"], s.types["home"]) == ("long", "string")
    gap = df.copy()
    gap.loc[3, "age"] = np.nan  # the stream's integers are JSON numbers, some missing
    gap.loc[5, "util"] = np.nan
    p = s.score(gap)  # LogisticRegression refuses NaN: those two rows alone go unscored
    want = pipe.predict_proba(x)[:, 1]
    assert np.isnan(p[[3, 5]]).all() and s.unscored == 2
    np.testing.assert_allclose(np.delete(p, [3, 5]), np.delete(want, [3, 5]), rtol=1e-9)
    assert np.isnan(s.score(gap.iloc[:8])[[3, 5]]).all() and s.unscored == 4
    # where no row is complete the missing values cannot be told to be the cause: the
    # model's error stops the scoring, as before
    fresh = load_scorer(tmp_path / "m", name="pd", version="1")
    with pytest.raises(ActionError, match="failed to score: Input X contains NaN"):
        fresh.score(gap.assign(age=np.nan))


def test_a_level_outside_the_reference_reads_as_missing_for_a_numeric_input() -> None:
    # an integer feature the connector holds as categorical codes: a value outside the
    # reference's levels comes back as a placeholder, not as the number the model takes
    def predict(x: pd.DataFrame) -> np.ndarray:
        return x["n_accounts"].fillna(5).to_numpy() / 10

    s = Scorer("pd", "1", "sklearn", ("n_accounts",), predict, {"n_accounts": "long"})
    frame = pd.DataFrame({"n_accounts": ["3", "__unseen__", "__other__", None]})
    np.testing.assert_allclose(s.score(frame), [0.3, 0.5, 0.5, 0.5])


@pytest.mark.parametrize("flavour", ["xgboost", "lightgbm", "LGBMClassifier"])
def test_integer_codes_trained_as_a_category_reach_the_booster_as_one(tmp_path, flavour):
    # a grade coded 0..4 and kept as a pandas category in training: the signature says
    # long, and numbers fed as numbers were refused by both boosters on every batch
    pytest.importorskip(flavour.replace("LGBMClassifier", "lightgbm"))
    df = _credit()
    grade = np.random.default_rng(5).integers(0, 5, len(df))
    x = _typed(df, categorical=True).assign(grade=pd.Categorical(grade))
    label = df["label"].to_numpy()
    if flavour == "xgboost":
        import mlflow.xgboost
        import xgboost

        booster = xgboost.train({"objective": "binary:logistic", "max_depth": 3},
                                xgboost.DMatrix(x, label=label, enable_categorical=True), 20)
        want = booster.predict(xgboost.DMatrix(x, enable_categorical=True))
        save = mlflow.xgboost.save_model
    else:
        import lightgbm
        import mlflow.lightgbm

        booster = lightgbm.train({"objective": "binary", "verbose": -1},
                                 lightgbm.Dataset(x, label), 20)
        want = booster.predict(x)
        save = mlflow.lightgbm.save_model
        if flavour == "LGBMClassifier":  # the scikit-learn wrapper, pickled
            booster = lightgbm.LGBMClassifier(n_estimators=20, verbose=-1).fit(x, label)
            want = booster.predict_proba(x)[:, 1]
    save(booster, str(tmp_path / "m"), signature=infer_signature(x, want))
    s = load_scorer(tmp_path / "m", name="pd", version="1")
    assert s.types["grade"] == "long"
    # the connector holds the grade as a categorical feature (text levels) or as numbers
    for fed in (df.assign(grade=grade.astype(str)), df.assign(grade=grade.astype(float))):
        np.testing.assert_allclose(s.score(fed), want, rtol=1e-6)
    gap = df.assign(grade=np.where(np.arange(len(df)) == 3, np.nan, grade))
    assert np.isfinite(s.score(gap)).all()  # a missing grade is the booster's missing value
    # a recalibration layer on it (a shadow's challenger) feeds it the same way
    cal = LogitCalibrator()
    cal.learn(want, label)
    mlflow.pyfunc.save_model(str(tmp_path / "recal"),
                             python_model=RecalibratedPyfunc("models:/pd/1", cal))
    recal = load_scorer(tmp_path / "recal", name="pd", version="2", resolve=lambda uri: s)
    np.testing.assert_allclose(recal.score(fed), cal.transform(want), rtol=1e-6)


def test_a_bare_booster_declared_p_good_is_read_as_p_bad(tmp_path: Path) -> None:
    # the label is text (Charged Off / Fully Paid) and the user coded Fully Paid as 1:
    # only the declaration can say so, as for a custom pyfunc, and the trial asks for it
    from driftwatch.registry.trial import trial_score

    pytest.importorskip("xgboost")
    good = 1.0 - _data()["label"].to_numpy()
    path, df, raw = _bare_booster(tmp_path, "xgboost", good, "binary:logistic")
    bad = ["Charged Off"]
    misread = load_scorer(path, name="pd", version="1", bad=bad)
    with pytest.raises(ActionError, match=r"it returns P\(good\)\? declare score_is: p_good"):
        trial_score(misread, df, "models:/pd@champion")
    s = load_scorer(path, name="pd", version="1", bad=bad, score_is="p_good")
    np.testing.assert_allclose(s.score(df), 1.0 - raw, rtol=1e-6)
    assert trial_score(s, df, "models:/pd@champion") > 0.5
