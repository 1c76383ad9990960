"""``driftwatch init``'s decisions: which field is what, with the reason for each.

:func:`make_plan` reads a reference table and a stream sample (and optionally an
outcomes sample) and returns a :class:`Plan`: the features with their types and paths,
the id, time, score, label, decision and exposure fields, and the reference columns to
ignore. :mod:`driftwatch.onboard.write` turns a plan into a connector and a policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import (
    TIME_FORMATS,
    Candidate,
    choose,
    column_kind,
    label_values,
    leaf,
    looked_for,
    name_rank,
    not_a_feature,
    text_formats,
    time_unit,
)
from driftwatch.onboard.roles import (
    APPROVE,
    DECISION,
    EXPOSURE,
    ID,
    LABEL,
    SCORE,
    TIME,
    VERSION,
    decision_check,
    exposure_check,
    present,
    score_check,
    shown,
    time_check,
    two_values,
    unique_check,
)
from driftwatch.onboard.sentinels import likely_missing_values
from driftwatch.onboard.times import check_time_format, counts_from_start, time_reading
from driftwatch.windows.conventions import norm_value

__all__ = ["Feature", "Options", "Plan", "Sample", "StreamPlan", "make_plan"]

@dataclass(frozen=True)
class Sample:
    """Flat records of a stream and where they came from (a file, or a Kafka topic)."""

    rows: list[dict[str, Any]]
    name: str  # the file, or "topic T"
    path: str | None = None  # a file path, for the connector's paths
    topic: str | None = None
    delimiter: str | None = None  # a CSV's separator when not the comma, for the connector

    def paths(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.update(dict.fromkeys(r))
        return list(seen)

    def values(self, path: str) -> list[Any]:
        return [r.get(path) for r in self.rows]


@dataclass
class Options:
    """What the user said (flags); None leaves it to the heuristics."""

    model: str = "my-model"
    id_field: str | None = None
    time_field: str | None = None
    time_format: str | None = None  # strptime format of a text event time
    score_field: str | None = None
    label_field: str | None = None
    decision_field: str | None = None
    exposure_field: str | None = None
    score_is: str | None = None
    label_bad: list[str] = field(default_factory=list)
    approve: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Feature:
    name: str  # the reference column
    path: str  # the stream path
    kind: str  # numeric | categorical
    why: str
    missing: tuple[int | float, ...] = ()  # likely codes for missing ...
    missing_why: str = ""  # ... and what gave them away


@dataclass
class StreamPlan:
    name: str  # predictions | outcomes
    sample: Sample
    id_path: str
    time_path: str | None  # None: time_source says where time comes from
    time_unit: str = "auto"
    time_source: str = "payload"  # payload | kafka_timestamp | arrival
    time_format: str | None = None  # strptime format of a text time
    time_offsets: bool = False  # counts from a start: the connector needs an origin
    score: str | None = None
    decision: str | None = None
    approve: list[Any] = field(default_factory=list)
    exposure: str | None = None
    model_version: str | None = None
    label: str | None = None
    bad: list[Any] = field(default_factory=list)
    good: list[Any] = field(default_factory=list)
    pending: list[Any] = field(default_factory=list)  # label values: no outcome yet


@dataclass
class Plan:
    model: str
    reference: str
    features: list[Feature]
    ignore: list[str]
    predictions: StreamPlan
    outcomes: StreamPlan | None
    ref_score: str | None = None
    score_is: str = "p_bad"
    ref_label: str | None = None
    ref_bad: list[Any] = field(default_factory=list)
    ref_good: list[Any] = field(default_factory=list)
    ref_decision: str | None = None
    ref_approve: list[Any] = field(default_factory=list)
    ref_exposure: str | None = None
    lines: list[str] = field(default_factory=list)

    def say(self, what: str, why: str) -> None:
        self.lines.append(f"{what:<34} {why}")


def _candidates(names: Sequence[str], spec: tuple[Any, ...], check: Any) -> list[Candidate]:
    out = []
    for n in names:
        rank = name_rank(n, *spec)
        if rank:
            why = check(n)
            if why:
                out.append(Candidate(n, rank, why))
    return out


def _given(flag: str, value: str, names: Sequence[str], where: str) -> str:
    if value in names:
        return value
    by_leaf = [n for n in names if leaf(n) == value]
    if len(by_leaf) == 1:
        return by_leaf[0]
    raise ConfigError(f"{flag} {value!r}: no such field", file=where,
                      hint="fields: " + ", ".join(list(names)[:20]))


def _match(col: str, paths: Sequence[str]) -> str | None:
    """The stream path of reference column ``col``: the same path, or the one path whose
    last segment (or whose path with '_' for '.') is the column's name."""
    if col in paths:
        return col
    for test in (lambda p: leaf(p) == col, lambda p: p.replace(".", "_") == col):
        hits = [p for p in paths if test(p)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ConfigError(f"reference column {col!r} matches several fields: "
                              + ", ".join(hits), hint="rename the column as the full path")
    return None


def _time_todo(name: str, vals: list[Any]) -> str:
    todo = "convert it to epoch time (seconds or milliseconds since 1970) or ISO-8601"
    if counts_from_start(vals):
        return (f"{todo}; if it counts from a start, pass --time-field {name} and init "
                "prints the origin: to add")
    return f"{todo}, or pass --time-format FORMAT for dates written otherwise"


#: What a required role that is absent needs: the fix when no field is named like it, the
#: fix when the first one named like it has values that do not fit, and why they do not.
_ABSENT: dict[str, tuple[str, Callable[[str, list[Any]], str], Callable[[list[Any]], str]]] = {
    "id": ("add a unique id to every record (outcomes join on it)",
           lambda name, vals: "make it unique per record",
           lambda vals: "its values are missing or repeat (more than 1% of them) in the "
           "sample"),
    "event time": ("add each record's event time (epoch seconds or milliseconds, or "
                   "ISO-8601)", _time_todo,
                   lambda vals: f"its values ({shown(vals)}) are not epoch seconds, "
                   "milliseconds or ISO-8601 times, nor dates in a common format"),
}


def _role(role: str, spec: tuple[Any, ...], names: Sequence[str], check: Any, flag: str,
          given: str | None, where: str, required: bool = False,
          values: Any = None,
          by_values: Callable[[], list[Candidate]] | None = None) -> Candidate | None:
    """The field for ``role``: ``given`` by its flag, else the best named candidate, else
    (``by_values``) the candidates found by their values alone; ``values`` reads a field's
    sample values, for what a required role's error says."""
    if given is not None:
        if given.lower() == "none" and not required:
            return None
        return Candidate(_given(flag, given, names, where), 4, f"from {flag}")
    found = _candidates(names, spec, check)
    if not found and by_values is not None:
        found = by_values()
    missing = todo = ""
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


def _times_by_value(names: Sequence[str], vals: Callable[[str], list[Any]],
                    fmt: str | None = None) -> Callable[[], list[Candidate]]:
    """Fields not named like a time whose every value is ISO-8601 text, a timestamp or text
    in a common date format (``txn.at``, ``reported``, Lending Club's ``issue_d``); numbers
    are left out, an epoch may be any count. ``fmt``: the user's ``--time-format``."""
    def find() -> list[Candidate]:
        out = []
        for n in names:
            unit = time_unit(vals(n))
            if unit in ("iso", "auto"):
                what = "ISO-8601 text" if unit == "iso" else "timestamps"
                out.append(Candidate(n, 0, f"every value reads as a time ({what})"))
            elif unit is None and (formats := text_formats(vals(n), (fmt,) if fmt
                                                                   else TIME_FORMATS)):
                out.append(Candidate(n, 0, "every value reads as a time (text in "
                                     f"{' or '.join(formats)})"))
        return out
    return find


def _resolves(value: str | None, names: Sequence[str]) -> bool:
    """Whether ``--x-field value`` names one of ``names`` (as :func:`_given` reads it)."""
    return value is not None and (value in names
                                  or sum(leaf(n) == value for n in names) == 1)


#: pandas names a CSV column with a blank header ``Unnamed: N``: the index it wrote.
_BLANK_HEADER = re.compile(r"Unnamed: \d+")


def _row_index(ref: pd.DataFrame, col: str) -> bool:
    """A blank-headed column of unique integers: the row numbers pandas wrote with the
    table, not a feature (and never in a live stream)."""
    s = ref[col]
    return (bool(_BLANK_HEADER.fullmatch(col)) and pd.api.types.is_integer_dtype(s)
            and s.notna().all() and s.is_unique)


def _label_from_outcomes(ref: pd.DataFrame, cols: Sequence[str], sample: Sample,
                         outcomes: Sample | None) -> Candidate | None:
    """The one two-valued reference column the outcomes sample carries and the predictions
    do not: the label, whatever its name (``SeriousDlqin2yrs``, ``Class``)."""
    if outcomes is None:
        return None
    out_paths, pred_paths = outcomes.paths(), sample.paths()

    def carried(c: str, paths: Sequence[str]) -> bool:
        try:
            return _match(c, paths) is not None
        except ConfigError:  # several fields end so: not this column's
            return False

    hits = [c for c in cols if ref[c].nunique() == 2 and carried(c, out_paths)
            and not carried(c, pred_paths)]
    if len(hits) > 1:
        raise ConfigError("several reference columns could be the label (two values, in "
                          "the outcomes sample only): " + ", ".join(hits),
                          file=outcomes.name, hint="pass --label-field NAME")
    if not hits:
        return None
    return Candidate(hits[0], 2, "two distinct values, in the outcomes sample and not in "
                     "the predictions")


def make_plan(ref: pd.DataFrame, reference: str, sample: Sample, outcomes: Sample | None,
              opts: Options) -> Plan:
    """Decide every field; raises :class:`~driftwatch.errors.ConfigError` when a role is
    ambiguous or a column cannot be placed."""
    cols = [str(c) for c in ref.columns]
    ref_vals = lambda n: ref[n].tolist()  # noqa: E731
    paths = sample.paths()
    where = sample.name
    # -- the reference's own roles
    lab = _role("label column", LABEL, cols, two_values(ref_vals), "--label-field",
                opts.label_field, reference)
    if lab is None and opts.label_field is None:
        lab = _label_from_outcomes(ref, cols, sample, outcomes)
    # --score-field may name the stream's score alone (the reference's is found by name)
    score_flag = opts.score_field
    stream_score_only = (score_flag is not None and not _resolves(score_flag, cols)
                         and _resolves(score_flag, sample.paths()))
    sc = _role("score column", SCORE, [c for c in cols if not lab or c != lab.name],
               score_check(ref_vals), "--score-field",
               None if stream_score_only else score_flag, reference)
    dec = _role("decision column", DECISION, cols, decision_check(ref_vals),
                "--decision-field", opts.decision_field, reference)
    plan = Plan(model=opts.model, reference=reference, features=[], ignore=[],
                predictions=StreamPlan("predictions", sample, "", None), outcomes=None)
    if lab:
        plan.ref_label = lab.name
        plan.ref_bad, plan.ref_good = label_values(ref[lab.name].tolist(), reference,
                                                   opts.label_bad)
        plan.say(f"label: {lab.name}", f"{lab.why}; bad = {plan.ref_bad}, good = "
                 f"{plan.ref_good}")
    else:
        plan.say("label: none", "no two-valued column named like a label in the reference")
    score_why = None  # why the reference's score reads as P(bad) or P(good)
    if sc:
        plan.ref_score = sc.name
        if opts.score_is:
            plan.score_is = opts.score_is
            score_why = (f"P({'good' if opts.score_is == 'p_good' else 'bad'}), as "
                         "--score-is says")
        else:
            plan.score_is, score_why = _score_is(ref, sc.name, plan)
    if dec:
        plan.ref_decision = dec.name
        plan.ref_approve = _approve(ref[dec.name].tolist(), opts.approve)
        plan.say(f"decision: {dec.name}", f"{dec.why}; approve = {plan.ref_approve}")
    # -- the predictions stream
    vals = sample.values
    idc = _role("id", ID, paths, unique_check(vals), "--id-field", opts.id_field, where,
                required=True, values=vals)
    assert idc is not None
    sp = plan.predictions
    sp.id_path = idc.name
    plan.say(f"id: {idc.name}", idc.why)
    others = [p for p in paths if p != idc.name]
    check_time_format(opts.time_format, where)
    tc = _role("event time", TIME, others, time_check(vals, opts.time_format), "--time-field",
               opts.time_field, where, required=sample.topic is None, values=vals,
               by_values=_times_by_value(others, vals, opts.time_format))
    if tc is None:
        if opts.time_format is not None:
            raise ConfigError("--time-format needs a time field, and no field reads as event "
                              "time", file=where, hint="pass --time-field NAME")
        sp.time_source = "kafka_timestamp"
        plan.say("event time: Kafka record timestamp", "no field reads as event time")
    else:
        plan.say(f"event time: {tc.name}", tc.why)
        _read_time(plan, sp, tc.name, vals(tc.name), where, opts.time_format)
    sp.score = _stream_of(plan.ref_score, paths) if plan.ref_score else None
    if sp.score is None:  # none in the reference, or one named otherwise in the stream
        c = _role("score", SCORE, paths, score_check(vals), "--score-field",
                  score_flag if _resolves(score_flag, paths) else None, where)
        sp.score = c.name if c else None
    plan.say(*_score_line(sp.score, plan.ref_score, plan.score_is, score_why))
    if plan.ref_decision:
        sp.decision = _stream_of(plan.ref_decision, paths)
        sp.approve = plan.ref_approve
    ex = _role("exposure", EXPOSURE, paths, exposure_check(vals), "--exposure-field",
               opts.exposure_field, where)
    if ex:
        sp.exposure = ex.name
        plan.ref_exposure = next((c for c in cols if _match(c, [ex.name])), None)
        plan.say(f"exposure: {ex.name}", ex.why)
    ver = [p for p in paths if name_rank(p, *VERSION) == 3]
    sp.model_version = ver[0] if ver else None
    # -- reference columns that are not features
    used = {p for p in (idc.name, tc.name if tc else None, sp.score, sp.decision) if p}
    for c in cols:
        if c in (plan.ref_label, plan.ref_score, plan.ref_decision):
            continue
        if c in opts.ignore:
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "from --ignore")
        elif _row_index(ref, c):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "a blank header over unique row numbers: the index "
                     "pandas wrote with the table")
        elif ((_match(c, paths) or "") in used or name_rank(c, *ID) == 3
              or name_rank(c, *TIME) == 3):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "the id or time, not a feature")
        elif why := not_a_feature(ref[c]):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", why)
    # -- features: every other column, typed on the reference
    missing = []
    for c in cols:
        if c in plan.ignore or c in (plan.ref_label, plan.ref_score, plan.ref_decision):
            continue
        p = _match(c, paths)
        if p is None:
            missing.append(c)
            continue
        kind, why = column_kind(ref[c])
        codes = likely_missing_values(ref[c])  # a few-valued integer column too
        plan.features.append(Feature(c, p, kind, why, *((tuple(codes[0]), codes[1])
                                                         if codes else ())))
        if apart := _apart(ref[c], kind, vals(p)):
            plan.say(f"  warning: {c}", f"{apart}: a time or counter that grows is not a "
                     f"feature (--ignore {c}); a unit change is a fault to fix upstream")
        if kind == "numeric" and any(isinstance(v, str) for v in vals(p)):
            plan.say(f"  warning: {c}", f"numbers in the reference, text at {p} in the "
                     "sample: replay counts those records as wrong_type")
    if missing:
        hint = ("map their fields by name, or pass --ignore COL for columns the live stream "
                "does not carry")
        two = [c for c in missing if two_values(lambda n: ref[n].tolist())(c)]
        if two and plan.ref_label is None:  # most likely the outcome, which comes later
            hint = (f"if {two[0]} is the label, pass --label-field {two[0]} (and --outcomes "
                    f"FILE, a sample of the outcomes stream); else {hint}")
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
    if outcomes is not None:
        plan.outcomes = _outcomes(plan, outcomes, opts)
    else:
        plan.say("outcomes: none", "no outcomes sample; label-based metrics stay off")
    return plan


