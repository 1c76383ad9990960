"""``driftwatch init``'s decisions: which field is what, with the reason for each.

:func:`make_plan` reads a reference table and a stream sample (and optionally an
outcomes sample) and returns a :class:`Plan`: the features with their types and paths,
the id, time, score, label, decision and exposure fields, and the reference columns to
ignore. :mod:`driftwatch.onboard.write` turns a plan into a connector and a policy.

Each decision lives in its own module: :mod:`~driftwatch.onboard.finding` (which field
plays a role), :mod:`~driftwatch.onboard.timefields` (event time),
:mod:`~driftwatch.onboard.outputs` (what the score and decision mean) and
:mod:`~driftwatch.onboard.features` (which columns are features); this one puts them in
order.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from driftwatch.errors import ConfigError
from driftwatch.onboard.features import choose_features
from driftwatch.onboard.finding import (
    carried,
    find_role,
    ids_shared,
    label_from_outcomes,
    no_label_note,
)
from driftwatch.onboard.flags import check_ignore, check_label_bad, no_score_for
from driftwatch.onboard.infer import (
    Candidate,
    flag_truth,
    label_key,
    label_note,
    label_sides,
    leaf,
    name_rank,
    refuse_no_bad,
)
from driftwatch.onboard.leakwarn import warn_leaks
from driftwatch.onboard.matching import (
    given_field,
    label_flag,
    resolves,
    spelled_otherwise,
    stream_path,
)
from driftwatch.onboard.outcomewords import LOAN_STATES, final_side, later_values
from driftwatch.onboard.outputs import (
    named_good,
    points_scale,
    score_is,
    score_line,
    score_scale,
)
from driftwatch.onboard.plandata import Feature, Options, Plan, StreamPlan
from driftwatch.onboard.proba import proba_fields, proba_position
from driftwatch.onboard.roles import (
    DECISION,
    EXPOSURE,
    ID,
    LABEL,
    SCORE,
    TIME,
    VERSION,
    decision_check,
    exposure_check,
    label_check,
    present,
    score_check,
    shown,
    time_check,
    two_values,
    unique_check,
)
from driftwatch.onboard.sample import Sample
from driftwatch.onboard.scaledscore import sample_labels, unscaled_line
from driftwatch.onboard.streamdecision import (
    decision_values,
    names_stream_decision,
    stream_decision,
)
from driftwatch.onboard.textcodes import numbers_with_missing_texts
from driftwatch.onboard.textscore import text_score_note, with_text_numbers
from driftwatch.onboard.timefields import (
    offset_clock,
    on_prediction_clock,
    read_time,
    same_clock,
    times_by_value,
)
from driftwatch.onboard.times import check_time_format, check_time_unit
from driftwatch.onboard.unnamedscore import lacking, unnamed_score
from driftwatch.windows.conventions import norm_value

__all__ = ["Feature", "Options", "Plan", "Sample", "StreamPlan", "make_plan"]

def make_plan(ref: pd.DataFrame, reference: str, sample: Sample, outcomes: Sample | None,
              opts: Options) -> Plan:
    """Decide every field; raises :class:`~driftwatch.errors.ConfigError` when a role is
    ambiguous or a column cannot be placed."""
    # numbers with "?" for missing read as numbers in every role (the Polish bankruptcy data)
    ref, text_codes = numbers_with_missing_texts(ref)
    cols = [str(c) for c in ref.columns]
    ref_vals = lambda n: ref[n].tolist()  # noqa: E731
    paths = sample.paths()
    where = sample.name
    check_ignore(opts.ignore, cols, paths, reference)
    # -- the reference's own roles
    lab = None
    ref_label_flag = label_flag(opts.label_field, cols)[0]  # REF=STREAM: the REF
    if outcomes is not None and opts.label_field is None:
        # the label comes with the outcomes: a column the predictions carry is a feature,
        # whatever its name says (credit_risk_dataset's cb_person_default_on_file)
        later = [c for c in cols if not carried(c, paths)]
        lab = find_role("label column", LABEL, later, label_check(ref_vals), "--label-field",
                        None, reference) or label_from_outcomes(ref, cols, sample, outcomes)
    if lab is None:
        lab = find_role("label column", LABEL, cols, label_check(ref_vals), "--label-field",
                        ref_label_flag, reference)
    # --score-field may name the stream's score alone (the reference's is found by name)
    score_flag = opts.score_field
    stream_score_only = (score_flag is not None and not resolves(score_flag, cols)
                         and resolves(score_flag, sample.paths()))
    sc = find_role("score column", SCORE, [c for c in cols if not lab or c != lab.name],
                   score_check(ref_vals), "--score-field",
                   None if stream_score_only else score_flag, reference)
    # --decision-field may name the stream's decision alone (a training table has none)
    stream_dec = names_stream_decision(opts.decision_field, cols, sample.paths())
    dec = find_role("decision column", DECISION, cols, decision_check(ref_vals),
                    "--decision-field", None if stream_dec else opts.decision_field,
                    reference)
    plan = Plan(model=opts.model, reference=reference, features=[], ignore=[],
                predictions=StreamPlan("predictions", sample, "", None), outcomes=None)
    if lab:
        plan.ref_label = lab.name
        plan.ref_bad, plan.ref_good, plan.ref_pending = label_sides(
            ref[lab.name].tolist(), reference, opts.label_bad, name=lab.name)
        plan.say(f"label: {lab.name}", f"{lab.why}; bad = {plan.ref_bad}, good = "
                 f"{plan.ref_good}"
                 + (f", pending = {plan.ref_pending} (no outcome yet: rows left out of the "
                    "reference's outcomes)" if plan.ref_pending else "")
                 + ("" if opts.label_bad else label_note(lab.name, plan.ref_good, plan.ref_bad)))
        check_label_bad(opts.label_bad, ref, lab.name, plan.ref_bad, plan.ref_good, reference)
    else:
        if outcomes is None:  # with outcomes, the label is the outcomes stream's
            check_label_bad(opts.label_bad, ref, None, [], [], reference)
        plan.say("label: none", no_label_note(ref, cols, sample) if outcomes is None else
                 "no two-valued column named like a label in the reference")
    score_why = None  # why the reference's score reads as P(bad) or P(good)
    if opts.score_is:  # the stream's score too, where the reference has none
        plan.score_is = opts.score_is
    if sc:
        plan.ref_score = sc.name
        if opts.score_is:
            plan.score_is = opts.score_is
            score_why = (f"P({'good' if opts.score_is == 'p_good' else 'bad'}), as "
                         "--score-is says")
        else:
            plan.score_is, score_why = score_is(ref, sc.name, plan.ref_label, plan.ref_bad)
    if dec:  # else checked on the stream's decision, if it has one
        plan.ref_decision = dec.name
        plan.ref_approve, plan.ref_decline = decision_values(
            ref[dec.name].tolist(), ref, dec.name, opts, reference)
        plan.say(f"decision: {dec.name}", f"{dec.why}; approve = {plan.ref_approve}" + (
            f", decline = {plan.ref_decline}, any other value no decision (left out of the "
            "approval rate)" if plan.ref_decline is not None else ""))
    # -- the predictions stream
    vals = sample.values

    def find_id(required: bool) -> Candidate | None:
        return find_role("id", ID, paths, unique_check(vals), "--id-field", opts.id_field,
                         where, required=required, values=vals,
                         by_values=ids_shared(paths, outcomes, unique_check(vals)))

    # a file without an id may number its records (see below, once its time is known),
    # and an outcomes file beside it is then paired with it row by row
    idc = find_id(required=sample.topic is not None
                  or (outcomes is not None and outcomes.topic is not None))
    sp = plan.predictions
    if idc is not None:
        sp.id_path = idc.name
        plan.say(f"id: {idc.name}", idc.why)
    others = [p for p in paths if idc is None or p != idc.name]
    check_time_format(opts.time_format, where)
    check_time_unit(opts.time_unit, opts.time_format, where)
    # a file without times is read in record order; but a field named like a time whose
    # values do not read as one (ULB's seconds from the start) is an error that says how
    named_time = any(name_rank(p, *TIME) for p in others)
    # --time-field none: a file whose fields named like a time hold no time is read in
    # record order all the same (a Kafka sample has the record timestamps instead)
    no_time = (opts.time_field or "").lower() == "none"
    tc = find_role("event time", TIME, others, time_check(vals, opts.time_format),
                   "--time-field", opts.time_field, where,
                   required=sample.topic is None and named_time and not no_time, values=vals,
                   by_values=times_by_value(others, vals, opts.time_format))
    if tc is None:
        for flag, given in (("--time-format", opts.time_format),
                            ("--time-unit", opts.time_unit)):
            if given is not None:
                raise ConfigError(f"{flag} needs a time field, and no field reads as event "
                                  "time", file=where, hint="pass --time-field NAME")
        if sample.topic is not None:
            sp.time_source = "kafka_timestamp"
            plan.say("event time: Kafka record timestamp", "no field reads as event time")
        else:
            sp.time_source = "order"
            clock = None if no_time else offset_clock(others, vals)
            plan.say("event time: record order (source: order)", (
                "--time-field none" if no_time else "no field is named like or reads as a "
                "time") + f": each record is numbered as it stands in {where} "
                     "(record 1, 2, ...), windows count records and the policy's durations "
                     "count records (1s = one record); " + (
                         f"{clock} counts from a start the data does not give "
                         f"({shown(vals(clock))}), not from 1970, so it is not taken: pass "
                         f"--time-field {clock} to window by it (read as seconds; init then "
                         "prints the origin: line to add)" if clock else
                         "pass --time-field NAME if a field holds the time"))
    else:
        read_time(plan, sp, (f"event time: {tc.name}", tc.why), tc.name, vals(tc.name),
                  where, opts.time_format, opts.time_unit)
    if idc is None:
        if sp.time_source != "order":  # read in time order: a number is no id there
            find_id(required=True)
        sp.id_source = "order"
        plan.say("id: record order (source: order)", "no field is named like an id or "
                 f"unique in the sample: each record's id is its number in {where} (record "
                 "1, 2, ..." + ("; its header line is not counted"
                                if where.lower().removesuffix(".gz").endswith((".csv", ".tsv"))
                                else "") + "); pass --id-field NAME if a field holds one")
        if outcomes is not None:
            plan.say("outcomes paired by row", f"row k of {outcomes.name} is the outcome of "
                     f"row k of {where} (no id in either): the two files must be written "
                     "in the same order")
    sp.score = stream_path(plan.ref_score, paths) if plan.ref_score else None
    scale_note = ""
    # the score is looked for with numbers written as text read as numbers ("0.1234"), as
    # numeric features are (numbers_as_text); the id and the label are read as written
    scored = with_text_numbers(sample, keep={sp.id_path, stream_path(plan.ref_label, paths)
                                             if plan.ref_label else None})
    if sp.score is not None:  # found by the reference's name: are its values probabilities?
        scale_note = _score_in_scale(plan, sp, sp.score, scored, outcomes)
    if sp.score is None:  # none in the reference, or one named otherwise in the stream
        c = find_role("score", SCORE, paths, score_check(scored.values), "--score-field",
                      score_flag if resolves(score_flag, paths) else None, where)
        sp.score = c.name if c else None
    if sp.score is None and not opts.score_field and plan.ref_score is None:
        scale_note = _scaled_by_name(plan, sp, [p for p in paths if leaf(p) not in ref.columns],
                                     scored, outcomes) or scale_note
    proba_why, guessed = "", False
    if sp.score is None and not opts.score_field:
        proba_why = _proba_score(plan, sp, paths, vals, opts.proba_at, where)
    if sp.score is None and sp.proba is None and not opts.score_field and plan.ref_score is None:
        # named like none (pred, y_hat): the one field of probabilities the reference lacks
        roles = {idc.name if idc else "", tc.name if tc else ""}  # an order id or time: no field
        guess = unnamed_score(lacking(cols, paths, roles), scored.values,
                              sample_labels(plan, sample, outcomes))
        sp.score, guessed = guess.path, guess.path is not None
        if guessed and not opts.score_is:
            plan.score_is = guess.score_is
        scale_note += f"; {guess.why}" if guess.why else ""
    if opts.proba_at is not None and sp.proba is None:
        raise ConfigError(f"--proba-at {opts.proba_at} needs a list of class probabilities "
                          "(a predict_proba row) standing for the score, and "
                          + (f"the sample maps the score {sp.score}" if sp.score else
                             "the sample holds none"), file=where,
                          hint="drop --proba-at" if sp.score else
                          "check the sample's field holds one list a record, summing to 1")
    if sp.score is not None and plan.ref_score is None and not opts.score_is \
            and not guessed and named_good(sp.score):
        # the stream's score is the only one and its name says P(good): no reference
        # column (nor label) to read it against, so the name decides, as for a reference
        plan.score_is = "p_good"
    if opts.score_is and sp.score is None and sp.proba is None and plan.ref_score is None:
        raise no_score_for(opts.score_is, where)
    if sp.score is not None and (text := text_score_note(vals(sp.score))):
        sp.numbers_as_text = True  # the decoder's reading of "0.1234", as the score's
        scale_note += text
    head, why = score_line(sp.score or sp.proba, plan.ref_score, plan.score_is, score_why)
    if sp.proba is not None:
        head = f"score: {sp.proba}[{sp.proba_at}]" + head[len(f"score: {sp.proba}"):]
        why = f"{proba_why}; {why}"
    if sp.score is None and sp.proba is None and plan.ref_score is None and (
            scale := points_scale(ref, [c for c in cols if c != plan.ref_label])):
        why += f"; {scale}"
    why += scale_note
    plan.say(head, why)
    if plan.ref_decision:
        sp.decision = stream_path(plan.ref_decision, paths)
        sp.approve = plan.ref_approve
        sp.decline = plan.ref_decline
    else:
        stream_decision(plan, sp, paths, vals, cols, opts, where,
                        {p for p in (sp.id_path, tc.name if tc else None, sp.score,
                                     sp.proba) if p})
    ex = find_role("exposure", EXPOSURE, paths, exposure_check(vals), "--exposure-field",
                   opts.exposure_field, where)
    if ex:
        sp.exposure = ex.name
        plan.ref_exposure = next((c for c in cols if stream_path(c, [ex.name])), None)
        plan.say(f"exposure: {ex.name}", ex.why)
    ver = [p for p in paths if name_rank(p, *VERSION) == 3]
    sp.model_version = ver[0] if ver else None
    # -- the reference's other columns: features, or ignored
    used = {p for p in (sp.id_path, tc.name if tc else None, sp.score, sp.decision) if p}
    choose_features(plan, ref, paths, vals, used, opts.ignore, where, reference,
                    text_codes, sample_decimal=sample.mark)
    if outcomes is not None:
        plan.outcomes = _outcomes(plan, outcomes, opts)
    elif plan.ref_label and (found := _stream_label(plan, sample, opts))[0]:
        # the outcome comes in the record of its prediction: read there, joined at once
        lab, how = found
        assert lab is not None
        _read_label(plan, sp, lab, opts)
        plan.say(f"label in the predictions: {lab}", how + f"bad = {sp.bad}, good = "
                 f"{sp.good}; each outcome comes with its prediction and joins it at once")
        _say_pending(plan, sp)
    else:
        plan.say("outcomes: none", "no outcomes sample; label-based metrics stay off")
    warn_leaks(plan, ref)
    return plan


def _outcomes(plan: Plan, s: Sample, opts: Options) -> StreamPlan:
    """The outcomes stream's plan: its id (the predictions'), label, bad and good values,
    and time; said on ``plan``."""
    paths, vals, where = s.paths(), s.values, s.name
    if plan.predictions.id_source == "order":
        return _outcomes_by_row(plan, s, opts)
    pred_id = plan.predictions.id_path
    id_path = pred_id if pred_id in paths else stream_path(leaf(pred_id), paths)
    if id_path is None:
        c = find_role("outcomes id", ID, paths, unique_check(vals), "--id-field", None,
                      where, required=True)
        id_path = c.name if c else ""
    out = StreamPlan("outcomes", s, id_path, None)
    plan.say(f"outcomes id: {id_path}", "joins outcomes to predictions")
    lab, how = _stream_label(plan, s, opts)
    if lab is None:
        c = find_role("outcomes label", LABEL, [p for p in paths if p != id_path],
                      two_values(vals), "--label-field", None, where, required=True,
                      todo=_LABEL_TODO)
        lab = c.name if c else None
    assert lab is not None
    _read_label(plan, out, lab, opts)
    plan.say(f"outcomes label: {lab}", f"{how}bad = {out.bad}, good = {out.good}")
    _say_pending(plan, out)
    rest = [p for p in paths if p not in (id_path, lab)]
    tc = find_role("outcomes time", TIME, rest, time_check(vals), "--time-field", None,
                   where, by_values=times_by_value(rest, vals))
    if tc is None and (clock := same_clock(plan.predictions, rest, vals)) is not None:
        on_prediction_clock(plan, out, clock, given=opts.time_field is not None)
    elif tc is None and s.topic is not None:
        out.time_source = "kafka_timestamp"
        plan.say("outcomes time: Kafka record timestamp", "no field reads as a time")
    elif tc is None:
        out.time_source = "arrival"
        plan.say("outcomes time: arrival", "no field reads as a time: outcomes join by id "
                 "where they arrive")
    else:
        read_time(plan, out, (f"outcomes time: {tc.name}", tc.why), tc.name, vals(tc.name),
                  where)
    return out


def _outcomes_by_row(plan: Plan, s: Sample, opts: Options) -> StreamPlan:
    """The outcomes stream's plan where the predictions number their records: its rows
    numbered alike (``event_id: {source: order}``), each joining the prediction of its row
    at that prediction's time (``event_time: {source: arrival}``)."""
    out = StreamPlan("outcomes", s, "", None, id_source="order", time_source="arrival")
    plan.say("outcomes id: record order (source: order)", f"each outcome's id is its number "
             f"in {s.name}, as the predictions' is in theirs")
    lab, how = _stream_label(plan, s, opts)
    if lab is None:
        c = find_role("outcomes label", LABEL, s.paths(), two_values(s.values),
                      "--label-field", None, s.name, required=True, todo=_LABEL_TODO)
        lab = c.name if c else None
    assert lab is not None
    _read_label(plan, out, lab, opts)
    plan.say(f"outcomes label: {lab}", f"{how}bad = {out.bad}, good = {out.good}")
    _say_pending(plan, out)
    plan.say("outcomes time: arrival", "each outcome takes the time of the prediction of "
             "its row")
    return out


