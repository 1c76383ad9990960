"""A ``predict_proba`` row standing for the stream's score: which field, which position.

A stream that carries no score may carry the model's class probabilities, one list per
record summing to 1. The score is the probability of the class the reference's score
means (bad, or good for a P(good) score), at its position in scikit-learn's order (the
class labels sorted). Two classes are read off the label's two values; more (a model of
``default`` / ``good`` / ``late``) only where the reference's label holds exactly as many
values, one of them on the score's side; else the position is the user's
(``--proba-at N``), and ``init`` stops with that fix rather than guess.

>>> proba_fields(["id", "p"], {"id": [1, 2], "p": [[0.2, 0.5, 0.3], [0.1, 0.1, 0.8]]}.get)
[('p', 3)]
>>> at, why = proba_position("p", 3, ["default"], ["good"], ["late"], "p_bad", None, "s.jsonl")
>>> at, why.split(", the ")[-1]
(0, "probability of the bad class 'default'")
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from driftwatch.errors import ConfigError
from driftwatch.onboard.roles import present

__all__ = ["class_order", "proba_fields", "proba_position"]

_ORDINAL = ("first", "second", "third", "fourth", "fifth")


def class_order(v: Any) -> tuple[int, Any]:
    """scikit-learn's order of class labels (``np.unique``): numbers and booleans by value,
    then text."""
    if isinstance(v, bool | int | float):
        return 0, float(v)
    return 1, str(v)


def _row(v: Any) -> int | None:
    """The length of a list of two or more probabilities summing to 1; None otherwise."""
    if not (isinstance(v, list) and len(v) >= 2 and all(
            isinstance(x, int | float) and not isinstance(x, bool) and 0 <= x <= 1
            for x in v) and abs(sum(v) - 1) < 1e-6):
        return None
    return len(v)


def proba_fields(paths: Sequence[str], vals: Callable[[str], list[Any]]
                 ) -> list[tuple[str, int]]:
    """The fields whose every sample value is a list of class probabilities of one length,
    with that length."""
    out = []
    for p in paths:
        got = [v for v in vals(p) if present(v)]
        lengths = {_row(v) for v in got}
        if got and len(lengths) == 1 and None not in lengths:
            out.append((p, lengths.pop()))
    return out


def proba_position(path: str, k: int, bad: Sequence[Any], good: Sequence[Any],
                   pending: Sequence[Any], score_is: str, given: int | None, where: str
                   ) -> tuple[int, str]:
    """The position in ``path``'s lists of ``k`` probabilities of the class the score is
    the probability of, and why (for init's score line): ``given`` (``--proba-at``), else
    read off the reference's label values (``bad``, ``good``, ``pending``).
    :class:`~driftwatch.errors.ConfigError` for a ``given`` outside the list, or ``k`` of
    three or more classes that the label values do not settle."""
    side = "good" if score_is == "p_good" else "bad"
    if given is not None:
        if not 0 <= given < k:
            raise ConfigError(f"--proba-at {given} is outside {path}'s lists of {k} class "
                              f"probabilities", file=where,
                              hint=f"give a position from 0 to {k - 1}")
        return given, f"the {_nth(given)} of {k} class probabilities (from --proba-at)"
    want = good if score_is == "p_good" else bad
    classes = sorted([*bad, *good] if k == 2 else [*bad, *good, *pending], key=class_order)
    if len(classes) == k and len(want) == 1:
        at = classes.index(want[0])
        if k == 2:
            return at, (f"the {_nth(at)} of two class probabilities (a predict_proba row), "
                        f"the {side} class's")
        return at, (f"the {_nth(at)} of {k} class probabilities (a predict_proba row, "
                    f"classes in scikit-learn's order: {', '.join(map(repr, classes))}), "
                    f"the probability of the {side} class {want[0]!r}")
    if k == 2:  # no label to read it off: predict_proba's class 1, as a 0/1 model writes
        return 1, (f"the second of two class probabilities (a predict_proba row), the {side} "
                   "class's")
    if not classes:
        why = "the reference has no label to read the classes off"
    elif len(classes) != k:
        why = f"the reference's label has {len(classes)} values"
    else:
        why = f"the reference's label has {len(want)} {side} values"
    raise ConfigError(
        f"{path} holds {k} class probabilities (a predict_proba row) and init cannot tell "
        f"which one is the {side} class's, the score: {why}", file=where,
        hint=f"pass --proba-at N, the position (0 to {k - 1}) of the {side} class's "
        "probability in the list (scikit-learn's order: the class labels sorted)")


def _nth(i: int) -> str:
    return _ORDINAL[i] if i < len(_ORDINAL) else f"number {i} (from 0)"