def _apart(ref: pd.Series, kind: str, sample: list[Any], least: int = 20) -> str | None:
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


def _stream_of(col: str, paths: Sequence[str]) -> str | None:
    return _match(col, paths)


def _score_line(stream: str | None, ref: str | None, score_is: str,
                why: str | None) -> tuple[str, str]:
    """The one line ``init`` says about the score: the stream's field, with the reference's
    column when it is named otherwise, and how it reads.

    >>> _score_line("score", "score", "p_bad", "P(bad): mean 0.6 on bad rows (AUC 0.80)")
    ('score: score', 'P(bad): mean 0.6 on bad rows (AUC 0.80)')
    >>> _score_line("p_bad", "score", "p_bad", "P(bad): mean 0.6 on bad rows (AUC 0.80)")
    ('score: p_bad (reference: score)', 'P(bad): mean 0.6 on bad rows (AUC 0.80)')
    >>> _score_line("pd", None, "p_bad", None)[1]
    'P(bad); the reference has no score column, so its stability is not watched'
    >>> _score_line(None, "score", "p_bad", "P(bad), as --score-is says")
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


def _score_is(ref: pd.DataFrame, col: str, plan: Plan) -> tuple[str, str]:
    """Whether reference column ``col`` is P(good) or P(bad), and why."""
    if plan.ref_label is None:
        good_name = "good" in col.lower()
        return (("p_good", "P(good): the name says good") if good_name else
                ("p_bad", "P(bad): no label to check it against (--score-is to change)"))
    from driftwatch.windows.conventions import norm_value

    y = ref[plan.ref_label].map(lambda v: norm_value(v) if present(v) else None)
    bad = {norm_value(v) for v in plan.ref_bad}
    s = pd.to_numeric(ref[col], errors="coerce")
    on_bad, on_good = s[y.isin(bad)].dropna(), s[y.notna() & ~y.isin(bad)].dropna()
    m_bad, m_good = on_bad.mean(), on_good.mean()
    means = f"mean {m_bad:.3f} on bad rows, {m_good:.3f} on good ones"
    auc, z = _separation(on_bad.to_numpy(), on_good.to_numpy())
    if abs(z) < _CLEAR_Z:  # the labels cannot tell: the usual convention, said aloud
        good_name = "good" in col.lower()
        return ("p_good" if good_name else "p_bad",
                f"P({'good' if good_name else 'bad'}): {means}, too close to tell (AUC "
                f"{auc:.2f}), so {'the name' if good_name else 'the usual'}; --score-is to "
                "change")
    is_good = auc < 0.5
    return ("p_good" if is_good else "p_bad",
            f"P({'good' if is_good else 'bad'}): {means} (AUC {auc:.2f})")


#: How many standard errors from 0.5 the AUC must be before the labels decide whether a
#: score is P(bad) or P(good)
_CLEAR_Z = 3.0


def _separation(on_bad: Any, on_good: Any) -> tuple[float, float]:
    """The AUC of the score for telling bad rows from good ones, and its distance from 0.5
    in standard errors under no separation (Mann-Whitney).

    >>> auc, z = _separation([0.9, 0.8, 0.7], [0.1, 0.2, 0.3, 0.75])
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


