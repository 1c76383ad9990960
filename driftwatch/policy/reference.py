"""The policy's ``reference:`` block: how the reference table's columns are read.

``model.reference`` says where the table is; ``reference:`` says which of its columns are
the score, the label, the decision and the exposure, and which to ignore. Every other
column is a feature. Left out, the block means what driftwatch always assumed: columns
named ``score`` (P(bad)), ``label`` and ``decision``. A CSV table written without a header
line (a loan-level drop) gets its column names here too, ``csv: {names: [...]}``, read by
every reader of the table.

>>> r = ReferenceColumns.model_validate({
...     "score": "p_good", "score_is": "p_good",
...     "label": {"column": "outcome", "bad": ["bad"], "good": ["good"]},
...     "decision": {"column": "decision", "approve": ["A"]}, "ignore": ["customer_id"]})
>>> tc = r.conventions()
>>> tc.score, tc.score_is, tc.label, tc.bad, tc.approve, tc.ignore
('p_good', 'p_good', 'outcome', ('bad',), ('A',), ('customer_id',))
>>> ReferenceColumns().conventions().score
'score'
>>> for part in describe_reference(r).split("; "): print(part)
reference: score column 'p_good' is P(good), read as P(bad) = 1 - it (here and live)
label column 'outcome' (bad: 'bad'
good: 'good')
decision column 'decision' (approve: 'A')
ignored: 'customer_id'
every other column is a feature.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from driftwatch.policy.base import StrictModel
from driftwatch.windows.conventions import (
    DEFAULT_APPROVE,
    DEFAULT_BAD,
    DEFAULT_GOOD,
    TableConventions,
    norm_value,
)

__all__ = ["DecisionColumn", "LabelColumn", "ReferenceColumns", "ReferenceCsv",
           "describe_reference"]

Scalar = str | int | float | bool


def _short(data: Any) -> Any:
    return {"column": data} if isinstance(data, str) else data


class LabelColumn(StrictModel):
    """``label: outcome`` or ``label: {column: outcome, bad: [1, default], good: [0]}``;
    ``pending``: values with no outcome yet (``Current``), whose rows count as unlabelled."""

    column: str = Field(min_length=1)
    bad: list[Scalar] = Field(default_factory=lambda: list(DEFAULT_BAD), min_length=1)
    good: list[Scalar] = Field(default_factory=lambda: list(DEFAULT_GOOD), min_length=1)
    pending: list[Scalar] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _column(cls, data: Any) -> Any:
        return _short(data)

    @model_validator(mode="after")
    def _pending_apart(self) -> LabelColumn:
        sides = {norm_value(v) for v in [*self.bad, *self.good]}
        both = [v for v in self.pending if norm_value(v) in sides]
        if both:
            raise ValueError("a pending label value cannot also be bad or good: "
                             + _values(both))
        return self


class DecisionColumn(StrictModel):
    """``decision: decision`` or ``decision: {column: d, approve: [A], decline: [D]}``."""

    column: str = Field(min_length=1)
    approve: list[Scalar] = Field(default_factory=lambda: list(DEFAULT_APPROVE), min_length=1)
    decline: list[Scalar] | None = None

    @model_validator(mode="before")
    @classmethod
    def _column(cls, data: Any) -> Any:
        return _short(data)


class ReferenceCsv(StrictModel):
    """``csv: {names: [LOAN_ID, ...]}``: the column names of a reference CSV written
    without a header line, as a stream's ``csv: {names:}`` gives its files' (a first
    line equal to them is a header, skipped)."""

    names: list[str] = Field(min_length=1)

    @field_validator("names")
    @classmethod
    def _distinct(cls, names: list[str]) -> list[str]:
        if any(not n.strip() for n in names):
            raise ValueError("expected a column name (text) for every field, none empty")
        stripped = [n.strip() for n in names]
        twice = sorted({n for n in stripped if stripped.count(n) > 1})
        if twice:
            raise ValueError(f"column names given twice: {', '.join(twice)}")
        return stripped


class ReferenceColumns(StrictModel):
    #: A CSV reference written without a header line: its column names.
    csv: ReferenceCsv | None = None
    #: The model's score column; ``score_is`` says what it is the probability of.
    score: str | None = "score"
    score_is: Literal["p_bad", "p_good"] = "p_bad"
    label: LabelColumn | None = Field(default_factory=lambda: LabelColumn(column="label"))
    decision: DecisionColumn | None = Field(
        default_factory=lambda: DecisionColumn(column="decision"))
    exposure: str | None = None
    #: Columns that are neither features nor one of the above (ids, timestamps).
    ignore: list[str] = Field(default_factory=list)
    #: The column holding each row's segment (the connector's ``segment`` field live):
    #: its most frequent values get drift signals of their own (``segments:``).
    segment: str | None = None

    def conventions(self) -> TableConventions:
        """The same, for the layers that read tables."""
        lb, dc = self.label, self.decision
        return TableConventions(
            score=self.score,
            score_is=self.score_is,
            label=lb.column if lb else None,
            bad=tuple(lb.bad) if lb else DEFAULT_BAD,
            good=tuple(lb.good) if lb else DEFAULT_GOOD,
            pending=tuple(lb.pending) if lb else (),
            decision=dc.column if dc else None,
            approve=tuple(dc.approve) if dc else DEFAULT_APPROVE,
            decline=tuple(dc.decline) if dc and dc.decline is not None else None,
            exposure=self.exposure,
            ignore=tuple(self.ignore),
            segment=self.segment,
            names=tuple(self.csv.names) if self.csv else None,
        )


def _values(vals: list[Scalar]) -> str:
    return ", ".join(repr(v) if isinstance(v, str) else str(v).lower() for v in vals)


def _names(names: list[str], shown: int = 4) -> str:
    return ", ".join(names[:shown]) + (", ..." if len(names) > shown else "")


def describe_reference(r: ReferenceColumns) -> str:
    """One plain-English line: how ``policy explain`` says the reference is read."""
    parts = []
    if r.score is None:
        parts.append("no score column")
    elif r.score_is == "p_good":
        parts.append(f"score column {r.score!r} is P(good), read as P(bad) = 1 - it "
                     "(here and live)")
    else:
        parts.append(f"score column {r.score!r} is P(bad)")
    parts.append(f"label column {r.label.column!r} (bad: {_values(r.label.bad)}; good: "
                 f"{_values(r.label.good)}"
                 + (f"; pending, rows with no outcome yet: {_values(r.label.pending)}"
                    if r.label.pending else "") + ")" if r.label else "no label column")
    if r.decision:
        declined = r.decision.decline
        parts.append(f"decision column {r.decision.column!r} (approve: "
                     f"{_values(r.decision.approve)}"
                     + (f"; decline: {_values(declined)}; any other value decides nothing"
                        if declined is not None else "") + ")")
    if r.exposure:
        parts.append(f"exposure column {r.exposure!r}")
    if r.segment:
        parts.append(f"segment column {r.segment!r}")
    if r.ignore:
        parts.append("ignored: " + ", ".join(map(repr, r.ignore)))
    if r.csv:
        parts.append(f"a CSV reference has no header line: its {len(r.csv.names)} columns "
                     f"are named by csv.names ({_names(r.csv.names)}; a first line equal "
                     "to them is skipped)")
    return "reference: " + "; ".join(parts) + "; every other column is a feature."
