"""Which reference columns are features (typed, placed, with missing codes) and which not."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.connectors.columns import numeric
from driftwatch.connectors.mapping import FieldPath
from driftwatch.csvdecimal import frame_decimal
from driftwatch.csvnulls import CSV_MISSING
from driftwatch.errors import ConfigError
from driftwatch.flags import flag_level, flag_levels
from driftwatch.onboard.digitdates import digit_dates
from driftwatch.onboard.finding import carried
from driftwatch.onboard.infer import (
    MAX_INT_LEVELS,
    column_kind,
    name_rank,
    named_codes,
    not_a_feature,
    text_format,
)
from driftwatch.onboard.matching import stream_path
from driftwatch.onboard.placeholders import placeholder_note
from driftwatch.onboard.plandata import Feature, Plan
from driftwatch.onboard.roles import ID, PREDICTED, TIME, present, shown, two_values
from driftwatch.onboard.sentinels import likely_missing_values
from driftwatch.onboard.timefields import clock_hint
from driftwatch.onboard.unknownlevels import missing_word_level
from driftwatch.schema import level_text
from driftwatch.textnumbers import number_in
from driftwatch.windows.conventions import norm_value
from driftwatch.windows.profile import is_parquet

__all__ = ["apart", "choose_features", "constant_advice", "csv_missing_texts",
           "flag_spelled_otherwise", "predicted_class", "row_index"]

#: pandas names a CSV column with a blank header ``Unnamed: N``: the index it wrote.
_BLANK_HEADER = re.compile(r"Unnamed: \d+")


def row_index(ref: pd.DataFrame, col: str) -> bool:
    """A blank-headed column of unique integers: the row numbers pandas wrote with the
    table, not a feature (and never in a live stream).

    >>> row_index(pd.DataFrame({"Unnamed: 0": [0, 1, 2], "x": [1, 1, 2]}), "Unnamed: 0")
    True
    """
    s = ref[col]
    return (bool(_BLANK_HEADER.fullmatch(col)) and pd.api.types.is_integer_dtype(s)
            and s.notna().all() and s.is_unique)


def predicted_class(ref: pd.DataFrame, col: str) -> bool:
    """A column named like the model's predicted class (``y_pred``) with a few values.

    >>> ref = pd.DataFrame({"y_pred": [0, 1, 1], "pred_amount": [3.5, 1.2, 9.9]})
    >>> predicted_class(ref, "y_pred"), predicted_class(ref, "pred_amount")
    (True, False)
    """
    return (name_rank(col, *PREDICTED) >= 2
            and ref[col].nunique(dropna=True) <= MAX_INT_LEVELS)


def apart(ref: pd.Series, kind: str, sample: list[Any], least: int = 20) -> str | None:
    """What says that none of a feature's sample values (at least ``least``) meet the
    reference: all outside its range, or none among its levels; None otherwise."""
    got = [v for v in sample if present(v)]
    if len(got) < least:
        return None
    if kind == "numeric":
        nums = pd.to_numeric(pd.Series(got, dtype=object), errors="coerce").dropna()
        lo, hi = ref.min(), ref.max()
        if len(nums) < least or not (pd.notna(lo) and pd.notna(hi)):
            return None
        if ((nums < lo) | (nums > hi)).all():
            return (f"all {len(nums)} values in the sample lie outside the reference's range "
                    f"[{lo:g}, {hi:g}] (the sample's: [{nums.min():g}, {nums.max():g}])")
        if len(got) == len(nums) and nums.nunique() > 2 and nums.is_monotonic_increasing:
            return (f"its values never decrease over the sample's {len(nums)} records "
                    f"({nums.iloc[0]:g} to {nums.iloc[-1]:g}), as a clock's do, so each "
                    "window holds a slice of the reference's range")
        return None
    levels = {norm_value(v) for v in ref.dropna().unique()}
    if levels and not any(norm_value(v) in levels for v in got):
        return (f"none of its {len(got)} values in the sample is a level the reference has "
                f"({shown(got)})")
    return None


def constant_advice(name: str, ref: pd.Series) -> str | None:
    """What to do about a number the reference holds one value of, where the sample has
    others (a count filled later, 0 throughout the training data): every live value is
    then a new category, and each window a drift. None where the reference varies, and
    for a text constant (a ``period`` column: the caller names it bookkeeping).

    >>> constant_advice("promo", pd.Series([0, 0, None]))
    'the reference holds one value, 0: a column constant in the training data gives \
nothing to compare the stream with; leave it out (--ignore promo) or give a reference \
where it varies'
    >>> constant_advice("purpose", pd.Series(["car", "home"])), constant_advice(
    ...     "period", pd.Series(["train", "train"]))
    (None, None)
    """
    values = ref.dropna().unique()
    one = values[0] if len(values) == 1 else None
    if not isinstance(one, (int, float, np.number)) or isinstance(one, (bool, np.bool_)):
        return None  # a text constant names the file, period or batch (the caller's word)
    return (f"the reference holds one value, {level_text(values[0])}: a column constant in "
            "the training data gives nothing to compare the stream with; leave it out "
            f"(--ignore {name}) or give a reference where it varies")


def flag_spelled_otherwise(ref: pd.Series, sample: list[Any]) -> str | None:
    """What says that a yes/no feature comes spelled otherwise in the sample than in the
    reference (``Y``/``N`` there, JSON ``true``/``false`` here), which replay reads side
    for side (:mod:`~driftwatch.flags`); None otherwise.

    >>> flag_spelled_otherwise(pd.Series(["Y", "N", "Y"]), [True, False, None])
    "a yes/no flag, 'N', 'Y' in the reference, 'false', 'true' in the sample"
    >>> flag_spelled_otherwise(pd.Series(["Y", "N"]), ["Y", True]) is None
    True
    """
    levels = sorted({level_text(v) for v in ref.dropna().unique()})
    sides = flag_levels(levels)
    got = sorted({level_text(v) for v in sample if present(v)})
    if sides is None or not got or set(got) & set(levels):
        return None
    if any(flag_level(v, sides) is None for v in got):
        return None
    return (f"a yes/no flag, {', '.join(map(repr, levels))} in the reference, "
            f"{', '.join(map(repr, got))} in the sample")


def _reads(fmt: str, v: str, decimal: str = ".") -> bool:
    try:
        number_in(fmt, v, decimal)
    except ValueError:
        return False
    return True


def _number(fmt: str, v: Any, decimal: str = ".") -> Any:
    """Text ``v`` read in ``fmt`` (from a file whose decimal mark is ``decimal``) where it
    reads so, anything else as it is."""
    return number_in(fmt, v, decimal) if isinstance(v, str) and _reads(fmt, v, decimal) else v


#: How a feature line says what each text format reads as
_READ_AS = {"percent": "the number before the sign", "money": "the amount"}


def _example(fmt: str, sources: Sequence[tuple[Sequence[Any], str]]
             ) -> tuple[str, float] | None:
    """The first text value of ``sources`` (values and their file's decimal mark, the
    stream's first: the connector reads it) that reads in ``fmt``, and what it reads as."""
    for values, decimal in sources:
        for v in values:
            if isinstance(v, str) and v.strip() and _reads(fmt, v, decimal):
                return v, float(number_in(fmt, v, decimal))
    return None


def _text_why(fmt: str, ref: pd.Series, sample: list[str], marks: tuple[str, str]) -> str:
    """The feature line of a column of percent or money text (in the reference, the sample
    or both; ``marks``: their files' decimal marks)."""
    where = [w for w, vs, d in (("the reference", ref.tolist(), marks[0]),
                                ("the sample", sample, marks[1]))
             if text_format(vs, most=True, decimal=d) == fmt]
    return (f"{fmt} text in {' and '.join(where)} "
            f"({shown(ref.tolist() if where[0] == 'the reference' else sample, 2)}): read as "
            f"{_READ_AS[fmt]}, live and in the reference (format: {fmt})")


def _ignore_columns(plan: Plan, ref: pd.DataFrame, paths: Sequence[str],
                    used: Collection[str], ignore: Sequence[str]) -> None:
    """Put the reference columns that are not features in ``plan.ignore``, saying why."""
    for c in [str(c) for c in ref.columns]:
        if c in (plan.ref_label, plan.ref_score, plan.ref_decision):
            continue
        if c in ignore:
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "from --ignore")
        elif row_index(ref, c):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "a blank header over unique row numbers: the index "
                     "pandas wrote with the table")
        elif ((stream_path(c, paths) or "") in used or name_rank(c, *ID) == 3
              or name_rank(c, *TIME) == 3):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "the id or time, not a feature")
        elif ref[c].isna().all():
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", f"missing on every one of the reference's {len(ref)} rows: "
                     "nothing to measure the stream's values against (any value would read "
                     "as drift); fill it in the reference to watch it")
        elif predicted_class(ref, c):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "the model's predicted class: an output, not an input (a "
                     "retrained model must not learn from it); "
                     + ("the score's PSI watches its shift" if plan.ref_score else
                        "--decision-field it if it approves or declines"))
        elif ((why := not_a_feature(ref[c], frame_decimal(ref)))
              or (why := digit_dates(ref[c].unique()))):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", why)


