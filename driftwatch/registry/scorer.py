"""Any registered model version as a scorer: a DataFrame of connector features in, P(bad) out.

driftwatch never needs a model's internals. A version is loaded by its flavour: scikit-learn,
XGBoost and LightGBM classifiers answer ``predict_proba`` (the pyfunc ``predict`` of those
flavours returns class labels), read at the column of the bad class (the model's
``classes_`` value among the policy's bad label values, else ``1``/``bad``/``default``);
anything else answers the pyfunc ``predict``, read by :mod:`driftwatch.registry.outputs`
(a column of probabilities, a ``predict_proba`` array, or a frame or dict whose column named
after the bad class, else the last, is P(bad); values outside [0, 1] are refused). A custom
pyfunc that returns P(good) is declared with ``score_is="p_good"`` (the champion's
``score_is``): its output is read as ``1 - p``, unless a column's name says it is P(bad);
so is a bare XGBoost or LightGBM Booster's, which has no ``classes_`` to say it, and a
classifier whose classes are codes (``0``/``1``) is read at its lower class (see
:mod:`driftwatch.registry.flavours`). A custom pyfunc whose output is written in another
scale (log-odds, a percentage, a scorecard's points) declares it with ``score_scale`` (the
champion's, :mod:`driftwatch.registry.reading`): its output is read in that scale, then as
``score_is`` says. A ``predict_proba`` flavour or a bare Booster answers probabilities, so
a ``score_scale`` other than ``probability`` for one is refused as a contradiction.

Inputs take the signature's types: text goes to XGBoost and LightGBM as a pandas
``category`` (each library maps the levels to its training codes), and an integer column
arrives as integers when every value is whole. MLflow's pyfunc refuses a missing value in
an integer column, so a custom pyfunc leaves such rows unscored (NaN, counted in
``Scorer.unscored``) and scores the rest. A model of any flavour that fails on a batch
with missing values but scores its complete rows (a scikit-learn ``LogisticRegression``
takes no NaN) is taken to refuse missing values: from then on its rows with one are left
unscored the same way, rather than failing every batch. A numeric input read from a
connector's categorical feature (an integer code with few values) whose level the
reference lacks arrives as a placeholder text (``__unseen__``, ``__other__``): the number
is not kept, so it is a missing value, not text for a number. driftwatch's own river models
and recalibrated versions are pyfuncs too, unwrapped here so they score without MLflow's
schema checks.

The input columns come from the model's signature (or, for a river model, its encoder; for
a flavour logged without a signature, the columns it was fitted on);
each is read from the connector feature of the same name unless ``columns`` maps it to
another one. A column the connector does not provide is an error that names it, unless the
signature marks it optional (``ColSpec(..., required=False)``): then it is left out.

>>> import numpy as np, pandas as pd
>>> s = Scorer("pd", "3", "custom", ("income",), lambda x: np.full(len(x), 0.2),
...            columns={"income": "annual_income"})
>>> s.score(pd.DataFrame({"annual_income": [1.0, 2.0]})).tolist()
[0.2, 0.2]
>>> s.check(["age"])
Traceback (most recent call last):
...
driftwatch.errors.ActionError: model pd v3 needs input column 'income' (read from connector \
feature 'annual_income'), which the connector does not provide; features: age
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.mapping import DEFAULT_BAD
from driftwatch.errors import ActionError
from driftwatch.registry.flavours import (
    CATEGORY_FLAVOURS,
    PROBA_FLAVOURS,
    bad_class_index,
    load_flavour,
)
from driftwatch.registry.outputs import probabilities, read_output
from driftwatch.registry.reading import scale_name
from driftwatch.schema import PLACEHOLDER_LEVELS
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.yamlio import nearest

__all__ = ["SCORE_IS", "Scorer", "bad_class_index", "load_scorer"]

log = logging.getLogger(__name__)

#: Signature column types read as numbers; the others are passed as text.
_NUMERIC = {"double", "float", "long", "integer", "boolean"}
#: Signature types that want whole values, and the dtype they are passed as.
_WHOLE = {"long": np.int64, "integer": np.int32, "boolean": np.bool_}
#: A categorical flag's text levels, for a boolean signature column.
_FLAGS = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "y": 1.0, "n": 0.0}
#: Longest model error kept in an action's record (MLflow's quote the whole input frame).
_MAX_ERROR = 400
#: What a custom pyfunc's output may be the probability of (the policy's ``score_is``).
SCORE_IS = ("p_bad", "p_good")


@dataclass
class Scorer:
    """One model version that scores features (see the module doc)."""

    name: str
    version: str
    flavor: str
    inputs: tuple[str, ...]
    predict: Callable[[pd.DataFrame], np.ndarray]
    types: Mapping[str, str] = field(default_factory=dict)
    columns: Mapping[str, str] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    #: text inputs go as pandas ``category`` (XGBoost, LightGBM)
    categorical: bool = False
    #: the model enforces its signature (MLflow pyfunc): a missing value in an integer
    #: column cannot be passed, so that row is left unscored
    strict: bool = False
    #: rows left unscored so far (see ``strict`` and ``refuses_missing``)
    unscored: int = 0
    #: the model failed on missing values and scored the complete rows (see the module
    #: doc): its rows with a missing input are left unscored
    refuses_missing: bool = False
    #: label values of the bad class: which named output column is P(bad)
    bad: Sequence[Any] = DEFAULT_BAD
    #: input columns the signature marks optional: left out when the connector lacks them
    optional: frozenset[str] = frozenset()
    #: input columns the model was trained on as pandas categories (XGBoost, LightGBM):
    #: numbers reach it as a category of their values too
    category_inputs: frozenset[str] = frozenset()
    #: the training levels of category inputs, where the model keeps them (XGBoost 3.1+):
    #: a category of exactly these reaches it coded as in training, an unseen level missing
    levels: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"{self.name} v{self.version}"

    def feature_of(self, column: str) -> str:
        """The connector feature a model input column is read from."""
        return self.columns.get(column, column)

    def check(self, features: Iterable[str]) -> None:
        """Raise :class:`ActionError` naming every input column that ``features`` (the
        connector's) cannot fill, each with the mapping to its nearest feature, if any.

        >>> Scorer("pd", "2", "sklearn", ("Income", "Age", "bureau"), print).check(
        ...     ["income", "age"])
        Traceback (most recent call last):
        ...
        driftwatch.errors.ActionError: model pd v2 needs input columns 'Income', 'Age' and \
'bureau', which the connector does not provide; features: income, age; map them: \
--champion-column Income=income --champion-column Age=age (champion.columns in the service \
configuration)
        """
        have = list(features)
        lower = {h.lower(): h for h in have}
        lacking, maps = [], []
        for col in self.inputs:
            if self.feature_of(col) not in have and col not in self.optional:
                via = "" if col not in self.columns else (
                    f" (read from connector feature {self.feature_of(col)!r})")
                lacking.append(f"{col!r}{via}")
                near = nearest(self.feature_of(col).lower(), lower)
                if near is not None:
                    maps.append(f"--champion-column {col}={lower[near]}")
        if not lacking:
            return
        names = (lacking[0] if len(lacking) == 1
                 else f"{', '.join(lacking[:-1])} and {lacking[-1]}")
        hint = "" if not maps else (
            f"; map {'it' if len(maps) == 1 else 'them'}: {' '.join(maps)} "
            "(champion.columns in the service configuration)")
        raise ActionError(
            f"model {self.label} needs input column{'s' if len(lacking) > 1 else ''} {names}, "
            f"which the connector does not provide; features: {', '.join(have) or 'none'}"
            f"{hint}"
        )

    def model_input(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The model's input columns, in the signature's order and types, from ``frame``."""
        self.check(frame.columns)
        out: dict[str, Any] = {}
        for col in self.inputs:
            if self.feature_of(col) not in frame.columns:
                continue  # an optional column the connector lacks (check() let it through)
            values = frame[self.feature_of(col)]
            kind = self.types.get(col)
            if kind in _NUMERIC or (kind is None and pd.api.types.is_numeric_dtype(values)):
                if not pd.api.types.is_numeric_dtype(values):  # a code without its number
                    values = values.mask(values.isin(PLACEHOLDER_LEVELS))
                if kind == "boolean" and not pd.api.types.is_numeric_dtype(values):
                    values = values.astype(object).map(  # a flag's levels, as text
                        lambda v: _FLAGS.get(str(v).strip().lower(), v), na_action="ignore")
                x = pd.to_numeric(values, errors="coerce").to_numpy(np.float64)
                self._no_text(col, kind, values, x)
                whole = _WHOLE.get(kind or "")
                if col in self.category_inputs:  # integer codes trained as a category
                    out[col] = _number_category(x, self.levels.get(col))
                    continue
                # connectors carry numbers as float64; MLflow refuses float for an int column
                out[col] = x.astype(whole) if whole is not None and _is_whole(x) else x
            else:
                s = values.astype(object)
                s = s.where(s.notna(), None)
                out[col] = (pd.Categorical(s, categories=self.levels.get(col))
                            if self.categorical else s.to_numpy(object))
        return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))

    def _no_text(self, col: str, kind: str | None, values: pd.Series, x: np.ndarray) -> None:
        """Refuse text for a numeric input (a model trained on a category's codes, fed
        the connector's text levels): read as missing, it would score every row wrong."""
        lost = values.notna().to_numpy() & np.isnan(x)
        if lost.any():
            lost &= values.astype(str).str.strip().to_numpy() != ""  # a blank is missing
        if lost.any():
            seen = values[lost].iloc[0]
            raise ActionError(
                f"model {self.label} takes input column {col!r} as {kind or 'numbers'} (its "
                f"signature), but connector feature {self.feature_of(col)!r} holds text such "
                f"as {seen!r}: map the column to a feature that holds the model's codes "
                "(champion columns, --champion-column), or log the model on the text column"
            )

    def _complete(self, x: pd.DataFrame) -> np.ndarray:
        """Rows a strict model can take: whole values in every integer column."""
        ok = np.ones(len(x), dtype=bool)
        for col in x.columns:
            whole = _WHOLE.get(self.types.get(col) or "")
            if whole is not None and x[col].dtype == np.float64:
                v = x[col].to_numpy()
                ok &= np.isfinite(v) & (v == np.round(v))
        return ok

    def score(self, frame: pd.DataFrame) -> np.ndarray:
        """P(bad) per row of ``frame`` (connector feature names)."""
        if len(frame) == 0:
            return np.zeros(0)
        x = self.model_input(frame)
        rows = self._complete(x) if self.strict else np.ones(len(x), dtype=bool)
        if self.refuses_missing:
            rows &= _present(x)
        p = np.full(len(x), math.nan)
        if not rows.all():
            self._left_out(x, rows)
            x = x[rows].reset_index(drop=True)
            for col in _int_columns(self, x):
                x[col] = x[col].astype(_WHOLE[self.types[col]])
        if len(x):
            try:
                p[rows] = self._predict(x)
            except _Failed as failed:
                present = _present(x)
                if present.all() or not present.any():
                    raise failed.error from failed.__cause__
                try:  # the complete rows: do the missing values alone stop the model?
                    q = self._predict(x[present].reset_index(drop=True))
                except _Failed:
                    raise failed.error from failed.__cause__
                self.refuses_missing = True
                self._left_out(x, present)
                p[np.flatnonzero(rows)[present]] = q
        return np.clip(p, 0.0, 1.0)

    def _predict(self, x: pd.DataFrame) -> np.ndarray:
        """P(bad) of every row of the model input ``x``; :class:`_Failed` where the model
        raised, an :class:`ActionError` where its output cannot be read."""
        try:
            raw = self.predict(x)
        except ActionError as exc:  # its output read as declared (score_scale, score_is)
            raise ActionError(f"model {self.label} ({self.flavor}) {exc}") from None
        except Exception as exc:
            error = ActionError(f"model {self.label} ({self.flavor}) failed to score: "
                                f"{_brief(exc)}")
            raise _Failed(error) from exc
        try:
            return probabilities(raw, len(x), self.bad)
        except ActionError as exc:  # what it returned cannot be read as P(bad)
            raise ActionError(f"model {self.label} ({self.flavor}) {exc}") from None

    def _left_out(self, x: pd.DataFrame, rows: np.ndarray) -> None:
        """Count the rows of ``x`` not in ``rows`` as unscored, and say why now and then."""
        before = self.unscored
        self.unscored += int((~rows).sum())
        if not _said_again(before, self.unscored):  # first time, then at 10x, 100x, ...
            return
        if self.refuses_missing:
            cols = [c for c in x.columns if x[c][~rows].isna().any()]
            why = "a missing value, which the model refuses"
        else:
            cols = _int_columns(self, x)
            why = "a missing or fractional value in an integer column of its signature"
        log.warning("%s: %d of %d rows left unscored (%d so far): %s (%s)", self.label,
                    int((~rows).sum()), len(x), self.unscored, why,
                    ", ".join(c for c in self.inputs if c in cols))


