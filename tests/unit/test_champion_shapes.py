"""A bank's own model of a shape the binary 0/1 classifier does not cover.

A classifier of three classes (``good``/``late``/``default``, or codes ``0``/``1``/``2``)
was read at its last column, whichever class that was; now at the class the policy's bad
label values name, and refused when none or several of them name one. A custom pyfunc
returning three columns of class probabilities was read at the last column too; now it is
refused with what to return. ``score_is: p_good`` declared for a model of three classes, and
``score_is`` or ``score_scale`` declared for a river model, were ignored without a word; now
the start notes the one and refuses the other, as it does for the ``predict_proba``
flavours. A signature naming several columns the stream lacks was reported by its first.
"""

from __future__ import annotations

from pathlib import Path

import mlflow
import mlflow.sklearn
import numpy as np
import pandas as pd
import pytest
from mlflow.models import infer_signature
from sklearn.linear_model import LogisticRegression

from driftwatch.errors import ActionError
from driftwatch.registry.champion import distil_champion
from driftwatch.registry.outputs import probabilities
from driftwatch.registry.pyfunc import save_river_model
from driftwatch.registry.scorer import Scorer, load_scorer
from driftwatch.registry.scorers import ChampionRef, ScorerCache
from driftwatch.registry.trial import trial_score
from driftwatch.scorescale import LOG_ODDS

from .test_champion_declarations import sklearn_champion

URI = "models:/pd@champion"
X = ["income", "debt_to_income"]
PIP = ["mlflow"]


def _data(n: int = 900, seed: int = 0) -> pd.DataFrame:
    """Applications whose bad rate rises with ``debt_to_income``; ``status`` 0 good,
    1 default (``label``), 2 late (some of the good ones)."""
    rng = np.random.default_rng(seed)
    dti = rng.uniform(0, 0.6, n)
    income = rng.lognormal(10.5, 0.5, n)
    bad = rng.random(n) < 1 / (1 + np.exp(-(-2.0 + 5.0 * dti)))
    status = np.where(bad, 1, np.where(rng.random(n) < 0.2, 2, 0))
    return pd.DataFrame({"income": income, "debt_to_income": dti,
                         "label": bad.astype(float), "status": status})


def _three_classes(tmp_path: Path, names: list) -> tuple[Path, LogisticRegression,
                                                         pd.DataFrame]:
    """A classifier of ``names[status]`` saved as a registry download holds it."""
    df = _data()
    model = LogisticRegression(max_iter=500).fit(df[X], np.array(names)[df.status])
    path = tmp_path / "model"
    mlflow.sklearn.save_model(model, str(path), signature=infer_signature(df[X]),
                              serialization_format="cloudpickle", pip_requirements=PIP)
    return path, model, df


@pytest.mark.parametrize("names, bad, read", [
    (["good", "default", "late"], [1], "default"),  # named: the default vocabulary's
    (["current", "charged off", "late"], ["charged off"], "charged off"),
    ([0, 1, 2], [1], 1),  # codes, as the stream's labels code them
])
def test_three_classes_are_read_at_the_class_the_policy_calls_bad(
        tmp_path: Path, names: list, bad: list, read: object) -> None:
    path, model, df = _three_classes(tmp_path, names)
    s = load_scorer(path, name="pd", version="1", bad=bad)
    want = model.predict_proba(df[X])[:, list(model.classes_).index(read)]
    np.testing.assert_allclose(s.score(df), want)  # before: the last class's column
    assert s.meta["bad_class"] == read and trial_score(s, df, URI) > 0.6


@pytest.mark.parametrize("names, bad, said", [
    (["A", "B", "C"], [1], r"cannot tell which of the model's classes \['A', 'B', 'C'\] is "
                           r"the bad one: name it among the policy's reference label values"),
    (["current", "charged off", "default"], ["charged off", "default"],
     r"classes \['charged off', 'current', 'default'\] hold several bad ones \(charged off, "
     r"default\), but driftwatch reads one predict_proba column as P\(bad\)"),
])
def test_three_classes_that_name_no_bad_one_or_several_are_refused(
        tmp_path: Path, names: list, bad: list, said: str) -> None:
    path, _, _ = _three_classes(tmp_path, names)
    with pytest.raises(ActionError, match=said):
        load_scorer(path, name="pd", version="1", bad=bad)


