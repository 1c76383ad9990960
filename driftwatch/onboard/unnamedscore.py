"""A stream score named like none: the one field of probabilities the reference lacks.

Public training tables come without the model's score, and a scoring job names its output
as it likes (``pred``, ``y_hat``, ``model_output``). Where no stream field is named like a
score, a field that no reference column maps to, whose values are all numbers in [0, 1]
with at least :data:`MIN_DISTINCT` distinct ones (a model's output, not a 0/1 flag or a
code), is most likely the score; the reference's own [0, 1] columns (Home Credit's
``EXT_SOURCE_1``..``3``, bureau scores that are features) never are. It is taken only when
it is the only such field and the sample's outcomes confirm it: its values separate bad
from good by :data:`CLEAR_Z` standard errors or more (higher for bad: P(bad); lower:
P(good)). Otherwise ``init`` names the candidates on the score's line with the flag that
takes one, and takes none.

>>> rows = {"pred": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95] * 4}
>>> labels = [v > 0.5 for v in rows["pred"]]
>>> unnamed_score(["pred"], rows.get, labels).path
'pred'
>>> unnamed_score(["pred"], rows.get, [None] * 40).path is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from driftwatch.onboard.infer import leaf
from driftwatch.onboard.outputs import separation
from driftwatch.onboard.roles import present

__all__ = ["CLEAR_Z", "MIN_DISTINCT", "UnnamedScore", "lacking", "score_candidates",
           "unnamed_score"]

#: Distinct values a field needs to pass for a model's output (a code or a flag has fewer)
MIN_DISTINCT = 10
#: Standard errors from no separation (AUC 0.5) the sample's outcomes must show
CLEAR_Z = 3.0
#: Labelled rows of each class the check needs before it can confirm anything
_MIN_EACH = 5


@dataclass(frozen=True, slots=True)
class UnnamedScore:
    """What ``init`` makes of the stream's fields of probabilities the reference lacks:
    ``path`` the one taken (None: none), ``score_is`` how it reads, ``why`` for the score's
    line (empty where there is no candidate)."""

    path: str | None
    score_is: str
    why: str


def score_candidates(paths: Sequence[str], values_of: Callable[[str], list[Any]]) -> list[str]:
    """The fields of ``paths`` whose sample values are all numbers in [0, 1], with at
    least :data:`MIN_DISTINCT` distinct ones.

    >>> score_candidates(["a", "flag", "amt"], {"a": [i / 20 for i in range(20)],
    ...                  "flag": [0, 1] * 10, "amt": list(range(20))}.get)
    ['a']
    """
    out = []
    for p in paths:
        got = [v for v in values_of(p) if present(v)]
        if not got or not all(isinstance(v, int | float) and not isinstance(v, bool)
                              for v in got):
            continue
        arr = np.asarray(got, dtype=np.float64)
        if arr.min() >= 0 and arr.max() <= 1 and len(np.unique(arr)) >= MIN_DISTINCT:
            out.append(p)
    return out


def unnamed_score(paths: Sequence[str], values_of: Callable[[str], list[Any]],
                  labels: Sequence[bool | None]) -> UnnamedScore:
    """The stream's score among ``paths`` (fields no reference column maps to and no other
    role holds), read off the sample's ``labels`` (True bad, False good, None unknown, row
    for row with ``values_of``'s lists)."""
    found = score_candidates(paths, values_of)
    if not found:
        return UnnamedScore(None, "p_bad", "")
    if len(found) > 1:
        return UnnamedScore(None, "p_bad", (
            f"{', '.join(found)} hold numbers in [0, 1] that the reference lacks; if one is "
            "the model's score, pass --score-field NAME"))
    path = found[0]
    x = np.array([float(v) if present(v) else np.nan for v in values_of(path)])
    y = np.array([np.nan if lab is None else float(lab) for lab in labels])
    ok = np.isfinite(x) & np.isfinite(y)
    on_bad, on_good = x[ok & (y == 1)], x[ok & (y == 0)]
    take = f"if it is the model's score, pass --score-field {path}"
    if min(len(on_bad), len(on_good)) < _MIN_EACH:
        return UnnamedScore(None, "p_bad", (
            f"{path} holds numbers in [0, 1] that the reference lacks, but the sample has no "
            f"outcomes to confirm it is the score: {take}"))
    auc, z = separation(on_bad, on_good)
    if abs(z) < CLEAR_Z:
        return UnnamedScore(None, "p_bad", (
            f"{path} holds numbers in [0, 1] that the reference lacks, but they do not "
            f"separate the sample's outcomes (AUC {auc:.2f} for bad on {int(ok.sum())} "
            f"rows): not taken; {take}"))
    return UnnamedScore(path, "p_good" if auc < 0.5 else "p_bad", (
        "named like no score, but the one field of numbers in [0, 1] the reference lacks, "
        f"and its values separate the sample's outcomes (AUC {auc:.2f} for bad on "
        f"{int(ok.sum())} rows); --score-field none leaves it out"))


def lacking(columns: Sequence[str], paths: Sequence[str], taken: set[str]) -> list[str]:
    """The stream ``paths`` that no reference column of ``columns`` maps to (as a feature
    is found: the same path, its last segment, or its path with '_' for '.'), less the
    ``taken`` ones (the id, the time).

    >>> lacking(["EXT_SOURCE_1", "app_id"], ["app_id", "EXT_SOURCE_1", "model.pred"],
    ...         {"app_id"})
    ['model.pred']
    """
    names = set(columns)
    return [p for p in paths if p not in taken and p not in names
            and leaf(p) not in names and p.replace(".", "_") not in names]
