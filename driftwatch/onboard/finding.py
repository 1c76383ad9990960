"""Which field plays a role: the one its flag names, else one found by name or by values.

Each finding comes with its reason; a required role that is absent is an error that says
what to do.

>>> from driftwatch.onboard.roles import ID, unique_check
>>> vals = {"txn.id": [1, 2, 3], "amount": [5, 5, 7]}.get
>>> find_role("id", ID, ["txn.id", "amount"], unique_check(vals), "--id-field", None, "x")
Candidate(name='txn.id', rank=3, why='unique in the sample')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import Candidate, choose, looked_for, name_rank
from driftwatch.onboard.matching import given_field, stream_path
from driftwatch.onboard.roles import outcome_texts, shown
from driftwatch.onboard.sample import Sample
from driftwatch.onboard.timefields import time_todo

__all__ = ["carried", "find_role", "ids_shared", "label_from_outcomes", "no_label_note"]

#: The most values a label found by where it is (outcomes only) may have: a loan status
#: (more where they are outcome words: :func:`~driftwatch.onboard.roles.outcome_texts`).
_STATUS_LEVELS = 10
#: The most two-valued columns :func:`no_label_note` names
_SHOWN = 6

def _candidates(names: Sequence[str], spec: tuple[Any, ...], check: Any) -> list[Candidate]:
    out = []
    for n in names:
        rank = name_rank(n, *spec)
        if rank:
            why = check(n)
            if why:
                out.append(Candidate(n, rank, why))
    return out


#: What a required role that is absent needs: the fix when no field is named like it, the
#: fix when the first one named like it has values that do not fit, and why they do not.
_ABSENT: dict[str, tuple[str, Callable[[str, list[Any]], str], Callable[[list[Any]], str]]] = {
    "id": ("add a unique id to every record (outcomes join on it)",
           lambda name, vals: "make it unique per record",
           lambda vals: "its values are missing or repeat (more than 1% of them) in the "
           "sample"),
    "event time": ("add each record's event time (epoch seconds or milliseconds, or "
                   "ISO-8601)", time_todo,
                   lambda vals: f"its values ({shown(vals)}) are not epoch seconds, "
                   "milliseconds or ISO-8601 times, nor dates in a common format"),
}


def find_role(role: str, spec: tuple[Any, ...], names: Sequence[str], check: Any, flag: str,
              given: str | None, where: str, required: bool = False,
              values: Any = None,
              by_values: Callable[[], list[Candidate]] | None = None,
              todo: str = "") -> Candidate | None:
    """The field for ``role``: ``given`` by its flag, else the best named candidate, else
    (``by_values``) the candidates found by their values alone; ``values`` reads a field's
    sample values, for what a required role's error says, ``todo`` what else to do than
    pass the flag where none is found."""
    if given is not None:
        if given.lower() == "none" and not required:
            return None
        return Candidate(given_field(flag, given, names, where), 4, f"from {flag}")
    found = _candidates(names, spec, check)
    if not found and by_values is not None:
        found = by_values()
    missing = ""
    if required and not found and role in _ABSENT and values is not None:
        none_todo, bad_todo, why = _ABSENT[role]
        near = [n for n in names if name_rank(n, *spec)]
        if near:
            missing = "; ".join(f"{n} is named like one, but {why(values(n))}" for n in near)
            todo = bad_todo(near[0], values(near[0]))
        else:
            article = "an" if role[0] in "aeiou" else "a"
            missing = f"no field named like {article} {role} ({looked_for(*spec)})"
            todo = none_todo
    return choose(role, found, flag, where, required=required, missing=missing, todo=todo)


def carried(c: str, paths: Sequence[str]) -> bool:
    """Whether a sample carries reference column ``c`` (at its own path or one ending so)."""
    try:
        return stream_path(c, paths) is not None
    except ConfigError:  # several fields end so: not this column's
        return False


def ids_shared(paths: Sequence[str], outcomes: Sample | None,
               check: Callable[[str], str | None]) -> Callable[[], list[Candidate]]:
    """The id found by where it is, for :func:`find_role`'s ``by_values``: a field of the
    predictions that the outcomes sample carries too and that passes ``check`` (unique),
    whatever its name (Santander's ``ID_code``, the SBA's ``LoanNr_ChkDgt``): what outcomes
    join on.

    >>> s = Sample([{"LoanNr": 3, "status": "P I F"}], "o.csv")
    >>> ids_shared(["LoanNr", "Term"], s, lambda n: "unique")()[0].name
    'LoanNr'
    """
    def found() -> list[Candidate]:
        if outcomes is None:
            return []
        out_paths = outcomes.paths()
        return [Candidate(p, 1, f"{why}, and the outcomes sample carries it (they join on "
                             "it)") for p in paths
                if carried(p, out_paths) and (why := check(p))]
    return found


def label_from_outcomes(ref: pd.DataFrame, cols: Sequence[str], sample: Sample,
                        outcomes: Sample | None) -> Candidate | None:
    """The one two-valued reference column the outcomes sample carries and the predictions
    do not: the label, whatever its name (``SeriousDlqin2yrs``, ``Class``)."""
    if outcomes is None:
        return None
    out_paths, pred_paths = outcomes.paths(), sample.paths()
    hits = [c for c in cols if ref[c].nunique() == 2 and carried(c, out_paths)
            and not carried(c, pred_paths)]
    if len(hits) > 1:
        raise ConfigError("several reference columns could be the label (two values, in "
                          "the outcomes sample only): " + ", ".join(hits),
                          file=outcomes.name, hint="pass --label-field NAME")
    if hits:
        return Candidate(hits[0], 2, "two distinct values, in the outcomes sample and not "
                         "in the predictions")
    # a status with several outcomes (Lending Club's loan_status: Fully Paid, Charged Off,
    # Does not meet the credit policy. Status:...): still the label, whose bad values only
    # the user can name (--label-bad) unless they are outcome words (Prosper's twelve)
    few = [c for c in cols if (2 < ref[c].nunique() <= _STATUS_LEVELS
                               or outcome_texts(ref[c].tolist()))
           and carried(c, out_paths) and not carried(c, pred_paths)]
    if len(few) != 1:
        return None
    return Candidate(few[0], 1, f"{ref[few[0]].nunique()} distinct values, in the outcomes "
                     "sample and not in the predictions")


def no_label_note(ref: pd.DataFrame, cols: Sequence[str], sample: Sample) -> str:
    """Why no label column was found, where no outcomes sample says which it is; and which
    two-valued reference columns the predictions sample carries, with the flag that takes
    one: a label kept in the scored file under a name that says nothing (Give Me Some
    Credit's ``SeriousDlqin2yrs``, German credit's ``class``) is watched as a feature
    otherwise.

    >>> ref = pd.DataFrame({"SeriousDlqin2yrs": [0, 1, 0], "age": [30, 41, 52]})
    >>> no_label_note(ref, ["SeriousDlqin2yrs", "age"], Sample([{"SeriousDlqin2yrs": 0}], "s"))
    'no two-valued column ... --label-field SeriousDlqin2yrs (it stays a feature otherwise)'
    """
    why = "no two-valued column named like a label in the reference"
    paths = sample.paths()
    two = [c for c in cols if ref[c].nunique() == 2 and carried(c, paths)]
    if not two:
        return why
    if len(two) == 1:
        return (f"{why}; the sample carries {two[0]}, two-valued: if it is the outcome, "
                f"pass --label-field {two[0]} (it stays a feature otherwise)")
    named = ", ".join(two[:_SHOWN]) + (f" and {len(two) - _SHOWN} more"
                                       if len(two) > _SHOWN else "")
    return (f"{why}; the sample carries two-valued {named}: if one is the outcome, pass "
            "--label-field NAME (they stay features otherwise)")
