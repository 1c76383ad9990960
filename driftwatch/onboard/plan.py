"""``driftwatch init``'s decisions: which field is what, with the reason for each.

:func:`make_plan` reads a reference table and a stream sample (and optionally an
outcomes sample) and returns a :class:`Plan`: the features with their types and paths,
the id, time, score, label, decision and exposure fields, and the reference columns to
ignore. :mod:`driftwatch.onboard.write` turns a plan into a connector and a policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from driftwatch.errors import ConfigError
from driftwatch.onboard.infer import (
    Candidate,
    choose,
    column_kind,
    label_values,
    leaf,
    name_rank,
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
    time_check,
    two_values,
    unique_check,
)

__all__ = ["Feature", "Options", "Plan", "Sample", "StreamPlan", "make_plan"]

@dataclass(frozen=True)
class Sample:
    """Flat records of a stream and where they came from (a file, or a Kafka topic)."""

    rows: list[dict[str, Any]]
    name: str  # the file, or "topic T"
    path: str | None = None  # a file path, for the connector's paths
    topic: str | None = None

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


@dataclass
class StreamPlan:
    name: str  # predictions | outcomes
    sample: Sample
    id_path: str
    time_path: str | None  # None: time_source says where time comes from
    time_unit: str = "auto"
    time_source: str = "payload"  # payload | kafka_timestamp | arrival
    score: str | None = None
    decision: str | None = None
    approve: list[Any] = field(default_factory=list)
    exposure: str | None = None
    model_version: str | None = None
    label: str | None = None
    bad: list[Any] = field(default_factory=list)
    good: list[Any] = field(default_factory=list)


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


def _label_by_place(cols: Sequence[str], ref_vals: Any, paths: Sequence[str],
                    outcome_paths: Sequence[str], reference: str) -> Candidate | None:
    """The label when no column is named like one: the one two-valued reference column
    that the outcomes sample carries and the predictions sample does not (a model's
    outcome arrives later, on its own stream)."""
    check = two_values(ref_vals)
    hits = [c for c in cols if _match(c, paths) is None and _match(c, outcome_paths)
            is not None and check(c) is not None]
    if len(hits) > 1:
        raise ConfigError("several reference columns could be the label (two values, in "
                          "the outcomes sample only): " + ", ".join(hits), file=reference,
                          hint="pass --label-field NAME")
    if not hits:
        return None
    return Candidate(hits[0], 1, "two values, in the outcomes sample and not in the "
                     "predictions")


def _role(role: str, spec: tuple[Any, ...], names: Sequence[str], check: Any, flag: str,
          given: str | None, where: str, required: bool = False,
          by_values: Callable[[], list[Candidate]] | None = None) -> Candidate | None:
    """The field for ``role``: ``given`` by its flag, else the best named candidate, else
    (``by_values``) the candidates found by their values alone."""
    if given is not None:
        if given.lower() == "none" and not required:
            return None
        return Candidate(_given(flag, given, names, where), 4, f"from {flag}")
    found = _candidates(names, spec, check)
    if not found and by_values is not None:
        found = by_values()
    if not found and required:
        named = [n for n in names if name_rank(n, *spec)]
        if named:  # say why the fields named like it were passed over
            raise ConfigError(f"cannot find the {role} field: " + ", ".join(named[:3])
                              + (" is" if len(named) == 1 else " are") + " named like one, "
                              f"but {_UNFIT.get(role, 'its values do not fit')}",
                              file=where, hint=f"pass {flag} NAME")
    return choose(role, found, flag, where, required=required)


#: Why a field named like a role was passed over, by role
_UNFIT = {"id": "has missing or repeated values in the sample (more than 1% repeats)",
          "event time": "its values do not all read as epoch seconds, epoch milliseconds, "
                        "ISO-8601 text or timestamps",
          "outcomes label": "it does not have exactly two distinct values"}


def _times_by_value(names: Sequence[str], vals: Callable[[str], list[Any]]
                    ) -> Callable[[], list[Candidate]]:
    """Fields not named like a time whose every value is ISO-8601 text or a timestamp
    (``txn.at``, ``reported``); numbers are left out, an epoch may be any count."""
    def find() -> list[Candidate]:
        out = []
        for n in names:
            unit = time_unit(vals(n))
            if unit in ("iso", "auto"):
                what = "ISO-8601 text" if unit == "iso" else "timestamps"
                out.append(Candidate(n, 0, f"every value reads as a time ({what})"))
        return out
    return find


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
    if lab is None and opts.label_field is None and outcomes is not None:
        lab = _label_by_place(cols, ref_vals, paths, outcomes.paths(), reference)
    sc = _role("score column", SCORE, [c for c in cols if not lab or c != lab.name],
               score_check(ref_vals), "--score-field", opts.score_field, reference)
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
    if sc:
        plan.ref_score = sc.name
        plan.score_is = opts.score_is or _score_is(ref, sc.name, plan)
    if dec:
        plan.ref_decision = dec.name
        plan.ref_approve = _approve(ref[dec.name].tolist(), opts.approve)
        plan.say(f"decision: {dec.name}", f"{dec.why}; approve = {plan.ref_approve}")
    # -- the predictions stream
    vals = sample.values
    idc = _role("id", ID, paths, unique_check(vals), "--id-field", opts.id_field, where,
                required=True)
    assert idc is not None
    sp = plan.predictions
    sp.id_path = idc.name
    plan.say(f"id: {idc.name}", idc.why)
    others = [p for p in paths if p != idc.name]
    tc = _role("event time", TIME, others, time_check(vals), "--time-field", opts.time_field,
               where, required=sample.topic is None, by_values=_times_by_value(others, vals))
    if tc is None:
        sp.time_source = "kafka_timestamp"
        plan.say("event time: Kafka record timestamp", "no field reads as event time")
    else:
        sp.time_path, sp.time_unit = tc.name, time_unit(vals(tc.name)) or "auto"
        plan.say(f"event time: {tc.name}", tc.why)
    sp.score = _stream_of(plan.ref_score, paths) if plan.ref_score else None
    if sp.score is None and plan.ref_score is None:
        c = _role("score", SCORE, paths, score_check(vals), "--score-field", None, where)
        sp.score = c.name if c else None
    if sp.score:
        plan.say(f"score: {sp.score}", f"P({'good' if plan.score_is == 'p_good' else 'bad'})"
                 + (f"; reference column {plan.ref_score}" if plan.ref_score else ""))
    else:
        plan.say("score: none", "no field in [0, 1] named like a score")
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
        elif ((_match(c, paths) or "") in used or name_rank(c, *ID) == 3
              or name_rank(c, *TIME) == 3):
            plan.ignore.append(c)
            plan.say(f"ignore: {c}", "the id or time, not a feature")
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
        plan.features.append(Feature(c, p, kind, why))
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
    if outcomes is not None:
        plan.outcomes = _outcomes(plan, outcomes, opts)
    else:
        plan.say("outcomes: none", "no outcomes sample; label-based metrics stay off")
    return plan


def _stream_of(col: str, paths: Sequence[str]) -> str | None:
    return _match(col, paths)


def _score_is(ref: pd.DataFrame, col: str, plan: Plan) -> str:
    if plan.ref_label is None:
        good_name = "good" in col.lower()
        plan.say(f"score: {col}", "P(good): the name says good" if good_name
                 else "P(bad): no label to check it against (--score-is to change)")
        return "p_good" if good_name else "p_bad"
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
        plan.say(f"score: {col}", f"P({'good' if good_name else 'bad'}): {means}, too close "
                 f"to tell (AUC {auc:.2f}), so {'the name' if good_name else 'the usual'}; "
                 "--score-is to change")
        return "p_good" if good_name else "p_bad"
    is_good = auc < 0.5
    plan.say(f"score: {col}", f"P({'good' if is_good else 'bad'}): {means} (AUC {auc:.2f})")
    return "p_good" if is_good else "p_bad"


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
    bad = opts.label_bad or [str(v) for v in plan.ref_bad]
    out.bad, out.good = label_values(vals(lab), where, bad) if bad else label_values(
        vals(lab), where)
    plan.say(f"outcomes label: {lab}", f"bad = {out.bad}, good = {out.good}")
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
        out.time_path, out.time_unit = tc.name, time_unit(vals(tc.name)) or "auto"
        plan.say(f"outcomes time: {tc.name}", tc.why)
    return out