#: What the outcomes label's error asks for, beside ``--label-field NAME``
_LABEL_TODO = ("where the outcomes name the reference's label otherwise, pass --label-field "
               "REFERENCE_NAME=STREAM_NAME")


def _stream_label(plan: Plan, s: Sample, opts: Options) -> tuple[str | None, str]:
    """The field of sample ``s`` that holds the reference's label, and how it was found
    for its line (empty, or ending in ``; ``): named by ``--label-field REF=STREAM`` (or
    ``--label-field NAME`` where ``s`` has it), else :func:`stream_path`'s, said where it
    is the reference's name spelled otherwise; ``(None, "")`` where ``s`` has none."""
    paths = s.paths()
    ref_flag, given = label_flag(opts.label_field, [plan.ref_label or ""])
    if given is not None and (given != ref_flag or resolves(given, paths)):
        return given_field("--label-field", given, paths, s.name), "from --label-field; "
    lab = stream_path(plan.ref_label, paths) if plan.ref_label else None
    if lab is not None and plan.ref_label and spelled_otherwise(plan.ref_label, lab):
        return lab, (f"the reference's {plan.ref_label!r} spelled otherwise (names match in "
                     "any case, with spaces, dots and hyphens as underscores); ")
    return lab, ""


def _read_label(plan: Plan, sp: StreamPlan, lab: str, opts: Options) -> None:
    """The label at ``lab`` in ``sp``'s sample, with its bad, good and pending values: the
    reference's where the sample writes them alike, else read off the sample."""
    vals, where = sp.sample.values, sp.sample.name
    sp.label = lab
    seen = {norm_value(v): v for v in vals(lab) if present(v)}
    known = {norm_value(v) for v in [*plan.ref_bad, *plan.ref_good, *plan.ref_pending]}
    if plan.ref_label and known & seen.keys():
        # the reference's values: a rare bad value may be absent from the sample's first
        # records, and a value the reference lacks ('Current': no outcome yet) is not good
        sp.bad, sp.good = list(plan.ref_bad), list(plan.ref_good)
        sp.pending = list(plan.ref_pending)
    elif plan.ref_label and (loose := {label_key(v): v for v in seen.values()}).keys() & {
            label_key(v) for v in [*plan.ref_bad, *plan.ref_good, *plan.ref_pending]}:
        # the same values with a full stop added (UCI Adult's test file): as the sample
        # spells them, or as the reference does where the sample lacks them
        sp.bad = [loose.get(label_key(v), v) for v in plan.ref_bad]
        sp.good = [loose.get(label_key(v), v) for v in plan.ref_good]
        sp.pending = [loose.get(label_key(v), v) for v in plan.ref_pending]
    else:
        bad = opts.label_bad or [str(v) for v in plan.ref_bad]
        sp.bad, sp.good, sp.pending = label_sides(vals(lab), where, bad) if bad else \
            label_sides(vals(lab), where, name=lab)
        if bad:
            refuse_no_bad(vals(lab), sp.bad, where, lab, bad)
    named = {norm_value(v) for v in [*sp.bad, *sp.good, *sp.pending]}
    for k, v in sorted(seen.items()):
        if k in named:
            continue
        # a final outcome of a recognised status the reference lacks (Lending Club's
        # 'Default' beside 'Charged Off') is an outcome on its side, not "no outcome yet"
        side = final_side(v, [*sp.bad, *sp.good, *seen.values()])
        if side is not None:
            sp.sided.append((v, side))
        {"bad": sp.bad, "good": sp.good}.get(side or "", sp.pending).append(v)
    # a --label-bad value the sample lacks (Freddie Mac's 4 and 6 in a sample holding 3)
    # is still bad: left off, it would come later as an unknown label, dead-lettered
    sp.bad += _given_absent(opts.label_bad, [*sp.bad, *sp.good, *sp.pending])
    # a recognised status: its values the sample lacks (Lending Club's rare final
    # 'Default', the loan states) come later, each on its side, not as bad records
    later = later_values([*sp.bad, *sp.good, *sp.pending])
    sp.later_bad, sp.later_good, sp.later = later.bad, later.good, later.pending
    sp.later_from = later.told
    sp.bad += later.bad
    sp.good += later.good
    sp.pending += later.pending


