"""The champion's trial run at start: it scores a sample of the reference table, so what
would otherwise surface as a failed or wrong action weeks later is a clear error now.

It must score the sample (its output readable as P(bad): see
:mod:`driftwatch.registry.outputs`), give more than class labels (a flavour whose pyfunc
``predict`` returns 0/1), and rank the reference's bad rows above its good ones: scores
that rank them clearly the other way (an AUC more than three standard errors below 0.5,
the test ``init`` reads a score column's meaning by) are P(good) read as P(bad), the
mistake that turns every comparison and recalibration upside down.

Where the reference carries a score column (the production model's P(bad) when the sample
was taken), the champion's scores are compared with it: a rank correlation below 0.8 or a
median absolute difference above 0.1 is said through ``note`` (a ``note:`` line of a
replay, a warning of the daemon), naming the figures and what to check, without stopping
the start: a ``champion`` alias on the wrong version or columns mapped wrongly show there,
but so would a newer version than the one that scored the reference.

>>> import numpy as np, pandas as pd
>>> from driftwatch.registry.scorer import Scorer
>>> ref = pd.DataFrame({"x": np.linspace(0, 1, 400), "label": [0.0, 1.0] * 200})
>>> ref.loc[ref.x > 0.5, "label"] = 1.0
>>> good = Scorer("pd", "1", "pyfunc", ("x",), lambda x: 1 - x["x"].to_numpy())
>>> trial_score(good, ref, "models:/pd@champion")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
driftwatch.errors.ActionError: models:/pd@champion: its scores rank the reference's bad rows \
below its good ones (AUC 0.17 on 400 labelled rows): it returns P(good)? ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from driftwatch.errors import ActionError
from driftwatch.registry.scorer import Scorer
from driftwatch.sentinels import MissingValues

__all__ = ["TRIAL_ROWS", "reference_sample", "score_agreement", "trial_score"]

#: Reference rows the champion scores at start.
TRIAL_ROWS = 2000
#: Standard errors below 0.5 an AUC must lie before the scores count as inverted.
_CLEAR_Z = 3.0
#: Fewest rows of each class the orientation test needs.
_MIN_CLASS = 20
#: Below this rank correlation with the reference's scores, the two clearly disagree.
_AGREE_RHO = 0.8
#: Above this median absolute difference of P(bad), the two clearly disagree.
_AGREE_GAP = 0.1
#: Fewest rows scored by both that the comparison needs.
_MIN_AGREE = 50


def reference_rows(path: str | Path, conventions: object | None, *,
                   formats: Mapping[str, str] | None = None,
                   score_scale: object | None = None,
                   missing: MissingValues | None = None) -> pd.DataFrame:
    """The reference table at ``path`` (a headerless CSV by the ``conventions``' names)
    as a model sees its rows live: its label read as
    1 bad / 0 good through the policy's ``conventions``, the columns a connector reads
    as numbers written as text (``formats``: ``format: percent`` or ``money``, by feature)
    as those numbers, its score column written in the connector's ``score_scale``
    (log-odds, points) as the probability, as the monitor reads it, and the connector's
    ``missing`` values (``-999``, ``"?"``) of its features as missing, as the decoder
    reads them live."""
    from dataclasses import replace

    from driftwatch.csvdecimal import frame_decimal
    from driftwatch.windows.conventions import text_number_column
    from driftwatch.windows.profile import read_reference_table

    df = read_reference_table(path, getattr(conventions, "names", None))
    decimal = frame_decimal(df)
    if conventions is not None:
        if score_scale is not None:
            conventions = replace(conventions, score_scale=score_scale)  # type: ignore[type-var]
        df = conventions.canonical(df)  # type: ignore[attr-defined]
    for col, fmt in (formats or {}).items():
        if col in df.columns:
            df[col] = text_number_column(df[col], col, fmt, decimal)
    if missing is not None and not missing.is_empty:
        df = _missing_as_null(df, missing)
    return df


#: Columns of canonical reference rows that are no feature: the connector's missing values
#: are a feature's (its ``default`` applies to every feature, never to these).
_NOT_FEATURES = frozenset({"label", "score", "decision", "exposure"})


def _missing_as_null(df: pd.DataFrame, missing: MissingValues) -> pd.DataFrame:
    """``df`` with each feature's declared missing values as null: its numbers as NaN in a
    numeric column, its texts as None in a text column (a copy where any)."""
    from driftwatch.schema import level_text

    out = df.copy()
    for c in out.columns:
        if c in _NOT_FEATURES:
            continue
        col = out[c]
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            vals = col.to_numpy(dtype=np.float64, na_value=np.nan)
            out[c] = missing.mask_numbers(vals, str(c))
        elif texts := missing.texts(str(c)) | missing.number_texts(str(c)):
            hit = col.map(lambda v, t=texts: v is not None and v == v and (
                level_text(v) in t or (isinstance(v, str) and v.strip() in t)))
            out[c] = col.where(~hit.astype(bool), None)
    return out


def reference_sample(path: str | Path | None, conventions: object | None,
                     rows: int = TRIAL_ROWS, *,
                     formats: Mapping[str, str] | None = None,
                     score_scale: object | None = None) -> pd.DataFrame | None:
    """Up to ``rows`` rows (a seeded sample) of :func:`reference_rows`; None for a saved
    profile, which holds no rows."""
    if path is None or Path(path).name.endswith((".json", ".json.gz")):
        return None
    df = reference_rows(path, conventions, formats=formats, score_scale=score_scale)
    if len(df) > rows:
        df = df.sample(rows, random_state=0)
    return df.reset_index(drop=True)


def _separation(p: np.ndarray, y: np.ndarray) -> tuple[float, float, int]:
    """AUC of ``p`` for bad rows (``y == 1``), its distance from 0.5 in standard errors
    under no separation (Mann-Whitney), and the rows it was measured on."""
    ok = np.isfinite(p) & np.isfinite(y)
    p, bad = p[ok], y[ok] > 0.5
    nb, ng = int(bad.sum()), int((~bad).sum())
    if nb < _MIN_CLASS or ng < _MIN_CLASS:
        return math.nan, 0.0, nb + ng
    ranks = pd.Series(p).rank().to_numpy()
    auc = (ranks[bad].sum() - nb * (nb + 1) / 2) / (nb * ng)
    se = math.sqrt((nb + ng + 1) / (12 * nb * ng))
    return float(auc), float((auc - 0.5) / se), nb + ng


def score_agreement(p: np.ndarray, logged: np.ndarray) -> tuple[float, float, int]:
    """Spearman rank correlation of ``p`` and ``logged``, the median of their absolute
    differences, and the rows scored by both; NaNs with fewer than 50 such rows or a
    constant side.

    >>> score_agreement(np.linspace(0, 1, 60), np.linspace(0, 1, 60) ** 2)[0]
    1.0
    """
    ok = np.isfinite(p) & np.isfinite(logged)
    p, logged = p[ok], logged[ok]
    n = len(p)
    if n < _MIN_AGREE or np.ptp(p) == 0 or np.ptp(logged) == 0:
        return math.nan, math.nan, n
    ranks = np.corrcoef(pd.Series(p).rank().to_numpy(), pd.Series(logged).rank().to_numpy())
    return float(ranks[0, 1]), float(np.median(np.abs(p - logged))), n


def _disagreement(p: np.ndarray, reference: pd.DataFrame, scorer: Scorer,
                  uri: str) -> str | None:
    """What the note says where the champion's scores clearly disagree with the
    reference's score column (see the module doc), else None."""
    if "score" not in reference.columns or any(scorer.feature_of(c) == "score"
                                               for c in scorer.inputs):
        return None  # no score column, or a feature of that name kept it (see canonical)
    logged = pd.to_numeric(reference["score"], errors="coerce").to_numpy(np.float64)
    rho, gap, n = score_agreement(p, logged)
    if math.isnan(rho) or (rho >= _AGREE_RHO and gap <= _AGREE_GAP):
        return None
    return (f"{uri}: its scores disagree with the reference's score column on {n} rows "
            f"(rank correlation {rho:.2f}, median absolute difference {gap:.3f} in P(bad)): "
            "check that the champion alias points at the version that scored the reference "
            "and that its columns map the right connector features; expected only if "
            "another version scored the reference")


def trial_score(scorer: Scorer, reference: pd.DataFrame, uri: str,
                note: Callable[[str], None] | None = None) -> float | None:
    """Score ``reference`` (connector feature names, ``label`` 1 bad / 0 good, ``score``
    P(bad) where it has one) with the champion named ``uri``; raise :class:`ActionError`
    as the module doc says, and pass ``note`` what it says of a clear disagreement with the
    reference's scores. Returns the AUC on the labelled rows (None without enough of
    them)."""
    if scorer.flavor == "river" or any(scorer.feature_of(c) not in reference.columns
                                       for c in scorer.inputs):
        return None  # driftwatch's own model; or a reference without the connector's names
    unscored = scorer.unscored
    try:
        p = scorer.score(reference)
    except ActionError as exc:
        raise ActionError(f"{uri}: cannot score the reference sample: {exc}") from None
    finally:
        scorer.unscored = unscored  # live rows only
    seen = p[np.isfinite(p)]
    if len(seen) >= _MIN_CLASS and np.isin(seen, (0.0, 1.0)).all():
        raise ActionError(
            f"{uri}: it returned only 0 and 1 on {len(seen)} reference rows: class labels, "
            "not probabilities (the pyfunc predict of a classifier flavour gives the class): "
            "log a pyfunc whose predict returns P(bad)"
        )
    auc, z, n = (_separation(p, reference["label"].to_numpy(np.float64))
                 if "label" in reference.columns else (math.nan, 0.0, 0))
    if math.isnan(auc) or z > -_CLEAR_Z:
        said = _disagreement(p, reference, scorer, uri)
        if said is not None and note is not None:
            note(said)
        return None if math.isnan(auc) else auc
    ranked = (f"rank the reference's bad rows below its good ones (AUC {auc:.2f} on {n} "
              "labelled rows)")
    if scorer.flavor in ("pyfunc", "recalibrated") or scorer.meta.get("booster"):
        scale = scorer.meta.get("score_scale")
        if scale is not None and scale.kind == "points":
            raise ActionError(f"{uri}: its scores, read as {scale.describe()} (score_scale: "
                              f"points), {ranked}: are its points higher for riskier "
                              "applicants? driftwatch reads points as higher = safer; log a "
                              "pyfunc whose predict returns such points or P(bad)")
        read = "" if scale is None else f" in {scale.kind} (score_scale: {scale.kind})"
        if scorer.meta.get("score_is") == "p_good":
            raise ActionError(f"{uri}: its scores, read{read} as P(good) (score_is: p_good), "
                              f"{ranked}: it returns P(bad)? drop score_is: p_good")
        raise ActionError(f"{uri}: its scores{', read' + read + ',' if read else ''} {ranked}: "
                          "it returns P(good)? declare score_is: p_good (--champion-score-is "
                          "p_good)")
    raise ActionError(_inverted_classes(scorer, uri, ranked))


def _inverted_classes(scorer: Scorer, uri: str, ranked: str) -> str:
    """What to say of a ``predict_proba`` flavour whose column read as P(bad) ``ranked``
    the reference upside down: for classes that are codes, what to declare (see
    :mod:`driftwatch.registry.flavours`); for classes that name themselves, the coding.

    >>> s = Scorer("pd", "1", "sklearn", ("x",), print,
    ...            meta={"codes": True, "classes": [0, 1], "bad_class": 1})
    >>> _inverted_classes(s, "models:/pd@champion", "rank ...")  # doctest: +ELLIPSIS
    "models:/pd@champion: its predict_proba column of class 1 (read as the bad class...\
declare score_is: p_good (--champion-score-is p_good) to read class 0 as P(bad)"
    """
    meta = scorer.meta
    read = meta.get("bad_class")
    column = f"column of class {read!r}" if read is not None else "column of the bad class"
    if len(meta.get("classes", ())) > 2:  # no other class to declare (see flavours)
        return (f"{uri}: its predict_proba {column} (of its classes "
                f"{', '.join(map(repr, meta['classes']))}: the one the policy's "
                f"reference.label.bad names) {ranked}: was it trained with another coding "
                "of the label? log a pyfunc whose predict returns P(bad)")
    if not meta.get("codes"):
        return (f"{uri}: its predict_proba {column} (the policy's reference.label.bad) "
                f"{ranked}: was it trained with another coding of the label?")
    other = next((c for c in meta.get("classes", ()) if c != read), None)
    if meta.get("score_is") == "p_good":
        return (f"{uri}: its predict_proba {column} (read as the bad class because of "
                f"score_is: p_good) {ranked}: was it trained with {read!r} = good after "
                f"all ({other!r} = bad)? drop score_is: p_good (--champion-score-is)")
    return (f"{uri}: its predict_proba {column} (read as the bad class: the policy's "
            f"reference.label.bad) {ranked}: was it trained with {read!r} = good (a "
            "repaid flag, where the stream's labels say 1 = default)? declare score_is: "
            f"p_good (--champion-score-is p_good) to read class {other!r} as P(bad)")
