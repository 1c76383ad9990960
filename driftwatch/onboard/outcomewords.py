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

A status a sample holds is seldom the whole vocabulary: Lending Club's final ``Default``
is a few dozen loans in millions, so a sample of the first rows lacks it, and each one
would come as a value the connector lists nowhere (a bad record, ``bad_label``). Where a
label's values are recognised as such a status, :func:`later_values` gives the
vocabulary's values they lack, each on its side.

Freddie Mac's delinquency status is no word but a code: months delinquent (``0``, ``1``,
...), ``RA`` (REO acquisition) and ``XX`` (unknown). Which months are bad is the user's
choice (``--label-bad 3 4 6 RA``); ``XX`` is no outcome known, so it is pending
(:func:`unknown_codes`), never good.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from driftwatch.windows.conventions import norm_value

__all__ = ["BAD_WORDS", "DELINQUENCY_CODES", "GOOD_WORDS", "LENDING_CLUB", "LOAN_STATES",
           "LOAN_STATUSES", "NOT_FINAL", "PROSPER", "Later", "LoanStatus", "final_side",
           "later_values", "unknown_codes", "word_side"]

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


@dataclass(frozen=True)
class LoanStatus:
    """A public table's loan status as it spells it: the final bad and good outcomes and
    the states of a loan with no outcome yet; told by any of its values but the words
    every lender writes (``Current``, ``Default``)."""

    name: str
    bad: tuple[str, ...]
    good: tuple[str, ...]
    running: tuple[str, ...]

    def told_by(self, keys: set[str]) -> bool:
        """Whether label values (:func:`norm_value` keys) are this status's."""
        own = {norm_value(v) for v in (*self.bad, *self.good, *self.running)}
        return bool(keys & (own - _SHARED))


_SHARED = frozenset({"current", "default"})
LENDING_CLUB = LoanStatus(
    "Lending Club's loan_status",
    bad=("Charged Off", "Default", "Does not meet the credit policy. Status:Charged Off"),
    good=("Fully Paid", "Does not meet the credit policy. Status:Fully Paid"),
    running=LOAN_STATES[:5])
PROSPER = LoanStatus("Prosper's LoanStatus", bad=("Chargedoff", "Defaulted"),
                     good=("Completed",), running=("Current", *LOAN_STATES[5:]))
#: The loan statuses whose final outcomes a sample may lack are added when it is told
LOAN_STATUSES = (LENDING_CLUB, PROSPER)
#: Freddie Mac's delinquency status's codes beside months in digits, and of them those
#: that say the status is not known (no outcome: pending)
DELINQUENCY_CODES = ("RA", "XX")
_UNKNOWN_CODES = ("XX",)


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


@dataclass(frozen=True)
class Later:
    """The values of a recognised vocabulary that a label's values lack, by side, and the
    names of the statuses its final outcomes come from."""

    bad: list[str] = field(default_factory=list)
    good: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    told: list[str] = field(default_factory=list)


def final_side(v: Any, values: Any) -> str | None:
    """``bad`` or ``good`` where ``v`` is a final outcome of a loan status of
    :data:`LOAN_STATUSES` that a label's ``values`` are told as (Lending Club's ``Default``
    beside ``Charged Off``); None for any other value or label.

    >>> lc = ["Charged Off", "Fully Paid", "Default"]
    >>> final_side("Default", lc), final_side("Current", lc), final_side("Default", ["1", "0"])
    ('bad', None, None)
    """
    have, k = {norm_value(x) for x in values}, norm_value(v)
    for status in LOAN_STATUSES:
        if status.told_by(have):
            for side, words in (("bad", status.bad), ("good", status.good)):
                if k in {norm_value(w) for w in words}:
                    return side
    return None


def later_values(values: Any) -> Later:
    """The values of the vocabulary a label's ``values`` (all its sides) are recognised as
    that they lack: each would be a bad record (``bad_label``) when it first comes.

    A loan status of :data:`LOAN_STATUSES` lacks its other final outcomes; any loan status
    (one value a loan state, or told as one of those) lacks the other
    :data:`LOAN_STATES`; Freddie Mac's delinquency codes lack ``XX`` (unknown: pending).
    Nothing for a label of neither (a 0/1 flag).

    >>> later = later_values(["Charged Off", "Fully Paid", "Current", "Late (31-120 days)"])
    >>> later.bad, later.good, later.pending[:2], later.told
    (['Default', 'Does not meet the credit policy. Status:Charged Off'], \
['Does not meet the credit policy. Status:Fully Paid'], ['Issued', 'In Grace Period'], \
["Lending Club's loan_status"])
    >>> later_values(["0", "1", "3", "RA"]).pending, later_values([1, 0])
    (['XX'], Later(bad=[], good=[], pending=[], told=[]))
    """
    have = {norm_value(v) for v in values}
    if _delinquency(values):
        return Later(pending=[c for c in _UNKNOWN_CODES if norm_value(c) not in have])
    told = [s for s in LOAN_STATUSES if s.told_by(have)]
    if not told and not any(word_side(v) == "pending" for v in values):
        return Later()

    def lacked(vocabulary: Any) -> list[str]:
        return [v for v in vocabulary if norm_value(v) not in have]
    return Later(lacked(v for s in told for v in s.bad), lacked(v for s in told for v in s.good),
                 lacked(LOAN_STATES), [s.name for s in told])


def unknown_codes(values: Any, bad: Any = ()) -> list[Any]:
    """Of a label's ``values``, those that say no outcome is known, where they and the
    ``bad`` ones the user named are Freddie Mac's delinquency codes: pending, not good.

    >>> unknown_codes(["0", "1", "3", "XX"], bad=["3", "RA"]), unknown_codes(["0", "XX"])
    (['XX'], ['XX'])
    >>> unknown_codes(["good", "XX"]), unknown_codes(["0", "1"], bad=["1"])
    ([], [])
    """
    if not _delinquency([*values, *bad]):
        return []
    unknown = {norm_value(c) for c in _UNKNOWN_CODES}
    return [v for v in values if norm_value(v) in unknown]


def _delinquency(values: Any) -> bool:
    """Whether ``values`` are Freddie Mac's delinquency status: months in digits and at
    least one of its :data:`DELINQUENCY_CODES` (digits alone are any code)."""
    keys = {norm_value(v) for v in values}
    codes = {norm_value(c) for c in DELINQUENCY_CODES}
    return bool(keys & codes) and all(k.isdigit() or k in codes for k in keys)