def _given_absent(given: list[str], sides: list[Any]) -> list[Any]:
    """The ``--label-bad`` values on no side yet, written as the side's values are (a
    whole number as a number where they are numbers).

    >>> _given_absent(["3", "4", "RA"], ["3", "0", "RA"])
    ['4']
    >>> _given_absent(["2", "3"], [2, 1])
    [3]
    >>> _given_absent(["charged off"], ["Charged Off", "Fully Paid"])
    []
    >>> _given_absent(["1"], [True, False])
    []
    """
    if sides and all(flag_truth(v) is not None for v in [*given, *sides]):
        return []  # a flag: --label-bad 1 named its true side, whatever it is spelt
    have = {label_key(v) for v in sides}
    numbers = bool(sides) and all(isinstance(v, int) and not isinstance(v, bool)
                                  for v in sides)
    out: list[Any] = []
    for text in given:
        if label_key(text) in have:
            continue
        have.add(label_key(text))
        out.append(int(text) if numbers and text.strip().lstrip("-").isdigit() else text)
    return out


#: Distinct values a field named like a score needs to be read as one by its name alone.
_SCORE_VALUES = 10


def _scaled_by_name(plan: Plan, sp: StreamPlan, paths: list[str], sample: Sample,
                    outcomes: Sample | None) -> str | None:
    """A stream field named like the score (and the only one; ``paths`` holds no reference
    column), with at least :data:`_SCORE_VALUES` distinct numbers that are not
    probabilities, where the reference has no score column to find it by: a percentage and
    log-odds the labels confirm are mapped as such (the scale note returned), points are
    left out with the connector line to add, as for a score found by the reference's name.
    """
    vals = sample.values
    named = [p for p in paths if name_rank(p, *SCORE)
             and (got := [v for v in vals(p) if present(v)])
             and all(isinstance(v, int | float) and not isinstance(v, bool) for v in got)
             and len(set(got)) >= _SCORE_VALUES]  # not a code: credit_risk's 1 and 2
    if len(named) != 1 or score_scale(vals(named[0]))[0] == "probability":
        return None
    return _score_in_scale(plan, sp, named[0], sample, outcomes) or None