def csv_missing_texts(values: Sequence[Any], *, numeric: bool = False
                      ) -> tuple[list[str], str] | None:
    """Text among a stream's sample ``values`` that a CSV reference reads as missing
    (``"n/a"``, ``"None"``: :data:`~driftwatch.csvnulls.CSV_MISSING`), with the reason:
    read otherwise, each would be a level the reference never saw, a new category in every
    window (Lending Club's ``emp_length``, sent by a JSON service). ``numeric``: the
    reference holds numbers there, whatever its format, and such text (R's ``"NA"``) can
    only be a missing number: read otherwise, each record would be dead-lettered as
    ``wrong_type`` and the feature's missing share would read as drift.

    >>> csv_missing_texts(["n/a", "1 year", "n/a", None, "< 1 year"])
    (['n/a'], "'n/a' in 2 of 5 sample records: text the reference CSV reads as missing")
    >>> texts, why = csv_missing_texts([5200.0, "NA", None], numeric=True)
    >>> print(texts, why)  # doctest: +ELLIPSIS
    ['NA'] 'NA' in 1 of 3 sample records where the reference has numbers: text a CSV reads ...
    >>> csv_missing_texts(["none", "NA Corp", ""]) is None
    True
    """
    found = [v for v in values if isinstance(v, str) and v and v in CSV_MISSING]
    if not found:
        return None
    texts = sorted(set(found))
    counts = ", ".join(f"{t!r} in {found.count(t)}" for t in texts)
    if numeric:
        return texts, (f"{counts} of {len(values)} sample records where the reference has "
                       "numbers: text a CSV reads as missing")
    return texts, (f"{counts} of {len(values)} sample records: text the reference CSV "
                   "reads as missing")


