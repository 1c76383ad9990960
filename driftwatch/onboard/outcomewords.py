"""The words public credit tables write for a loan's outcome: bad, good, or none yet.

A loan status mixes final outcomes with states of a loan still running: Prosper's
``LoanStatus`` holds ``Chargedoff`` and ``Defaulted`` (bad), ``Completed`` (good) and
``Current``, ``Past Due (1-15 days)``, ``FinalPaymentInProgress`` (no outcome yet); the
SBA's ``MIS_Status`` ``CHGOFF`` (bad) and ``P I F`` (paid in full, good); Lending Club's
``loan_status`` ``Charged Off`` / ``Fully Paid``, also after ``Does not meet the credit
policy. Status:``. A state that is no outcome yet is never read as good: it is
``pending`` (left out of the label join, and of the reference's outcomes).

>>> [word_side(v) for v in ("CHGOFF", "P I F", "Chargedoff", "Completed", "Current")]
['bad', 'good', 'bad', 'good', 'pending']
>>> word_side("Past Due (16-30 days)"), word_side("Late (31-120 days)"), word_side("Cancelled")
('pending', 'pending', 'pending')
>>> word_side("Does not meet the credit policy. Status:Charged Off"), word_side("RENT")
('bad', None)
"""

from __future__ import annotations

import re
from typing import Any

from driftwatch.windows.conventions import norm_value

__all__ = ["BAD_WORDS", "GOOD_WORDS", "LOAN_STATES", "NOT_FINAL", "later_states", "word_side"]

BAD_WORDS = frozenset({"1", "true", "bad", "default", "defaulted", "fraud", "charged_off",
                       "chargeoff", "charged off", "chargedoff", "charge off", "chgoff",
                       "written off", "write off", "writtenoff", "delinquent", "yes", "y"})
GOOD_WORDS = frozenset({"0", "false", "good", "paid", "repaid", "ok", "no", "n",
                        "performing", "legit", "fully paid", "fully_paid", "paid in full",
                        "paid off", "p i f", "pif", "completed"})
#: States of a loan without an outcome yet (still running, or never run): pending
NOT_FINAL = (r"current", r"past ?due.*", r"late.*", r"in grace period", r"grace period",
             r"final ?payment ?in ?progress", r"in progress", r"issued", r"open",
             r"cancell?ed")
_NOT_FINAL = re.compile("|".join(f"(?:{p})" for p in NOT_FINAL))
#: Lending Club's statuses of loans outside the credit policy carry the outcome after this
_STATUS = "status:"
#: The public tables' statuses of a loan with no outcome yet, as they spell them (Lending
#: Club's, then Prosper's): a sample holds some of them, and the others come later
LOAN_STATES = ("Current", "Issued", "In Grace Period", "Late (16-30 days)",
               "Late (31-120 days)", "Past Due (1-15 days)", "Past Due (16-30 days)",
               "Past Due (31-60 days)", "Past Due (61-90 days)", "Past Due (91-120 days)",
               "Past Due (>120 days)", "FinalPaymentInProgress", "Cancelled")


def word_side(v: Any) -> str | None:
    """``bad``, ``good`` or ``pending`` (no outcome yet) for a label value written as one
    of the words above; None for any other."""
    k = norm_value(v)
    if _STATUS in k:
        k = k.rsplit(_STATUS, 1)[1].strip()
    if k in BAD_WORDS:
        return "bad"
    if k in GOOD_WORDS:
        return "good"
    return "pending" if _NOT_FINAL.fullmatch(k) else None


def later_states(values: Any) -> list[str]:
    """The :data:`LOAN_STATES` a label's ``values`` lack, when one of them is a loan state
    (a status column): each would be a bad record (``bad_label``) when it first comes,
    where it is no outcome yet. Nothing for a label without one.

    >>> later_states(["Charged Off", "Fully Paid", "Current", "Late (31-120 days)"])[:3]
    ['Issued', 'In Grace Period', 'Late (16-30 days)']
    >>> later_states(["1", "0"])
    []
    """
    have = {norm_value(v) for v in values}
    if not any(word_side(v) == "pending" for v in values):
        return []
    return [s for s in LOAN_STATES if norm_value(s) not in have]
