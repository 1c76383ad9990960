"""The decision a stream carries where the reference has none.

A training table seldom holds the lender's decision (its rows are the loans made), while the
scored stream says, record by record, whether the application was approved. Mapped, the
decision gives the approval rate, and the label join skips the declined applications, which
get no outcome, instead of holding them until their TTL as a backlog that never clears.

>>> from driftwatch.onboard.plandata import Options, Plan, StreamPlan
>>> vals = {"app_id": ["a", "b", "c"], "decision": ["APPROVE", "DECLINE", "APPROVE"]}
>>> sp = StreamPlan("predictions", None, "app_id", None)
>>> plan = Plan(model="m", reference="r.csv", features=[], ignore=[], predictions=sp,
...             outcomes=None)
>>> stream_decision(plan, sp, list(vals), vals.get, ["x"], Options(model="m"), "s.csv",
...                 {"app_id"})
>>> sp.decision, sp.approve, sp.decline
('decision', ['APPROVE'], None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from driftwatch.onboard.finding import find_role
from driftwatch.onboard.flags import check_approve
from driftwatch.onboard.infer import leaf
from driftwatch.onboard.matching import resolves
from driftwatch.onboard.outputs import approve_values
from driftwatch.onboard.plandata import Options, Plan, StreamPlan
from driftwatch.onboard.roles import DECISION, decision_check

__all__ = ["decision_values", "names_stream_decision", "stream_decision"]


def decision_values(values: list[Any], table: pd.DataFrame, column: str, opts: Options,
                    where: str) -> tuple[list[Any], list[Any] | None]:
    """The approving values of a decision ``column`` (``values``, in ``table``) and, with
    ``--decline``, the declining ones (None without), ``--approve`` and ``--decline``
    checked on them: the reference's decision and the stream's alike."""
    approve = approve_values(values, opts.approve)
    decline = approve_values(values, opts.decline) if opts.decline else None
    check_approve(opts.approve, table, column, approve, where)
    check_approve(opts.decline, table, column, decline or [], where, flag="--decline",
                  overlap=approve)
    return approve, decline


def names_stream_decision(flag: str | None, cols: Sequence[str], paths: Sequence[str]) -> bool:
    """Whether ``--decision-field`` names a field of the stream that the reference lacks."""
    return flag is not None and not resolves(flag, cols) and resolves(flag, paths)


def stream_decision(plan: Plan, sp: StreamPlan, paths: Sequence[str],
                    vals: Callable[[str], list[Any]], cols: Sequence[str], opts: Options,
                    where: str, taken: set[str]) -> None:
    """Map the stream's decision on ``sp`` (the reference has no decision column): the
    field ``--decision-field`` names, or the one named like a decision whose few values
    include an approval; not a reference column (that is a feature) nor a field ``taken``
    by another role. ``--approve`` and ``--decline`` are checked on its values."""
    flag = opts.decision_field if names_stream_decision(opts.decision_field, cols,
                                                        paths) else None
    free = [p for p in paths if p not in taken and leaf(p) not in cols]
    found = find_role("decision", DECISION, free, decision_check(vals), "--decision-field",
                      flag, where)
    if found is None:
        # the flags' own errors: no decision anywhere
        check_approve(opts.approve, pd.DataFrame(), None, [], where)
        check_approve(opts.decline, pd.DataFrame(), None, [], where, flag="--decline")
        return
    values = vals(found.name)
    table = pd.DataFrame({found.name: pd.Series(values, dtype=object)})
    sp.decision = found.name
    sp.approve, sp.decline = decision_values(values, table, found.name, opts, where)
    plan.say(f"decision: {found.name}", f"{found.why}, in the stream only; approve = "
             f"{sp.approve}" + (f", decline = {sp.decline}, any other value no decision"
                                if sp.decline is not None else "")
             + "; the label join skips declined applications (they get no outcome) and "
             "the approval rate is reported, with no reference rate to compare")