class _Failed(Exception):
    """The model raised on a batch; ``error`` is what to report."""

    def __init__(self, error: ActionError) -> None:
        super().__init__(str(error))
        self.error = error


def _present(x: pd.DataFrame) -> np.ndarray:
    """Rows of a model input without a missing value."""
    return ~x.isna().any(axis=1).to_numpy()


def _said_again(before: int, now: int) -> bool:
    """Whether a running count that went from ``before`` to ``now`` deserves a log line:
    the first time, then each time it reaches another power of ten (a warning per batch
    would fill the log of a shadow scoring every live batch).

    >>> [n for n in range(1, 2000) if _said_again(n - 1, n)]
    [1, 10, 100, 1000]
    >>> _said_again(0, 50), _said_again(50, 60), _said_again(60, 150)
    (True, False, True)
    """
    if before <= 0:
        return now > 0
    return len(str(now)) > len(str(before))


def _int_columns(scorer: Scorer, x: pd.DataFrame) -> list[str]:
    return [c for c in x.columns if _WHOLE.get(scorer.types.get(c) or "") is not None
            and x[c].dtype == np.float64]


def _number_category(x: np.ndarray, levels: Sequence[Any] | None = None) -> pd.Categorical:
    """Numbers as a pandas category of their values (NaN missing), integers where every
    value is whole: a booster matches the levels, and their type, to its training data's.
    With the training ``levels`` known, of exactly those (a number outside them missing).

    >>> c = _number_category(np.array([3.0, np.nan, 1.0, 3.0]))
    >>> c.categories.dtype.kind, c.categories.tolist(), c.codes.tolist()
    ('i', [1, 3], [1, -1, 0, 1])
    >>> _number_category(np.array([3.0, 7.0, 1.0]), [1, 2, 3]).codes.tolist()
    [2, -1, 0]
    """
    if levels is not None:
        whole = _is_whole(x[np.isfinite(x)])
        values = [v if not whole else int(v) for v in x[np.isfinite(x)]]
        codes = np.full(len(x), -1, dtype=np.int64)
        index = {v: i for i, v in enumerate(levels)}
        codes[np.isfinite(x)] = [index.get(v, -1) for v in values]
        return pd.Categorical.from_codes(codes, categories=pd.Index(list(levels)))
    seen = np.isfinite(x)
    levels, codes = np.unique(x[seen], return_inverse=True)
    full = np.full(len(x), -1, dtype=np.int64)
    full[seen] = codes
    if _is_whole(levels):
        levels = levels.astype(np.int64)
    return pd.Categorical.from_codes(full, categories=pd.Index(levels))


