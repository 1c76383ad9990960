"""The river learners an online update may use, by name: an allow-list, never an import path.

A learner is written as the policy writes it, transformers then one estimator, joined by
``|``. Each name maps to a constructor here; anything else is refused with the list of
valid names (policies are data, so a name never reaches ``importlib``).

>>> list(build_learner("StandardScaler | LogisticRegression").steps)
['StandardScaler', 'LogisticRegression']
>>> build_learner("StandardScaler|GradientBoost")
Traceback (most recent call last):
...
driftwatch.errors.ActionError: unknown learner step 'GradientBoost'; valid: MaxAbsScaler, \
MinMaxScaler, OneHotEncoder, StandardScaler, ALMAClassifier, HoeffdingTreeClassifier, \
LogisticRegression, PAClassifier, Perceptron
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from river import compose, linear_model, preprocessing, tree

from driftwatch.errors import ActionError

__all__ = ["ESTIMATORS", "TRANSFORMERS", "build_learner", "normalise_learner", "supports_many"]

#: Transformers. Categorical features reach the learner already one-hot encoded (see
#: :class:`~driftwatch.registry.river_model.FeatureEncoder`), so ``OneHotEncoder`` is a
#: pass-through kept for policies that name it.
TRANSFORMERS: dict[str, Callable[[], Any]] = {
    "MaxAbsScaler": preprocessing.MaxAbsScaler,
    "MinMaxScaler": preprocessing.MinMaxScaler,
    "OneHotEncoder": lambda: compose.FuncTransformer(_identity),
    "StandardScaler": preprocessing.StandardScaler,
}
ESTIMATORS: dict[str, Callable[[], Any]] = {
    "ALMAClassifier": linear_model.ALMAClassifier,
    "HoeffdingTreeClassifier": lambda: tree.HoeffdingTreeClassifier(grace_period=100),
    "LogisticRegression": linear_model.LogisticRegression,
    "PAClassifier": linear_model.PAClassifier,
    "Perceptron": linear_model.Perceptron,
}


def _identity(x: dict[str, float]) -> dict[str, float]:
    return x


def normalise_learner(spec: str) -> str:
    """``"StandardScaler | LogisticRegression"`` → ``"StandardScaler|LogisticRegression"``,
    checking every step is allowed and the estimator comes last, exactly once."""
    steps = [s.strip() for s in str(spec).split("|")]
    valid = [*TRANSFORMERS, *ESTIMATORS]
    for step in steps:
        if step not in valid:
            raise ActionError(f"unknown learner step {step!r}; valid: {', '.join(valid)}")
    if steps[-1] not in ESTIMATORS or any(s in ESTIMATORS for s in steps[:-1]):
        raise ActionError(
            f"learner {spec!r} must be transformers then exactly one estimator, last "
            f"(estimators: {', '.join(ESTIMATORS)})"
        )
    return "|".join(steps)


def build_learner(spec: str) -> Any:
    """A fresh river pipeline for ``spec``."""
    steps = normalise_learner(spec).split("|")
    parts = [TRANSFORMERS[s]() for s in steps[:-1]] + [ESTIMATORS[steps[-1]]()]
    return compose.Pipeline(*parts)


def supports_many(pipeline: Any) -> bool:
    """Whether every step of ``pipeline`` learns and predicts on whole DataFrames."""
    steps = list(pipeline.steps.values()) if hasattr(pipeline, "steps") else [pipeline]
    *transformers, estimator = steps
    return (
        all(hasattr(t, "learn_many") and hasattr(t, "transform_many") for t in transformers)
        and hasattr(estimator, "learn_many")
        and hasattr(estimator, "predict_proba_many")
    )