def _score_in_scale(plan: Plan, sp: StreamPlan, path: str, sample: Sample,
                    outcomes: Sample | None) -> str:
    """Map ``path`` as the stream's score in the scale its values show: probabilities as
    they are, a percentage divided by 100, log-odds where the labels confirm them; the
    score line's note on the scale. Points and unconfirmed log-odds are left out
    (``sp.score`` None), said on a ``not the score:`` line with the connector line to add.
    """
    vals = sample.values
    scale, span = score_scale(vals(path))
    sp.score = path
    if scale == "percent":
        sp.score_percent = True
        return f"; a percentage in the sample ({span}): read divided by 100 (percent: true)"
    if scale is not None:
        return ""
    kind, why = unscaled_line(path, vals(path), sample_labels(plan, sample, outcomes),
                              plan.score_is, span)
    if kind == "log_odds":
        sp.score_log_odds = True
        return f"; {why}"
    plan.say(f"  not the score: {path}", why)
    sp.score = None
    return ""


def _say_pending(plan: Plan, sp: StreamPlan) -> None:
    seen = [v for v in sp.pending if v not in sp.later]
    if seen:
        plan.say(f"  pending: {sp.label}", ", ".join(map(repr, seen[:5])) + (
                 ", ..." if len(seen) > 5 else "") + f" in the {sp.name}: neither bad "
                 "nor good (a loan still running, or a value the reference lacks): written "
                 "as `pending` (no outcome yet: left out of the join, counted in "
                 "invalid_outcomes); move it to bad or good in the connector if it is an "
                 "outcome")
    if sp.sided:
        one = len(sp.sided) == 1
        plan.say(f"  outcomes: {sp.label}", ", ".join(f"{v!r} ({side})" for v, side in
                                                     sp.sided)
                 + f" in the {sp.name}: {'a final outcome' if one else 'final outcomes'} "
                 f"of {' and '.join(sp.later_from)} the reference lacks: written on "
                 f"{'its side' if one else 'their sides'}, not as pending")
    if sp.later_bad or sp.later_good:
        sides = [f"{', '.join(map(repr, vs))} ({side})" for side, vs in
                 (("bad", sp.later_bad), ("good", sp.later_good)) if vs]
        plan.say(f"  later outcomes: {sp.label}", f"{' and '.join(sides)}: final outcomes "
                 f"of {' and '.join(sp.later_from)} the sample lacks (a rare one may be in "
                 "no sample): written on their sides, so each reads as an outcome when it "
                 "comes, not as a bad record (bad_label)")
    if sp.later:
        states = ", ".join(map(repr, sp.later[:3])) + (", ..." if len(sp.later) > 3 else "")
        one = len(sp.later) == 1
        what = (f"{len(sp.later)} loan state{'' if one else 's'}"
                if all(v in LOAN_STATES for v in sp.later) else "the unknown status code")
        plan.say(f"  pending: {sp.label}", f"and {what} the sample lacks ({states}): "
                 f"written as `pending` too, so {'it reads' if one else 'they read'} as no "
                 "outcome yet when it comes, not as a bad record")


def _proba_score(plan: Plan, sp: StreamPlan, paths: list[str], vals: Any, given: int | None,
                 where: str) -> str:
    """A sample field holding class probabilities on every record (a ``predict_proba``
    row) stands for the score, at the position :func:`proba_position` settles; why, for
    the score's line (empty where no one field holds them)."""
    found = proba_fields(paths, vals)
    if len(found) != 1:
        return ""
    path, k = found[0]
    sp.proba, sp.proba_classes = path, k
    sp.proba_at, why = proba_position(path, k, plan.ref_bad, plan.ref_good, plan.ref_pending,
                                      plan.score_is, given, where)
    return why