def _is_whole(x: np.ndarray) -> bool:
    return bool(np.isfinite(x).all() and (x == np.round(x)).all())


def _brief(exc: BaseException) -> str:
    """A model's error in a line: MLflow's schema errors quote the whole input frame."""
    text = str(exc)
    _, sep, tail = text.rpartition("Error: ")
    if sep and "enforce schema" in text:
        text = tail
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ERROR else text[: _MAX_ERROR - 3] + "..."


def _signature(path: Path) -> tuple[tuple[str, ...], dict[str, str], frozenset[str]]:
    """The signature's input columns, their types, and those it marks optional."""
    from mlflow.models import Model

    sig = Model.load(str(path)).signature
    if sig is None or sig.inputs is None:
        return (), {}, frozenset()
    names, types, optional = [], {}, set()
    for spec in sig.inputs.inputs:
        name = getattr(spec, "name", None)
        if name is None:
            raise ActionError(
                f"the model at {path} has a tensor signature without column names: log it with "
                "a signature inferred from a DataFrame of the connector's features"
            )
        names.append(str(name))
        t = getattr(spec, "type", None)
        types[str(name)] = str(getattr(t, "name", t)).lower()
        if getattr(spec, "required", True) is False:
            optional.add(str(name))
    return tuple(names), types, frozenset(optional)