def _with(codes: tuple[list[Any], str] | None, more: tuple[list[Any], str]
          ) -> tuple[list[Any], str]:
    """Missing-value ``codes`` and their reason, with ``more`` added."""
    return ([*(codes[0] if codes else ()), *more[0]],
            "; ".join(w for w in (codes[1] if codes else "", more[1]) if w))


#: One value of these in a whole column may be a label of one class (0/1, yes/no, ...).
_OUTCOME_TEXTS = frozenset({"0", "1", "y", "n", "yes", "no", "true", "false", "good", "bad"})


def _one_outcome(col: pd.Series) -> bool:
    """Whether ``col`` holds one value, one a binary label is written with."""
    present = col.dropna().unique()
    if len(present) != 1:
        return False
    v = present[0]
    if isinstance(v, int | float | np.number) and not isinstance(v, bool | np.bool_):
        return float(v) in (0.0, 1.0)
    return str(v).strip().lower() in _OUTCOME_TEXTS


def choose_features(plan: Plan, ref: pd.DataFrame, paths: Sequence[str],
                    vals: Callable[[str], list[Any]], used: Collection[str],
                    ignore: Sequence[str], where: str, reference: str,
                    text_codes: Mapping[str, tuple[list[str], str]] | None = None,
                    sample_decimal: str = ".") -> None:
    """Fill ``plan.ignore`` and ``plan.features`` from the reference's columns other than
    the label, score and decision (``used``: the stream paths of the id, time, score and
    decision), saying each; ``text_codes``: the texts that stand for missing among a
    column's numbers, by column (:mod:`~driftwatch.onboard.textcodes`), which the sample's
    values of it are read without; ``sample_decimal``: the sample CSV's decimal mark (the
    reference's is in its ``attrs``: :func:`~driftwatch.csvdecimal.frame_decimal`), which
    money text is read with. Raises :class:`~driftwatch.errors.ConfigError` when a column
    is not in the sample ``where`` or none is a feature."""
    _ignore_columns(plan, ref, paths, used, ignore)
    marks = (frame_decimal(ref), sample_decimal)
    missing, unnamed = [], []
    for c in [str(c) for c in ref.columns]:
        if c in plan.ignore or c in (plan.ref_label, plan.ref_score, plan.ref_decision):
            continue
        p = stream_path(c, paths)
        if p is None:
            missing.append(c)
            continue
        if not FieldPath.is_valid(p):
            unnamed.append(c)  # a connector could not name it: no path has an empty part
            continue
        kind, why = column_kind(ref[c])
        col, sample = ref[c], vals(p)
        coded = (text_codes or {}).get(c)
        if coded:
            sample = [None if isinstance(v, str) and v.strip() in coded[0] else v
                      for v in sample]
        # "NA", "null" where the reference has numbers: a missing number, not a wrong type
        absent = csv_missing_texts(sample, numeric=True) if kind == "numeric" else None
        if absent:
            sample = [None if isinstance(v, str) and v in absent[0] else v for v in sample]
        text = [v for v in sample if isinstance(v, str)]
        fmt = text_format(col, decimal=marks[0]) or (
            text_format(text, most=True, decimal=marks[1]) if kind == "numeric" else None)
        example = None
        if fmt:  # read as numbers on both sides, as replay reads them
            kind, why = "numeric", _text_why(fmt, col, text, marks)
            example = _example(fmt, ((text, marks[1]), (col.tolist(), marks[0])))
            col = pd.Series([number_in(fmt, v, marks[0]) for v in col], index=col.index,
                            dtype=float)
            sample = [_number(fmt, v, marks[1]) for v in sample]
        # a few-valued integer column too; one named as codes has no order (Porto's -1)
        codes = likely_missing_values(col, codes=named_codes(c))
        if coded:
            codes = _with(codes, coded)
        if absent:
            codes = _with(codes, absent)
        if kind == "categorical" and not is_parquet(reference) and (
                texts := csv_missing_texts(vals(p))):
            codes = _with(codes, texts)
        plan.features.append(Feature(c, p, kind, why, *((tuple(codes[0]), codes[1])
                                                         if codes else ()), format=fmt,
                                    example=example))
        if kind == "categorical" and (flag := flag_spelled_otherwise(ref[c], vals(p))):
            plan.say(f"  {c}: flag", f"{flag}: each read as the reference's value of the "
                     "same side")
        elif far := apart(col, kind, sample):
            # read in record order, a clock among the features may be the time to take
            hint = clock_hint(p, sample) if plan.predictions.time_source == "order" else None
            plan.say(f"  warning: {c}", f"{far}: " + (
                f"a time or counter that grows is not a feature (--ignore {c}); "
                + (f"{hint}; " if hint else "") + "a unit change is a fault to fix upstream"
                if kind == "numeric" else constant_advice(c, col) or
                f"a column that names the file, period or batch is not a feature (--ignore "
                f"{c}); renamed categories are a fault to fix upstream"))
        if fmt and (bad := [v for v in text if not _reads(fmt, v, marks[1])]):
            plan.say(f"  warning: {c}", f"text at {p} in the sample that is no "
                     f"{'percentage' if fmt == 'percent' else 'amount'} ({shown(bad)}): "
                     "replay counts those records as wrong_type")
        elif kind == "numeric" and text and not fmt:
            # the decoder's own reading of text as numbers (numbers_as_text, as in a CSV)
            unread = numeric(text, lenient=True, bools=True)[1]
            if not unread.any():
                plan.predictions.numbers_as_text = True
                plan.say(f"  {c}: numbers as text", f"{shown(text)} at {p} in the sample: "
                         "the stream reads numbers written as text (numbers_as_text: true)")
            else:
                bad = [v for v, no in zip(text, unread.tolist(), strict=True) if no]
                plan.say(f"  warning: {c}", f"numbers in the reference, text at {p} in the "
                         f"sample ({shown(bad)}): replay counts those records as wrong_type")
    if unnamed:
        raise ConfigError(
            "reference columns whose names cannot be a connector field path (a dotted path "
            f"with no empty part): {', '.join(map(repr, unnamed))}", file=reference,
            hint="rename them in the reference and the stream, or pass --ignore COL for "
            "each")
    if missing:
        hint = ("map their fields by name, or pass --ignore COL for columns the live stream "
                "does not carry")
        two = [c for c in missing if two_values(lambda n: ref[n].tolist())(c)]
        if two and (plan.ref_label is None or carried(plan.ref_label, paths)):
            # most likely the outcome, which comes later (a label the predictions carry is
            # a feature named like one)
            hint = (f"if {two[0]} is the label, pass --label-field {two[0]} (or "
                    f"{two[0]}=NAME where the outcomes name it NAME; and --outcomes FILE, a "
                    f"sample of the outcomes stream); else {hint}")
        elif one := [c for c in missing if _one_outcome(ref[c])]:
            # a label of one class reads as no label at all: say so, not "not found" alone
            value = ref[one[0]].dropna().iloc[0]
            value = value.item() if hasattr(value, "item") else value  # numpy: as written
            hint = (f"{one[0]} holds one value in the reference ({value!r}): if it is the "
                    "label, the reference needs rows of both outcomes, bad and good; else "
                    f"{hint}")
        raise ConfigError(
            f"reference columns not found in the sample {where}: " + ", ".join(missing),
            file=reference, hint=hint)

    if not plan.features:
        raise ConfigError("the reference has no feature columns", file=reference)
    kinds = pd.Series([f.kind for f in plan.features]).value_counts().to_dict()
    plan.say(f"features: {len(plan.features)}", ", ".join(f"{n} {k}" for k, n in
                                                          sorted(kinds.items())))
    for f in plan.features:
        plan.say(f"  {f.name}: {f.kind}", f.why + (f" at {f.path}" if f.path != f.name
                                                     else ""))
        if f.missing:
            plan.say(f"    missing: {list(f.missing)}", f"{f.missing_why} (connector "
                     "missing_values_by_feature; remove a value that is a real one)")
        elif f.kind == "categorical" and f.name in ref.columns \
                and (level := missing_word_level(ref[f.name])) is not None:
            plan.say(f"    kept: {level[0]!r}", f"in {level[1]:.1%} of rows, named like a "
                     "missing value: kept as a category, so a rise in it reads as drift; if it "
                     "stands for missing, add it to the connector's missing_values_by_feature "
                     f"({f.name}: [{level[0]!r}]), and a rise is a data-quality fault instead")
        if f.kind == "categorical" and f.name in ref.columns \
                and (held := placeholder_note(ref[f.name], f.missing)):
            plan.say(f"    placeholder: {held[0]}", held[1])
