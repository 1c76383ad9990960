"""What a model's ``predict`` returned, read as one P(bad) per row.

A column of probabilities is read as it is; a ``predict_proba`` array of two classes at its
last column (the positive class, scikit-learn's order). A frame, a dict or a list of records
holds named columns: the one named after the bad class is read (``p_bad``, ``prob_default``,
``1``, ``p1``: the policy's bad label values, else ``1``/``bad``/``default``), or, of two
columns, the one beside a column named after the good class (``p_good``, ``p0``); a frame
of one or two columns whose names say neither is read at its last column. Three columns or
more that name no bad one (a ``predict_proba`` of three classes) say nothing of which is
P(bad) and are refused. Anything else, and values outside
[0, 1] (log-odds, a scorecard's points), is an :class:`~driftwatch.errors.ActionError`
that says what came back: clipping them would score every row 0 or 1 without a word. A
champion whose output is written in another scale declares it (``score_scale``, see
:mod:`driftwatch.registry.reading`): the column is then read in that scale.

>>> probabilities(np.array([[0.9, 0.1], [0.3, 0.7]]), 2).tolist()
[0.1, 0.7]
>>> probabilities(pd.DataFrame({"p_bad": [0.4, 0.6], "p_good": [0.6, 0.4]}), 2).tolist()
[0.4, 0.6]
>>> probabilities({"p0": [0.8, 0.7], "p1": [0.2, 0.3]}, 2).tolist()
[0.2, 0.3]
>>> probabilities(np.array([-2.1, 0.4]), 2)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ActionError: returned values from -2.1 to 0.4, not probabilities in [0, 1]...
>>> from driftwatch.scorescale import LOG_ODDS
>>> probabilities(np.array([-2.1, 0.4]), 2, scale=LOG_ODDS).round(3).tolist()
[0.109, 0.599]
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.mapping import DEFAULT_BAD, DEFAULT_GOOD, value_key
from driftwatch.errors import ActionError
from driftwatch.scorescale import PROBABILITY, ScoreScale

__all__ = ["bad_column", "named_bad_column", "probabilities", "read_output"]

#: Words around a class in an output column's name (``prob_default``, ``p_1``, ``score_bad``).
_NOISE = {"p", "pr", "prob", "proba", "probability", "probabilities", "score", "pred",
          "predicted", "prediction", "class", "of", "is", "y", "label", "target"}
#: What to return instead of an output of three columns or more that names no bad one.
_ONE_COLUMN = ("driftwatch reads one column as P(bad): return the bad class's, or name it "
               "after the bad class (p_bad, or one of the policy's reference.label.bad)")
#: Slack for a probability computed in float32 (1.0000001).
_SLACK = 1e-6


def _class_key(name: Any) -> str:
    """The class an output column's name stands for.

    >>> [_class_key(n) for n in ("p_bad", "prob_default", "p1", "proba_1", 1, "P(good)")]
    ['bad', 'default', '1', '1', '1', 'good']
    """
    words = [w for w in re.split(r"[^a-z0-9]+", value_key(name)) if w]
    words = [m[1] if (m := re.fullmatch(r"p(\d+)", w)) else w for w in words]
    kept = [w for w in words if w not in _NOISE]
    return "_".join(kept) if kept else "_".join(words)


def named_bad_column(names: Sequence[Any], bad: Sequence[Any] = DEFAULT_BAD) -> int | None:
    """Which of an output's named columns is P(bad) by its name, or None when the names
    do not say (see the module doc).

    >>> named_bad_column(["good", "bad"]), named_bad_column(["p_bad", "p_good"])
    (1, 0)
    >>> named_bad_column(["Fully Paid", "Charged Off"], ["Charged Off"])
    1
    >>> print(named_bad_column(["a", "b"]))
    None
    """
    keys = [_class_key(n) for n in names]
    for vocabulary in (bad, DEFAULT_BAD):
        wanted = {_class_key(v) for v in vocabulary}
        hits = [i for i, k in enumerate(keys) if k in wanted]
        if len(hits) == 1:
            return hits[0]
    if len(keys) == 2:
        good = {_class_key(v) for v in DEFAULT_GOOD}
        hits = [i for i, k in enumerate(keys) if k in good]
        if len(hits) == 1:
            return 1 - hits[0]
    return None


def bad_column(names: Sequence[Any], bad: Sequence[Any] = DEFAULT_BAD) -> int:
    """The column read as P(bad): the one named so, else the last.

    >>> bad_column(["p_bad", "p_good"]), bad_column(["a", "b"])
    (0, 1)
    """
    found = named_bad_column(names, bad)
    return len(names) - 1 if found is None else found


def _as_frame(raw: Any) -> pd.DataFrame | None:
    """Named columns out of a dict or a list of records; None for anything else."""
    if isinstance(raw, Mapping):
        try:
            return pd.DataFrame({k: np.ravel(np.asarray(v)) for k, v in raw.items()})
        except ValueError as exc:  # columns of unequal lengths
            raise ActionError(f"returned a dict whose columns cannot be read: {exc}") from None
    if isinstance(raw, list) and raw and all(isinstance(r, Mapping) for r in raw):
        return pd.DataFrame(raw)
    return None


def _kind(raw: Any) -> str:
    return type(raw).__name__ if not isinstance(raw, np.ndarray) else f"an array of {raw.dtype}"


def probabilities(raw: Any, n: int, bad: Sequence[Any] = DEFAULT_BAD,
                  scale: ScoreScale = PROBABILITY) -> np.ndarray:
    """The bad-class probability, one per row, out of what a model's predict returned for
    ``n`` rows; ``bad`` are the label values of the bad class, ``scale`` the one the
    output is written in (see the module doc)."""
    return read_output(raw, n, bad, scale)[0]


def read_output(raw: Any, n: int, bad: Sequence[Any] = DEFAULT_BAD,
                scale: ScoreScale = PROBABILITY) -> tuple[np.ndarray, bool]:
    """:func:`probabilities`, and whether a column's name said it is P(bad) (then a
    champion declared ``score_is: p_good`` is not flipped: the name is explicit)."""
    by_name = False
    frame = _as_frame(raw)
    if frame is not None:
        raw = frame
    if isinstance(raw, pd.DataFrame):
        if raw.shape[1] == 0:
            raise ActionError("returned a frame without columns")
        named = named_bad_column(list(raw.columns), bad)
        by_name = named is not None
        if named is None and raw.shape[1] > 2:
            raise ActionError(
                f"returned a frame of {raw.shape[1]} columns "
                f"({', '.join(map(str, raw.columns))}), none named after the bad class: "
                f"{_ONE_COLUMN}")
        raw = raw.iloc[:, raw.shape[1] - 1 if named is None else named]
    if isinstance(raw, pd.Series):
        raw = raw.to_numpy()
    try:
        a = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ActionError(f"returned {_kind(raw)}, not probabilities: driftwatch reads a "
                          "column of P(bad), a predict_proba array, or a frame or dict of "
                          "named columns") from None
    if a.ndim == 2 and a.shape[1] > 2:
        raise ActionError(f"returned {a.shape[1]} columns of class probabilities (a "
                          f"predict_proba of {a.shape[1]} classes?): {_ONE_COLUMN}")
    if a.ndim == 2:
        a = a[:, -1]
    if a.shape != (n,):
        raise ActionError(f"returned {a.shape} values for {n} rows")
    seen = a[np.isfinite(a)]
    if scale.kind == "percent":
        if len(seen) and (seen.min() < -_SLACK or seen.max() > 100 + _SLACK):
            raise ActionError(
                f"returned values from {seen.min():.4g} to {seen.max():.4g}, not percentages "
                "in [0, 100] as its score_scale: percent says")
        return np.clip(scale.to_probability(a), 0.0, 1.0), by_name
    if not scale.is_probability:  # log-odds and points: every finite value maps into [0, 1]
        return scale.to_probability(a), by_name
    if len(seen) and (seen.min() < -_SLACK or seen.max() > 1 + _SLACK):
        raise ActionError(
            f"returned values from {seen.min():.4g} to {seen.max():.4g}, not probabilities in "
            "[0, 1] (log-odds, a percentage or a scorecard's points?): declare the scale "
            "its output is written in, the champion's score_scale (log_odds, percent, "
            "points, or stream for the connector's score scale; --champion-score-scale), "
            "or log a pyfunc whose predict returns P(bad)"
        )
    return a, by_name