def load_scorer(
    path: str | Path,
    *,
    name: str,
    version: str,
    columns: Mapping[str, str] | None = None,
    resolve: Callable[[str], Scorer] | None = None,
    bad: Sequence[Any] = DEFAULT_BAD,
    score_is: str = "p_bad",
    score_scale: ScoreScale = PROBABILITY,
) -> Scorer:
    """A :class:`Scorer` for the model directory at ``path`` (an ``MLmodel`` inside).

    ``resolve(uri)`` loads the version a recalibrated model wraps; ``bad`` are the label
    values of the bad class, to find its ``predict_proba`` column; ``score_is`` what a
    custom pyfunc's ``predict`` or a bare Booster's returns (``p_good`` is turned into
    P(bad)), or, for a classifier whose classes are codes, that its higher class is the
    good one; ``score_scale`` the scale a custom pyfunc writes its output in (refused for
    a flavour that answers probabilities). driftwatch's own river and recalibrated
    versions answer P(bad) whatever they say.
    """
    if score_is not in SCORE_IS:
        raise ActionError(f"score_is must be one of {', '.join(SCORE_IS)}, found {score_is!r}")
    if score_scale.kind == "points" and score_is == "p_good":
        raise ActionError("scorecard points are read as P(bad) (higher points = safer): "
                          "score_is must be p_bad with score_scale points")
    import mlflow.pyfunc
    from mlflow.models import Model

    local = Path(path)
    try:
        flavors = Model.load(str(local)).flavors
    except Exception as exc:
        raise ActionError(f"{name} v{version}: no MLflow model at {local}: {exc}") from exc
    inputs, types, optional = _signature(local)
    cols = dict(columns or {})
    for flavor in PROBA_FLAVOURS:
        if flavor in flavors:
            predict, names, categories, meta, levels = load_flavour(flavor, local, bad,
                                                                    score_is)
            if not score_scale.is_probability:
                raise ActionError(_probabilities_already(name, version, flavor, meta,
                                                         score_scale))
            if not inputs and not names:
                raise ActionError(
                    f"model {name} v{version} ({flavor}) has no signature, and the model does "
                    "not name its input columns: log it with signature=infer_signature(features) "
                    "so driftwatch knows them"
                )
            return Scorer(name, version, flavor, inputs or names, predict,
                          types, cols, categorical=flavor in CATEGORY_FLAVOURS, bad=tuple(bad),
                          optional=optional,
                          meta={**meta, **({} if inputs else {"inputs": "model"})},
                          category_inputs=categories, levels=levels)
    try:
        pyfunc = mlflow.pyfunc.load_model(str(local))
    except Exception as exc:
        raise ActionError(f"cannot load {name} v{version}: {exc}") from exc
    scorer = _from_pyfunc(pyfunc, name, version, inputs, types, cols, resolve,
                          p_good=score_is == "p_good", bad=tuple(bad), scale=score_scale)
    if scorer.flavor == "pyfunc":
        scorer.optional = optional
    return scorer


