"""``init``'s flags that name a value of a role no field plays: refused with the reason.

A flag the user gave either acts or is an error; ``--label-bad`` with no label column,
``--approve`` with no decision column, ``--score-is`` with no score and ``--ignore`` of a
column the reference lacks would otherwise be dropped without a word.

>>> ref = pd.DataFrame({"credit_risk": [1, 2, 1], "telephone": [1, 2, 2], "age": [30, 41, 52]})
>>> holding(ref, ["2"])
['credit_risk', 'telephone']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import looked_for
from driftwatch.onboard.roles import DECISION, LABEL, present
from driftwatch.windows.conventions import norm_value

__all__ = ["check_approve", "check_ignore", "check_label_bad", "holding", "no_score_for"]


def _flags(flag: str, values: Sequence[str]) -> str:
    return " ".join(f"{flag} {v}" for v in values)


def _values(values: Sequence[Any]) -> str:
    distinct = sorted({v for v in values if present(v)}, key=str)
    return ", ".join(repr(v) for v in distinct[:6]) + (", ..." if len(distinct) > 6 else "")


def holding(ref: pd.DataFrame, wanted: Sequence[str]) -> list[str]:
    """The reference's two-valued columns among whose values is one of ``wanted``."""
    want = {norm_value(w) for w in wanted}
    out = []
    for c in ref.columns:
        vals = ref[c].dropna().unique()
        if len(vals) == 2 and want & {norm_value(v) for v in vals}:
            out.append(str(c))
    return out


def check_label_bad(label_bad: Sequence[str], ref: pd.DataFrame, label: str | None,
                    bad: Sequence[Any], good: Sequence[Any], reference: str) -> None:
    """Refuse ``--label-bad`` where it cannot act: no label column (``label`` None), or
    none of its values among the label's (``bad`` came out empty), or all of them (no
    ``good`` value left)."""
    if not label_bad:
        return
    given = _flags("--label-bad", label_bad)
    if label is None:
        near = holding(ref, label_bad)
        found = ("two-valued columns holding it: " + ", ".join(near)) if near else None
        hint = (f"name it with --label-field {near[0]}" if len(near) == 1 else
                "name it with --label-field NAME")
        raise ConfigError(f"{given}: no label column found (no two-valued column named like "
                          f"a label: {looked_for(*LABEL)})", file=reference, found=found,
                          hint=hint)
    if not bad:
        raise ConfigError(f"{given}: no value of the label column {label} is one",
                          file=reference, found=f"values {_values(ref[label].tolist())}",
                          hint="give --label-bad one of them")
    if not good:
        raise ConfigError(f"{given}: every value of the label column {label} is bad, so "
                          "none is good", file=reference,
                          found=f"values {_values(ref[label].tolist())}",
                          hint="give only the values that mean bad")


def check_approve(approve: Sequence[str], ref: pd.DataFrame, decision: str | None,
                  approved: Sequence[Any], reference: str, flag: str = "--approve",
                  overlap: Sequence[Any] = ()) -> None:
    """Refuse ``--approve`` (or ``flag``: ``--decline``) with no decision column, with none
    of its values there, or naming a value of ``overlap`` (the approving ones) too."""
    if not approve:
        return
    given = _flags(flag, approve)
    if decision is None:
        raise ConfigError(f"{given}: no decision column found (none named like a decision: "
                          f"{looked_for(*DECISION)}, with a few values, one an approval)",
                          file=reference, hint="name it with --decision-field NAME")
    if not approved:
        raise ConfigError(f"{given}: no value of the decision column {decision} is one",
                          file=reference, found=f"values {_values(ref[decision].tolist())}",
                          hint=f"give {flag} one of them")
    if both := [v for v in approved if v in overlap]:
        raise ConfigError(f"{given}: {_values(both)} also approve (--approve)",
                          file=reference, hint="give each decision value one meaning")


def no_score_for(score_is: str, where: str) -> ConfigError:
    """The error for ``--score-is`` where neither the reference nor the sample has a
    score."""
    return ConfigError(f"--score-is {score_is}: no score found, in the reference or in the "
                       "sample (none named like a score with numbers in [0, 1])", file=where,
                       hint="name it with --score-field NAME")


def check_ignore(ignore: Sequence[str], cols: Sequence[str], paths: Sequence[str],
                 reference: str) -> None:
    """Refuse ``--ignore`` of a column the reference does not have (``paths``: the sample's
    fields, which are features only as reference columns)."""
    unknown = [c for c in ignore if c not in cols]
    if not unknown:
        return
    in_sample = [c for c in unknown if c in paths]
    raise ConfigError(
        f"{_flags('--ignore', unknown)}: no such reference column"
        + (f" ({', '.join(in_sample)} only in the sample, whose fields are features only "
           "as reference columns: nothing to ignore)" if in_sample else ""),
        file=reference, hint="columns: " + ", ".join(list(cols)[:20]))
