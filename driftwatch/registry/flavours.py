"""The scikit-learn, XGBoost and LightGBM flavours: loaded by their own MLflow module and
scored by ``predict_proba`` (their pyfunc ``predict`` returns class labels), at the column
of the bad class.

Classes that name themselves (``bad``/``good``, ``Charged Off``/``Fully Paid``) say which
column that is, whatever the champion declares. Classes that are codes (``0``/``1``,
``False``/``True``) do not: by default the higher one is read as the bad class (the
policy's ``reference.label.bad``, as scikit-learn's ``pos_label``), and a champion declared
``score_is: p_good`` was trained with its higher class the good one (a ``repaid`` flag
while the stream's labels say 1 = default), so it is read at the lower class. Declared for
classes that name themselves, ``score_is: p_good`` is not applied and the scorer's
``meta["note"]`` says so (the champion's start passes it on as a note).

A classifier of three classes or more (``good``/``late``/``default``, or codes ``0``/``1``/
``2``) is read at the class the policy's bad label values name (else ``1``, ``bad``,
``default``), codes as named ones: one that none or several of them name is refused, since
no column or several would be P(bad). ``score_is: p_good`` has no other class to read it at
and is not applied, with a note as for classes that name themselves.

A model logged without a signature still names its input columns when it was fitted on a
DataFrame: scikit-learn's ``feature_names_in_`` (a Pipeline's too), XGBoost's booster
``feature_names``, LightGBM's ``feature_name()``. Those are its inputs then, typed by the
connector's values.

A bare Booster (logged by ``mlflow.xgboost`` or ``mlflow.lightgbm`` without the scikit-learn
wrapper) has no ``classes_``: it was trained on 0/1 labels and its ``predict`` is P(label 1),
read as a classifier with classes ``[0, 1]`` is (the policy's bad label 0, as for a
``repaid`` flag, reads ``1 - p``), or as P(good) where the champion declares
``score_is: p_good`` (a text label the user coded 1 for its good value). An XGBoost
``binary:logitraw`` objective predicts the margin, the log-odds of label 1: it is read
through the sigmoid, as ``binary:logistic`` would have given it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from driftwatch.connectors.mapping import DEFAULT_BAD, value_key
from driftwatch.errors import ActionError

__all__ = ["CATEGORY_FLAVOURS", "PROBA_FLAVOURS", "Flavoured", "bad_class_index",
           "category_columns", "category_levels", "class_codes", "load_flavour",
           "model_columns"]

PROBA_FLAVOURS = ("sklearn", "xgboost", "lightgbm")
#: Flavours whose pandas input takes text levels as ``category`` only.
CATEGORY_FLAVOURS = ("xgboost", "lightgbm")


def bad_class_index(classes: Sequence[Any] | None, bad: Sequence[Any] = DEFAULT_BAD) -> int:
    """The ``predict_proba`` column of the bad class among a classifier's ``classes_``.
    Of three classes or more, the one the policy's bad label values (else ``1``, ``bad``,
    ``default``) name; several bad ones, or none, are refused: one column is P(bad).

    >>> bad_class_index([0, 1]), bad_class_index(["bad", "good"], [1])
    (1, 0)
    >>> bad_class_index(["Fully Paid", "Charged Off"], ["Charged Off"])
    1
    >>> bad_class_index(["default", "good", "late"], [1]), bad_class_index([0, 1, 2], [1])
    (0, 1)
    """
    if classes is None or len(classes) < 2:
        return -1
    keys = [value_key(c) for c in classes]
    for vocabulary in (bad, DEFAULT_BAD):
        wanted = {value_key(v) for v in vocabulary}
        hits = [i for i, k in enumerate(keys) if k in wanted]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1 and len(classes) > 2:
            raise ActionError(
                f"the model's classes {list(map(str, classes))} hold several bad ones "
                f"({', '.join(str(classes[i]) for i in hits)}), but driftwatch reads one "
                "predict_proba column as P(bad): log a pyfunc whose predict returns P(bad), "
                "their sum")
    if len(classes) == 2 and all(isinstance(c, (int, float, np.number)) for c in classes):
        return 1  # 0/1-like codes: the higher one is the event, as scikit-learn's pos_label
    raise ActionError(
        f"cannot tell which of the model's classes {list(map(str, classes))} is the bad one: "
        "name it among the policy's reference label values (reference.label.bad)"
    )


def class_codes(classes: Sequence[Any] | None) -> bool:
    """Whether a classifier's ``classes_`` are codes that do not name themselves: numbers
    or booleans (``0``/``1``, ``False``/``True``), also written as text (``"0"``/``"1"``).
    Which of two codes is the bad outcome depends on how the label was coded in training.

    >>> class_codes([0, 1]), class_codes(np.array([False, True])), class_codes(["0", "1"])
    (True, True, True)
    >>> class_codes(["bad", "good"]), class_codes(["Charged Off", "Fully Paid"])
    (False, False)
    """
    if classes is None:
        return True  # nothing names the columns
    for c in classes:
        if isinstance(c, (bool, int, float, np.bool_, np.number)):
            continue
        text = str(c).strip().lower()
        if text in ("true", "false"):
            continue
        try:
            float(text)
        except ValueError:
            return False
    return True


def model_columns(model: Any) -> tuple[str, ...]:
    """The input columns a fitted model names itself (see the module doc); empty when it
    was fitted on an array (its names are then ``f0``, ``Column_0``: not the connector's).

    >>> from types import SimpleNamespace
    >>> model_columns(SimpleNamespace(feature_names_in_=np.array(["income", "age"])))
    ('income', 'age')
    >>> model_columns(SimpleNamespace(feature_name=lambda: ["Column_0", "Column_1"]))
    ()
    """
    names: Any = getattr(model, "feature_names_in_", None)
    if names is None and hasattr(model, "get_booster"):  # an XGBClassifier fitted on arrays
        names = model.get_booster().feature_names
    if names is None:
        names = getattr(model, "feature_names", None)  # an XGBoost Booster
    if names is None and callable(getattr(model, "feature_name", None)):
        names = model.feature_name()  # a LightGBM Booster
    if names is None and hasattr(model, "booster_"):
        names = model.booster_.feature_name()  # an LGBMClassifier
    names = tuple(str(n) for n in (names if names is not None else ()))
    generic = all(re.fullmatch(r"(?:f|Column_)\d+", n) for n in names)
    return () if generic else names


def category_columns(model: Any) -> frozenset[str]:
    """The input columns an XGBoost or LightGBM model (Booster or scikit-learn wrapper)
    was trained on as pandas categories: each must reach it as one again, integer codes
    too, whose signature type is ``long`` (MLflow types a category by its levels).

    >>> from types import SimpleNamespace
    >>> sorted(category_columns(SimpleNamespace(
    ...     feature_names=["income", "grade"], feature_types=["float", "c"])))
    ['grade']
    >>> sorted(category_columns(SimpleNamespace(
    ...     feature_name=lambda: ["income", "grade"], params={"categorical_feature": [1]})))
    ['grade']
    """
    if hasattr(model, "get_booster"):  # an XGBClassifier
        model = model.get_booster()
    elif hasattr(model, "booster_"):  # an LGBMClassifier
        model = model.booster_
    names = getattr(model, "feature_names", None)
    types = getattr(model, "feature_types", None)
    if names is not None and types is not None:  # XGBoost: "c" marks a category
        return frozenset(str(n) for n, t in zip(names, types, strict=False) if t == "c")
    if callable(getattr(model, "feature_name", None)):  # LightGBM: their indices
        names = model.feature_name()
        found = (getattr(model, "params", None) or {}).get("categorical_feature") or ()
        if not found and getattr(model, "pandas_categorical", None):
            # an LGBMClassifier's booster keeps them in its model text only
            said = re.search(r"\[categorical_feature: ([^\]]*)\]", model.model_to_string())
            found = [v.strip() for v in said[1].split(",")] if said else []
        if isinstance(found, (int, str)):
            found = [found]
        picked = {names[int(i)] for i in found if str(i).isdigit() and int(i) < len(names)}
        return frozenset(str(n) for n in picked | {n for n in found if n in names})
    return frozenset()


def category_levels(model: Any) -> dict[str, tuple[Any, ...]]:
    """The levels an XGBoost model (3.1 or later, which keeps them) was trained on, by
    category column: a column fed as a category of exactly these levels reaches it coded as
    in training, and a level it never saw is a missing value. Fed the batch's own levels,
    XGBoost 3.2 refuses a batch holding an unseen one (``Found a category not in the
    training set``) or, when it sorts before every training level, scores it as the first
    training level. Empty for an older XGBoost and for LightGBM, which maps levels itself
    (an unseen one is missing there already).

    >>> category_levels(object())
    {}
    """
    if hasattr(model, "get_booster"):  # an XGBClassifier
        model = model.get_booster()
    get = getattr(model, "get_categories", None)
    if get is None:
        return {}
    try:
        found = get(export_to_arrow=True).to_arrow()
    except Exception:  # an older XGBoost, or a model without categories
        return {}
    return {str(name): tuple(levels.to_pylist()) for name, levels in found or ()
            if levels is not None}


class Flavoured(NamedTuple):
    """A model loaded by its flavour (see :func:`load_flavour`)."""

    #: P(bad) of a frame of model inputs
    predict: Callable[[pd.DataFrame], np.ndarray]
    #: the input columns it names itself (:func:`model_columns`)
    names: tuple[str, ...]
    #: those it takes as categories (:func:`category_columns`)
    categories: frozenset[str]
    #: what a scorer records of it: ``booster`` for a bare Booster, its ``score_is``
    meta: dict[str, Any]
    #: the training levels of its category columns, where it keeps them
    #: (:func:`category_levels`)
    levels: Mapping[str, tuple[Any, ...]] = {}


def load_flavour(flavor: str, path: Path, bad: Sequence[Any] = DEFAULT_BAD,
                 score_is: str = "p_bad") -> Flavoured:
    """The model at ``path`` loaded by its flavour. ``score_is="p_good"`` declares that a
    bare Booster's output is P(good) (a text label the user coded 1 for the good outcome),
    and that a classifier whose classes are codes was trained with its higher class the
    good one; a classifier whose classes name themselves is read at the bad class
    whatever it says (see the module doc)."""
    import importlib

    module = importlib.import_module(f"mlflow.{flavor}")
    model = module.load_model(str(path))
    names = model_columns(model)
    categories = category_columns(model) if flavor in CATEGORY_FLAVOURS else frozenset()
    levels = category_levels(model) if flavor == "xgboost" else {}
    if hasattr(model, "predict_proba"):
        classes = getattr(model, "classes_", None)
        col, meta = _proba_column(classes, bad, score_is)
        return Flavoured(lambda x: np.asarray(model.predict_proba(x))[:, col], names,
                         categories, meta, levels)
    predict = _booster_predict(flavor, model)
    meta: dict[str, Any] = {"booster": True}
    if score_is == "p_good":
        meta["score_is"] = "p_good"
    if score_is == "p_good" or bad_class_index([0, 1], bad) == 0:  # label 1 is good
        return Flavoured(lambda x: 1.0 - np.asarray(predict(x), np.float64), names,
                         categories, meta, levels)
    return Flavoured(predict, names, categories, meta, levels)


def _proba_column(classes: Sequence[Any] | None, bad: Sequence[Any],
                  score_is: str) -> tuple[int, dict[str, Any]]:
    """The ``predict_proba`` column read as P(bad) and what the scorer records of it (see
    the module doc): ``classes``, ``bad_class`` (the class read), ``codes`` (whether the
    classes are codes), ``score_is`` where the declaration was applied, ``note`` where
    it was not.

    >>> _proba_column([0, 1], [1], "p_good")[0], _proba_column([0, 1], [1], "p_bad")[0]
    (0, 1)
    >>> col, meta = _proba_column(["bad", "good"], [1], "p_good")
    >>> col, meta["note"][:44]
    (0, 'score_is: p_good is not applied: its classes')
    """
    col = bad_class_index(classes, bad)
    codes = class_codes(classes)
    meta: dict[str, Any] = {"codes": codes}
    if score_is == "p_good":
        if codes and (classes is None or len(classes) == 2):
            col = 0  # its higher class is the good one: the lower is the bad one
            meta["score_is"] = "p_good"
        elif classes is not None and len(classes) == 2:
            meta["note"] = (
                f"score_is: p_good is not applied: its classes "
                f"({', '.join(repr(_plain(c)) for c in classes)}) name the bad one, "
                f"{_plain(classes[col])!r}, whose predict_proba column is read as P(bad); "
                "remove score_is: p_good (--champion-score-is)")
        elif classes is not None and len(classes) > 2:
            meta["note"] = (
                f"score_is: p_good is not applied: a model of {len(classes)} classes "
                f"({', '.join(repr(_plain(c)) for c in classes)}) is read at the one the "
                f"policy's reference.label.bad names, {_plain(classes[col])!r}, whose "
                "predict_proba column is P(bad) (score_is: p_good reads a two-class model at "
                "its other class); remove score_is: p_good (--champion-score-is)")
    if classes is not None and len(classes) >= 2:
        meta["classes"] = [_plain(c) for c in classes]
        meta["bad_class"] = _plain(classes[col])
    return col, meta


def _plain(value: Any) -> Any:
    """A class value as Python's own (a numpy scalar's ``item()``, a whole float as the
    integer it codes: labels read as floats), for messages.

    >>> _plain(np.float64(1.0)), _plain(np.True_), _plain("bad")
    (1, True, 'bad')
    """
    value = value.item() if isinstance(value, np.generic) else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _booster_predict(flavor: str, model: Any) -> Callable[[pd.DataFrame], np.ndarray]:
    """A bare Booster's P(label 1) (see the module doc)."""
    if flavor != "xgboost":
        return lambda x: model.predict(x)
    import xgboost

    def predict(x: pd.DataFrame) -> np.ndarray:
        return np.asarray(model.predict(xgboost.DMatrix(x, enable_categorical=True)))

    if _xgboost_objective(model) == "binary:logitraw":  # margins: log-odds of label 1
        return lambda x: 1.0 / (1.0 + np.exp(-predict(x).astype(np.float64)))
    return predict


def _xgboost_objective(booster: Any) -> str | None:
    """The objective an XGBoost Booster was trained with (None where its configuration
    does not say)."""
    try:
        return str(json.loads(booster.save_config())["learner"]["objective"]["name"])
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