def _from_pyfunc(
    pyfunc: Any,
    name: str,
    version: str,
    inputs: Sequence[str],
    types: Mapping[str, str],
    cols: Mapping[str, str],
    resolve: Callable[[str], Scorer] | None,
    *,
    p_good: bool = False,
    bad: Sequence[Any] = DEFAULT_BAD,
    scale: ScoreScale = PROBABILITY,
) -> Scorer:
    from driftwatch.registry.river_model import RiverModel

    try:
        inner = pyfunc.unwrap_python_model()
    except Exception:  # not a python_function model of ours
        inner = None
    river = getattr(inner, "model", None)
    if isinstance(river, RiverModel):
        if not scale.is_probability:
            raise ActionError(_probabilities_already(name, version, "river", {}, scale))
        said: dict[str, Any] = {"river": river}
        if p_good:  # it learns on the policy's labels, 1 = bad: no P(good) to read
            said["note"] = ("score_is: p_good is not applied: a driftwatch river model "
                            "answers P(bad), the probability of the bad label it learns on "
                            "(the policy's reference.label.bad); remove score_is: p_good "
                            "(--champion-score-is)")
        feats = tuple(river.encoder.features)
        return Scorer(name, version, "river", feats, river.predict_proba, {}, cols, said)
    base_uri = getattr(inner, "base_uri", None)
    if base_uri is not None and hasattr(inner, "calibrate"):
        if resolve is None:
            raise ActionError(f"{name} v{version} wraps {base_uri}: no registry to load it from")
        base = resolve(str(base_uri))
        return Scorer(name, version, "recalibrated", base.inputs,
                      lambda x, b=base, c=inner: c.calibrate(
                          probabilities(b.predict(x), len(x), b.bad)),
                      dict(base.types), dict(base.columns),
                      {"base_uri": base_uri, "base_version": base.version},
                      categorical=base.categorical, strict=base.strict, bad=base.bad,
                      optional=base.optional, category_inputs=base.category_inputs,
                      levels=base.levels)
    if not inputs:
        raise ActionError(
            f"model {name} v{version} has no signature: log it with a signature so "
            "driftwatch knows its input columns"
        )
    if p_good or not scale.is_probability:
        # read in predict, so a recalibrated version wrapping it sees P(bad) too
        meta: dict[str, Any] = {"score_is": "p_good"} if p_good else {}
        if not scale.is_probability:
            meta["score_scale"] = scale
        return Scorer(name, version, "pyfunc", tuple(inputs),
                      lambda x: _declared(pyfunc.predict(x), len(x), bad, p_good, scale),
                      dict(types), dict(cols), meta, strict=True, bad=bad)
    return Scorer(name, version, "pyfunc", tuple(inputs),
                  lambda x: pyfunc.predict(x), dict(types), dict(cols), strict=True, bad=bad)


