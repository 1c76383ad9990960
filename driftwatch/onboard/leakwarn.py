"""``driftwatch init``'s warnings on features that most likely leak the outcome
(:mod:`~driftwatch.onboard.leakage`), read where features and outcomes meet: the
predictions sample joined by id to the outcomes sample, else the reference's own label."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from driftwatch.csvdecimal import frame_decimal
from driftwatch.onboard.leakage import MIN_CLASS_ROWS, post_outcome_name, separation
from driftwatch.onboard.plandata import Feature, Plan
from driftwatch.onboard.roles import present
from driftwatch.schema import level_text
from driftwatch.sentinels import MissingValues, is_number
from driftwatch.textnumbers import number_in
from driftwatch.windows.conventions import norm_value

__all__ = ["joined_outcomes", "warn_leaks"]


def _key(v: Any) -> str:
    """An id as the join reads it: 7, 7.0 and "7" alike."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _sides(bad: list[Any], good: list[Any]) -> dict[str, bool]:
    return {norm_value(v): False for v in good} | {norm_value(v): True for v in bad}


def joined_outcomes(plan: Plan) -> tuple[list[int], np.ndarray]:
    """The predictions sample's row numbers whose id the outcomes sample carries with a
    bad or good outcome (pending ones left out), and those outcomes (True: bad)."""
    out = plan.outcomes
    if out is None or out.label is None:
        return [], np.zeros(0, dtype=bool)
    side = _sides(out.bad, out.good)
    outcome: dict[str, bool] = {}
    for rec in out.sample.rows:
        i, lab = rec.get(out.id_path), rec.get(out.label)
        if present(i) and present(lab) and (s := side.get(norm_value(lab))) is not None:
            outcome.setdefault(_key(i), s)
    rows, bad = [], []
    for n, rec in enumerate(plan.predictions.sample.rows):
        i = rec.get(plan.predictions.id_path)
        if present(i) and (s := outcome.get(_key(i))) is not None:
            rows.append(n)
            bad.append(s)
    return rows, np.asarray(bad, dtype=bool)


def _as_read(f: Feature, values: list[Any], decimal: str = ".") -> list[Any]:
    """A feature's values as replay reads them: percent or money text as numbers (read
    with ``decimal``, the decimal mark of the file they came from), and the codes init
    proposes for missing (``f.missing``, which the connector it writes lists) as missing,
    so a sentinel neither fakes a leak nor hides one."""
    out = values
    if f.format:
        out = []
        for v in values:
            try:
                out.append(number_in(f.format, v, decimal) if isinstance(v, str) else v)
            except ValueError:
                out.append(None)
    if not f.missing:
        return out
    codes = MissingValues(by_feature={f.name: f.missing})
    if f.kind != "numeric":
        texts = codes.texts(f.name)
        return [None if present(v) and level_text(v) in texts else v for v in out]
    numbers, words = set(codes.numbers(f.name).tolist()), codes.number_texts(f.name)
    return [None if (isinstance(v, str) and v.strip() in words) or _number(v) in numbers
            else v for v in out]


def _number(v: Any) -> float | None:
    """``v`` as the number it is or its text writes, else None."""
    if is_number(v):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def warn_leaks(plan: Plan, ref: pd.DataFrame) -> None:
    """Say each feature whose values alone separate the outcome, and each named like a
    value recorded after it; drop none (``--ignore`` does)."""
    rows, bad = joined_outcomes(plan)
    values: Any
    if min(int(bad.sum()), int((~bad).sum())) >= MIN_CLASS_ROWS:
        sample = plan.predictions.sample.rows
        where = "the predictions and outcomes samples joined by id"
        mark = plan.predictions.sample.mark

        def values(f: Feature) -> list[Any]:
            return [sample[n].get(f.path) for n in rows]
    elif plan.ref_label and plan.ref_label in ref.columns:
        side = _sides(plan.ref_bad, plan.ref_good)
        lab = [side.get(norm_value(v)) if present(v) else None for v in ref[plan.ref_label]]
        keep = np.array([s is not None for s in lab], dtype=bool)
        bad = np.array([bool(s) for s in lab], dtype=bool)[keep]
        where = "the reference's labelled rows"
        mark = frame_decimal(ref)

        def values(f: Feature) -> list[Any]:
            return [v for v, k in zip(ref[f.name].tolist(), keep, strict=True) if k]
    else:
        values, where, mark = None, "", "."
    for f in plan.features:
        why = separation(_as_read(f, values(f), mark), bad, f.kind) if values else None
        if why:
            plan.say(f"  warning: {f.name}", f"its values alone separate the outcome ({why} "
                     f"of {where}): most likely recorded after the outcome (a leak: the "
                     f"model cannot have it when it scores); if so, leave it out with "
                     f"--ignore {f.name}")
        elif part := post_outcome_name(f.name):
            plan.say(f"  warning: {f.name}", f"named like a value recorded after the outcome "
                     f"({part!r} in its name; "
                     + ("its values do not show it" if values else "no outcomes to check its "
                        "values against") + f"): if it is, leave it out with --ignore {f.name}")
