"""The roles a field can play (id, time, score, label, decision, exposure): the names
that suggest each, and the value checks a candidate must pass.

>>> score_check(lambda n: [0.1, 0.5, 0.9])("p")
'numbers in [0, 1]'
>>> unique_check(lambda n: ["a", "a"])("id") is None
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from driftwatch.onboard.digitdates import DIGIT_FORMATS, digit_formats
from driftwatch.onboard.infer import (
    COUNT_NAMES,
    TIME_FORMATS,
    epoch_text_unit,
    name_rank,
    text_formats,
    time_unit,
)
from driftwatch.onboard.outcomewords import word_side

__all__ = ["APPROVE", "DECISION", "EXPOSURE", "ID", "LABEL", "PREDICTED", "SCORE", "TIME",
           "VERSION",
           "decision_check", "exposure_check", "label_check", "outcome_texts", "present",
           "score_check",
           "shown", "time_check", "two_values", "unique_check"]

ID = (("id", "event_id", "uuid", "request_id", "application_id", "transaction_id"),
       (r".+_id", r".+id"), (r".+_id_.+",))  # Home Credit's SK_ID_CURR
# epoch counts named by their unit (Debezium's ts_ms, ts_us) or as epochs rank below an
# exact name: a change feed's ts_ms is when the row was captured, its created_at the event
# a count of occurrences is no time: Give Me Some Credit's NumberOfTimes90DaysLate and
# NumberOfTime30-59DaysPastDueNotWorse, a num_times_late, a login_time_count
TIME = (("ts", "time", "timestamp", "event_time", "datetime", "created_at"),
        (r".+_ts", r".+_at", r".*time.*", r".*date.*", r"epoch.*", r".+_epoch", r".+_ms",
         r".+_us", r".+_ns"), (),
        COUNT_NAMES)
SCORE = (("score", "pd", "p_bad", "p_good", "prob", "probability", "proba", "prediction"),
          (r".*score.*", r"p_.+", r"prob.*", r".+_prob", r"pd_.+", r".*risk.*",
           r".+_pd", r".+_proba", r".+_proba_.+", r".+_probability"), ())  # sklearn's y_pred_proba
LABEL = (("label", "target", "y", "bad", "is_bad", "default", "defaulted", "outcome",
           "fraud", "is_fraud", "chargeback", "loan_status"),
         (r".*default.*", r"is_.*bad", r".*label.*", r".*target.*", r".*fraud.*"), ())
DECISION = (("decision", "approved", "approve", "approval"),
             (r".*decision.*", r".*approv.*"), ())
EXPOSURE = (("exposure", "ead", "exposure_at_default"),
             (r".*exposure.*",), (r".*amount", r".*balance"))
VERSION = (("model_version", "version"), (), ())
#: The model's predicted class (scikit-learn's ``y_pred``): an output beside the score
PREDICTED = (("y_pred", "y_hat", "yhat", "pred", "prediction", "predicted", "predicted_class",
              "pred_class",
              "predicted_label", "pred_label", "prediction_label", "y_predicted"),
             (r"y_pred_.+", r"predicted_.+"), ())
APPROVE = frozenset({"approve", "approved", "accept", "accepted", "a", "yes", "y", "true",
                      "1", "ok"})


def present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and np.isnan(v))


def shown(values: Any, k: int = 3) -> str:
    """The first ``k`` present values, for a message.

    >>> shown(["Dec-2015", None, "Jan-2016"]), shown([0.0, 2.0, 4.0, 6.0])
    ("'Dec-2015', 'Jan-2016'", '0.0, 2.0, 4.0, ...')
    """
    vals = [repr(v) if isinstance(v, str) else str(v) for v in values if present(v)][:k]
    return ", ".join(vals) + (", ..." if len(vals) == k else "")


#: Share of repeated values an id may have in the sample (a retried request sent twice):
#: the label join counts a repeat as a duplicate prediction and keeps the first
MAX_ID_REPEATS = 0.01


def unique_check(values_of: Any) -> Any:
    def check(n: str) -> str | None:
        vals = [v for v in values_of(n) if present(v)]
        if not vals or len(vals) != len(values_of(n)):
            return None
        repeats = len(vals) - len(set(map(str, vals)))
        if repeats == 0:
            return "unique in the sample"
        if repeats <= MAX_ID_REPEATS * len(vals):
            return (f"unique but for {repeats} repeated value(s) in the sample (replay counts "
                    "them as duplicate_predictions and keeps the first)")
        return None
    return check


def time_check(values_of: Any, fmt: str | None = None) -> Any:
    """Why a field reads as event time: epoch numbers, ISO-8601 text, timestamps, text
    in ``fmt`` (the user's) or in common formats (one, or several: an ambiguity the
    time's reading refuses with their names), or dates in digits (``20240131``)."""
    def check(n: str) -> str | None:
        vals = values_of(n)
        unit = time_unit(vals)
        if unit == "auto":
            return "reads as event time (timestamps)"
        if unit:
            return f"reads as event time ({unit})"
        if text_unit := epoch_text_unit(vals):
            return f"reads as event time ({text_unit}, written as text)"
        formats = text_formats(vals, (fmt,) if fmt else TIME_FORMATS)
        if formats:
            return f"reads as event time (text in {' or '.join(formats)})"
        digits = digit_formats(vals, (fmt,) if fmt else DIGIT_FORMATS)
        return f"reads as event time (dates in digits, {digits[0]})" if digits else None
    return check


def score_check(values_of: Any) -> Any:
    def check(n: str) -> str | None:
        vals = [v for v in values_of(n) if present(v)]
        if not vals or not all(isinstance(v, int | float) and not isinstance(v, bool)
                               for v in vals):
            return None
        arr = np.asarray(vals, dtype=np.float64)
        if arr.min() >= 0 and arr.max() <= 1 and len(np.unique(arr)) > 2:
            return "numbers in [0, 1]"
        return None
    return check


def two_values(values_of: Any) -> Any:
    def check(n: str) -> str | None:
        k = len({str(v) for v in values_of(n) if present(v)})
        return "two distinct values" if k == 2 else None
    return check


#: The most outcome texts a column named exactly like a label may hold (Lending Club's
#: loan_status: Fully Paid, Charged Off, Does not meet the credit policy. Status:...).
MAX_OUTCOME_TEXTS = 10
#: ... and a status whose every value is an outcome word (Prosper's LoanStatus: twelve, six
#: of them Past Due buckets)
MAX_STATUS_WORDS = 20


def outcome_texts(values: Any) -> bool:
    """Whether ``values`` (present ones, all text, more than two distinct) read as a loan
    status: at most :data:`MAX_OUTCOME_TEXTS` texts, or :data:`MAX_STATUS_WORDS` outcome
    words (:mod:`~driftwatch.onboard.outcomewords`).

    >>> outcome_texts(["Current", "Completed", *[f"Past Due ({i})" for i in range(10)]])
    True
    >>> outcome_texts([f"t{i}" for i in range(12)]), outcome_texts(["a", "b"])
    (False, False)
    """
    vals = {v for v in values if present(v)}
    if len(vals) <= 2 or not all(isinstance(v, str) for v in vals):
        return False
    return len(vals) <= MAX_OUTCOME_TEXTS or (
        len(vals) <= MAX_STATUS_WORDS and all(word_side(v) for v in vals))


def label_check(values_of: Any) -> Any:
    """Two distinct values; or, for a column named exactly like a label, a few texts (a
    loan status), whose bad ones only the user can say (``--label-bad``)."""
    two = two_values(values_of)

    def check(n: str) -> str | None:
        if why := two(n):
            return why
        if name_rank(n, *LABEL) < 3:
            return None
        vals = {v for v in values_of(n) if present(v)}
        if outcome_texts(vals):
            return f"{len(vals)} outcome texts"
        return None
    return check


def decision_check(values_of: Any) -> Any:
    from driftwatch.windows.conventions import norm_value

    def check(n: str) -> str | None:
        vals = {norm_value(v) for v in values_of(n) if present(v)}
        if 1 < len(vals) <= 5 and vals & APPROVE:
            return "a few values, one of them an approval"
        return None
    return check


def exposure_check(values_of: Any) -> Any:
    def check(n: str) -> str | None:
        vals = [v for v in values_of(n) if present(v)]
        ok = vals and all(isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
                          for v in vals)
        return "non-negative amounts" if ok else None
    return check