def test_an_inverted_three_class_model_is_told_without_a_class_to_declare(
        tmp_path: Path) -> None:
    path, _, df = _three_classes(tmp_path, [1, 0, 2])  # trained with 0 = default
    s = load_scorer(path, name="pd", version="1", bad=[1])
    with pytest.raises(ActionError) as err:
        trial_score(s, df, URI)
    assert str(err.value).startswith(
        f"{URI}: its predict_proba column of class 1 (of its classes 0, 1, 2: the one the "
        "policy's reference.label.bad names) rank the reference's bad rows below its good "
        "ones (AUC 0.")
    assert str(err.value).endswith("was it trained with another coding of the label? log a "
                                   "pyfunc whose predict returns P(bad)")


def test_score_is_p_good_on_three_classes_is_not_applied_and_the_start_says_so(
        tmp_path: Path) -> None:
    from driftwatch.registry.bootstrap import require_champion

    df = _data()
    y = np.asarray(["good", "default", "late"], object)[df.status]
    model = LogisticRegression(max_iter=500).fit(df[X], y)
    reg = sklearn_champion(tmp_path, model, df[X])
    notes: list[str] = []
    cache = ScorerCache(reg, tmp_path / "c", bad=[1], score_is="p_good")
    require_champion(reg, ChampionRef.parse(URI, score_is="p_good"), X, cache, df,
                     notes.append)
    assert notes == [
        f"{URI}: score_is: p_good is not applied: a model of 3 classes ('default', 'good', "
        "'late') is read at the one the policy's reference.label.bad names, 'default', whose "
        "predict_proba column is P(bad) (score_is: p_good reads a two-class model at its "
        "other class); remove score_is: p_good (--champion-score-is)"]
    default = list(model.classes_).index("default")
    np.testing.assert_allclose(cache.get("pd", "1").score(df),
                               model.predict_proba(df[X])[:, default])


def test_a_river_champion_notes_score_is_and_refuses_score_scale(tmp_path: Path) -> None:
    df = _data()
    river = distil_champion(df.assign(score=df.debt_to_income), numeric=X)
    save_river_model(river, tmp_path / "river")
    s = load_scorer(tmp_path / "river", name="pd", version="1", score_is="p_good")
    np.testing.assert_allclose(s.score(df), river.predict_proba(df))  # P(bad) as it is
    assert s.meta["note"] == (
        "score_is: p_good is not applied: a driftwatch river model answers P(bad), the "
        "probability of the bad label it learns on (the policy's reference.label.bad); "
        "remove score_is: p_good (--champion-score-is)")
    with pytest.raises(ActionError, match=(
            r"^model pd v1 \(river\) is a driftwatch river model, whose predict gives P\(bad\), "
            r"but the champion declares score_scale: log_odds: .*remove score_scale")):
        load_scorer(tmp_path / "river", name="pd", version="1", score_scale=LOG_ODDS)
    assert "note" not in load_scorer(tmp_path / "river", name="pd", version="1").meta


@pytest.mark.parametrize("raw, said", [
    (np.full((2, 3), 1 / 3), "returned 3 columns of class probabilities (a predict_proba of "
                             "3 classes?): driftwatch reads one column as P(bad)"),
    (pd.DataFrame({"good": [0.5, 0.6], "late": [0.2, 0.1], "p2": [0.3, 0.3]}),
     "returned a frame of 3 columns (good, late, p2), none named after the bad class"),
])
def test_three_output_columns_that_name_no_bad_one_are_refused(raw: object, said: str) -> None:
    with pytest.raises(ActionError, match=r"\(p_bad, or one of the policy's reference"):
        try:
            probabilities(raw, 2)
        except ActionError as exc:
            assert str(exc).startswith(said)
            raise
    named = pd.DataFrame({"good": [0.5, 0.6], "late": [0.2, 0.1], "default": [0.3, 0.3]})
    assert probabilities(named, 2).tolist() == [0.3, 0.3]


def test_every_input_column_the_stream_lacks_is_named() -> None:
    s = Scorer("pd", "7", "sklearn", ("Income", "debt_to_income", "applicant_age"), print)
    with pytest.raises(ActionError) as err:
        s.check(["income", "debt_to_income", "age"])
    assert str(err.value) == (
        "model pd v7 needs input columns 'Income' and 'applicant_age', which the connector "
        "does not provide; features: income, debt_to_income, age; map it: --champion-column "
        "Income=income (champion.columns in the service configuration)")