def _declared(raw: Any, n: int, bad: Sequence[Any], p_good: bool,
              scale: ScoreScale) -> np.ndarray:
    """P(bad) of a champion that declared its output: read in its ``scale``, then, where
    it is P(good) (``score_is: p_good``), ``1 - p``, unless its output names its P(bad)
    column (a frame with ``p_bad`` and ``p_good``), which is read as it is.

    >>> from driftwatch.scorescale import LOG_ODDS
    >>> _declared(np.array([0.0, 2.0]), 2, (1,), True, LOG_ODDS).round(3).tolist()
    [0.5, 0.119]
    """
    p, by_name = read_output(raw, n, bad, scale)
    return p if by_name or not p_good else 1.0 - p


def _probabilities_already(name: str, version: str, flavor: str, meta: Mapping[str, Any],
                           scale: ScoreScale) -> str:
    """Why a declared ``score_scale`` contradicts a flavour that answers probabilities."""
    what = ("a bare Booster, whose predict gives the probability of label 1 (an XGBoost "
            "binary:logitraw booster's margins are read through the sigmoid already)"
            if meta.get("booster") else
            "a driftwatch river model, whose predict gives P(bad)" if flavor == "river"
            else "scored by predict_proba, which gives probabilities")
    return (f"model {name} v{version} ({flavor}) is {what}, but the champion declares "
            f"score_scale: {scale_name(scale)}: that reads a custom pyfunc's predict; "
            "remove score_scale (champion.score_scale, --champion-score-scale)")
