"""What the model's outputs mean: P(bad) or P(good) for the score, approvals for a decision."""

from __future__ import annotations

from typing import Any

import pandas as pd

from driftwatch.onboard.infer import name_rank
from driftwatch.onboard.roles import APPROVE, SCORE, present
from driftwatch.windows.conventions import norm_value

__all__ = ["approve_values", "named_good", "points_scale", "score_is", "score_line",
           "score_scale", "separation"]

#: How many standard errors from 0.5 the AUC must be before the labels decide whether a
#: score is P(bad) or P(good)
_CLEAR_Z = 3.0


def score_line(stream: str | None, ref: str | None, score_is: str,
               why: str | None) -> tuple[str, str]:
    """The one line ``init`` says about the score: the stream's field, with the reference's
    column when it is named otherwise, and how it reads.

    >>> score_line("score", "score", "p_bad", "P(bad): mean 0.6 on bad rows (AUC 0.80)")
    ('score: score', 'P(bad): mean 0.6 on bad rows (AUC 0.80)')
    >>> score_line("p_bad", "score", "p_bad", "P(bad): mean 0.6 on bad rows (AUC 0.80)")
    ('score: p_bad (reference: score)', 'P(bad): mean 0.6 on bad rows (AUC 0.80)')
    >>> score_line("pd", None, "p_bad", None)[1]
    'P(bad); the reference has no score column, so its stability is not watched'
    >>> score_line(None, "score", "p_bad", "P(bad), as --score-is says")
    ('score: none (reference: score)', 'no field in [0, 1] named like a score in the \
sample; the reference column reads as P(bad), as --score-is says')
    """
    if stream is None:
        return (f"score: none (reference: {ref})" if ref else "score: none",
                "no field in [0, 1] named like a score"
                + (f" in the sample; the reference column reads as {why}" if ref else ""))
    if ref is None:
        return (f"score: {stream}", f"P({'good' if score_is == 'p_good' else 'bad'}); the "
                "reference has no score column, so its stability is not watched")
    return (f"score: {stream}" + ("" if stream == ref else f" (reference: {ref})"),
            why or f"P({'good' if score_is == 'p_good' else 'bad'})")


def named_good(name: str) -> bool:
    """Whether a score's name says it is P(good) (``p_good``, ``prob_good``), the rule
    used wherever no label can tell.

    >>> named_good("p_good"), named_good("pd"), named_good("Good_Prob")
    (True, False, True)
    """
    return "good" in name.lower()


def score_is(ref: pd.DataFrame, col: str, label: str | None,
             bad_values: list[Any]) -> tuple[str, str]:
    """Whether reference column ``col`` is P(good) or P(bad), and why: read off the label
    column ``label`` (``bad_values`` its bad ones), else off the name."""
    if label is None:
        good_name = named_good(col)
        return (("p_good", "P(good): the name says good") if good_name else
                ("p_bad", "P(bad): no label to check it against (--score-is to change)"))
    y = ref[label].map(lambda v: norm_value(v) if present(v) else None)
    bad = {norm_value(v) for v in bad_values}
    s = pd.to_numeric(ref[col], errors="coerce")
    on_bad, on_good = s[y.isin(bad)].dropna(), s[y.notna() & ~y.isin(bad)].dropna()
    m_bad, m_good = on_bad.mean(), on_good.mean()
    means = f"mean {m_bad:.3f} on bad rows, {m_good:.3f} on good ones"
    auc, z = separation(on_bad.to_numpy(), on_good.to_numpy())
    if abs(z) < _CLEAR_Z:  # the labels cannot tell: the usual convention, said aloud
        good_name = named_good(col)
        return ("p_good" if good_name else "p_bad",
                f"P({'good' if good_name else 'bad'}): {means}, too close to tell (AUC "
                f"{auc:.2f}), so {'the name' if good_name else 'the usual'}; --score-is to "
                "change")
    is_good = auc < 0.5
    return ("p_good" if is_good else "p_bad",
            f"P({'good' if is_good else 'bad'}): {means} (AUC {auc:.2f})")


def points_scale(ref: pd.DataFrame, cols: list[str]) -> str | None:
    """What ``init`` says of a reference column named like a score whose numbers lie
    outside [0, 1] (a scorecard's points, 300 to 850): a feature, not the score.

    >>> points_scale(pd.DataFrame({"score": [300, 720, 850]}), ["score"])[:45]
    "'score' is named like a score but holds 300 t"
    """
    for c in cols:
        s = pd.to_numeric(ref[c], errors="coerce").dropna()
        if name_rank(c, *SCORE) >= 2 and len(s) and (s.min() < 0 or s.max() > 1):
            return (f"{c!r} is named like a score but holds {s.min():g} to {s.max():g}, not a "
                    "probability: it is watched as a numeric feature (its PSI is the "
                    "scorecard's stability); init cannot know a card's scaling: for the "
                    "performance and calibration signals, map it as the score with "
                    f"`score: {{path: {c}, points: {{base: ..., odds: ..., pdo: ...}}}}` in "
                    "the connector and drop it from the features (see the README)")
    return None


def separation(on_bad: Any, on_good: Any) -> tuple[float, float]:
    """The AUC of the score for telling bad rows from good ones, and its distance from 0.5
    in standard errors under no separation (Mann-Whitney).

    >>> auc, z = separation([0.9, 0.8, 0.7], [0.1, 0.2, 0.3, 0.75])
    >>> round(auc, 3), z > 0
    (0.917, True)
    """
    nb, ng = len(on_bad), len(on_good)
    if nb == 0 or ng == 0:
        return 0.5, 0.0
    ranks = pd.Series([*on_bad, *on_good]).rank().to_numpy()
    auc = (ranks[:nb].sum() - nb * (nb + 1) / 2) / (nb * ng)
    se = ((nb + ng + 1) / (12 * nb * ng)) ** 0.5
    return float(auc), float((auc - 0.5) / se)


def approve_values(values: list[Any], given: list[str]) -> list[Any]:
    """The decision values that approve: those ``--approve`` gives, else those named like
    an approval."""
    distinct = sorted({v for v in values if present(v)}, key=str)
    want = {norm_value(g) for g in given} if given else APPROVE
    return [v for v in distinct if norm_value(v) in want]


def score_scale(values: list[Any]) -> tuple[str | None, str]:
    """How a stream's score field writes the probability: ``"probability"`` (in [0, 1]),
    ``"percent"`` (0 to 100, some above 1) or None (neither: log-odds, points), with the
    values' range for ``init``'s line.

    >>> score_scale([0.1, 0.93]), score_scale([12.5, 88.0, 0.4]), score_scale([-2.1, 1.3])
    (('probability', '0.1 to 0.93'), ('percent', '0.4 to 88'), (None, '-2.1 to 1.3'))
    """
    got = pd.to_numeric(pd.Series([v for v in values if present(v)], dtype=object),
                        errors="coerce").dropna()
    if got.empty:
        return "probability", ""
    lo, hi = float(got.min()), float(got.max())
    span = f"{lo:g} to {hi:g}"
    if lo >= 0 and hi <= 1:
        return "probability", span
    if lo >= 0 and hi <= 100:
        return "percent", span
    return None, span
