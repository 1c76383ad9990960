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
from driftwatch.policy.catalog import LEARNER_ESTIMATORS, LEARNER_TRANSFORMERS

__all__ = ["ESTIMATORS", "TRANSFORMERS", "build_learner", "normalise_learner", "supports_many"]

#: The names come from the policy catalogue (the one allow-list); here each gets its river
#: class. Categorical features reach the learner already one-hot encoded (see
#: :class:`~driftwatch.registry.river_model.FeatureEncoder`), so ``OneHotEncoder`` is a
#: pass-through kept for policies that name it.
_SPECIAL: dict[str, Callable[[], Any]] = {
    "OneHotEncoder": lambda: compose.FuncTransformer(_identity),
    "HoeffdingTreeClassifier": lambda: tree.HoeffdingTreeClassifier(grace_period=100),
}


def _factory(name: str) -> Callable[[], Any]:
    if name in _SPECIAL:
        return _SPECIAL[name]
    for module in (preprocessing, linear_model, tree):
        if hasattr(module, name):
            return getattr(module, name)  # type: ignore[no-any-return]
    raise ImportError(f"river has no learner step {name!r}")  # a catalogue typo: fail loud


TRANSFORMERS: dict[str, Callable[[], Any]] = {n: _factory(n) for n in LEARNER_TRANSFORMERS}
ESTIMATORS: dict[str, Callable[[], Any]] = {n: _factory(n) for n in LEARNER_ESTIMATORS}


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