def _approve(values: list[Any], given: list[str]) -> list[Any]:
    from driftwatch.windows.conventions import norm_value

    distinct = sorted({v for v in values if present(v)}, key=str)
    want = {norm_value(g) for g in given} if given else APPROVE
    return [v for v in distinct if norm_value(v) in want]


def _outcomes(plan: Plan, s: Sample, opts: Options) -> StreamPlan:
    paths, vals, where = s.paths(), s.values, s.name
    pred_id = plan.predictions.id_path
    id_path = pred_id if pred_id in paths else _match(leaf(pred_id), paths)
    if id_path is None:
        c = _role("outcomes id", ID, paths, unique_check(vals), "--id-field", None, where,
                  required=True)
        id_path = c.name if c else ""
    out = StreamPlan("outcomes", s, id_path, None)
    plan.say(f"outcomes id: {id_path}", "joins outcomes to predictions")
    lab = None
    if plan.ref_label:
        lab = _match(plan.ref_label, paths)
    if lab is None:
        c = _role("outcomes label", LABEL, [p for p in paths if p != id_path],
                  two_values(vals), "--label-field", None, where, required=True)
        lab = c.name if c else None
    assert lab is not None
    out.label = lab
    seen = {norm_value(v): v for v in vals(lab) if present(v)}
    known = {norm_value(v) for v in [*plan.ref_bad, *plan.ref_good]}
    if plan.ref_label and known & seen.keys():
        # the reference's values: a rare bad value may be absent from the sample's first
        # records, and a value the reference lacks ('Current': no outcome yet) is not good
        out.bad, out.good = list(plan.ref_bad), list(plan.ref_good)
    else:
        bad = opts.label_bad or [str(v) for v in plan.ref_bad]
        out.bad, out.good = label_values(vals(lab), where, bad) if bad else label_values(
            vals(lab), where)
    plan.say(f"outcomes label: {lab}", f"bad = {out.bad}, good = {out.good}")
    named = {norm_value(v) for v in [*out.bad, *out.good]}
    if other := [v for k, v in sorted(seen.items()) if k not in named]:
        out.pending = other
        plan.say(f"  pending: {lab}", ", ".join(map(repr, other[:5])) + " in the outcomes "
                 "sample is neither bad nor good in the reference: written as `pending` (no "
                 "outcome yet: left out of the join, counted in invalid_outcomes); move it to "
                 "bad or good in the connector if it is an outcome")
    rest = [p for p in paths if p not in (id_path, lab)]
    tc = _role("outcomes time", TIME, rest, time_check(vals), "--time-field", None, where,
               by_values=_times_by_value(rest, vals))
    if tc is None and s.topic is not None:
        out.time_source = "kafka_timestamp"
        plan.say("outcomes time: Kafka record timestamp", "no field reads as a time")
    elif tc is None:
        out.time_source = "arrival"
        plan.say("outcomes time: arrival", "no field reads as a time: outcomes join by id "
                 "where they arrive")
    else:
        plan.say(f"outcomes time: {tc.name}", tc.why)
        _read_time(plan, out, tc.name, vals(tc.name), where)
    return out


def _read_time(plan: Plan, sp: StreamPlan, name: str, values: list[Any], where: str,
               fmt: str | None = None) -> None:
    """Set how ``sp`` reads its time field ``name`` and say why (see
    :func:`~driftwatch.onboard.times.time_reading`)."""
    r = time_reading(name, values, where, fmt)
    sp.time_path, sp.time_unit, sp.time_format, sp.time_offsets = (
        name, r.unit, r.format, r.offsets)
    for what, why in r.lines:
        plan.say(what, why)
