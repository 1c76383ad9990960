"""A :class:`~driftwatch.onboard.plan.Plan` as a connector file and a policy file.

The policy follows ``policies/template.yaml`` (PSI on every feature, a missing-rate gate,
alerts only) with the reference's conventions and every feature written out, so a person
reads what was decided and edits from there; its cooldowns and limits are
:mod:`~driftwatch.onboard.pace`'s, so a lasting drift does not act on every window.

>>> q("income"), q("yes"), q("a b"), q(1), q(True)
('income', '"yes"', '"a b"', '1', 'true')
>>> print(q(chr(0x1F600) + " " + chr(5)))
"\\U0001f600 \\u0005"
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftwatch.errors import ConfigError
from driftwatch.onboard.pace import Pace, choose_pace, window_seconds, window_text
from driftwatch.onboard.plandata import Feature, Plan, StreamPlan
from driftwatch.onboard.times import ORIGIN_PLACEHOLDER
from driftwatch.onboard.windowsize import PERSISTENCE, fitting_min_labelled

__all__ = ["connector_yaml", "format_note", "policy_yaml", "q", "write_files"]

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")
#: The comment beside a feature read from text (format: percent or money) without an
#: example of its own (:func:`format_note`)
_FORMAT_NOTES = {"percent": ("13.56%", 13.56), "money": ("$60,000.00 ", 60000.0)}
_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def format_note(f: Feature) -> str:
    """How a feature's percent or money text reads, shown on one of its own values (in its
    file's decimal mark and currency placement) where init kept one.

    >>> format_note(Feature("amt", "amt", "numeric", "", format="money",
    ...                     example=("1.234,56 €", 1234.56)))
    '"1.234,56 €" reads as 1234.56'
    >>> format_note(Feature("rate", "rate", "numeric", "", format="percent"))
    '"13.56%" reads as 13.56'
    """
    text, number = f.example or _FORMAT_NOTES[str(f.format)]
    shown = str(int(number)) if float(number).is_integer() else repr(float(number))
    return f"{json.dumps(text, ensure_ascii=False)} reads as {shown}"
def _quoted(s: str) -> str:
    """``s`` as a YAML double-quoted scalar in ASCII.

    Not ``json.dumps``: JSON writes a character past U+FFFF as two surrogate escapes
    (``\\ud83d\\ude00``), which YAML refuses; YAML spells it ``\\U0001f600``.
    """
    out = []
    for c in s:
        o = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= o < 0x7F:
            out.append(c)
        else:
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def q(v: Any) -> str:
    """A scalar as YAML, quoted only when it has to be."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return json.dumps(v)
    s = str(v)
    if _PLAIN.match(s) and s.lower() not in _WORDS:
        return s
    return _quoted(s)


def _list(values: Sequence[Any]) -> str:
    return "[" + ", ".join(q(v) for v in values) + "]"


def _stream(s: StreamPlan, plan: Plan) -> list[str]:
    out = [f"    {s.name}:"]
    if s.sample.topic is not None:
        out.append(f"      topic: {q(s.sample.topic)}")
    else:
        out.append(f"      paths: [{q(s.sample.path)}]")
        how: dict[str, str] = {}  # read later as init read it
        if s.sample.delimiter not in (None, ","):
            how["delimiter"] = s.sample.delimiter or ","
        if s.sample.decimal is not None and s.sample.decimal.mark == ",":
            how["decimal"] = ","
        if s.sample.names is not None:  # a file without a header line
            out.append("      csv:")
            out += [f"        {k}: {_quoted(v)}" for k, v in how.items()]
            out.append(f"        names: {_list(s.sample.names)}")
        elif how:
            out.append("      csv: {" + ", ".join(f"{k}: {_quoted(v)}" for k, v in
                                                  how.items()) + "}")
    if s.numbers_as_text:
        out.append("      numbers_as_text: true   # the sample writes numbers as text")
    out.append("      fields:")
    if s.id_source == "order":
        out.append("        event_id: {source: order}   # none in the data: each record's "
                   "number in its file")
    else:
        out.append(f"        event_id: {q(s.id_path)}")
    if s.time_source == "payload":
        how = (f"format: {_quoted(s.time_format)}" if s.time_format is not None
               else f"unit: {s.time_unit}")
        if s.time_century_start is not None:  # a replay years later reads '27' alike
            how += f", century_start: {s.time_century_start}"
        note = "" if not s.time_offsets else (
            f'   # counts from a start: add origin: "{ORIGIN_PLACEHOLDER}", the instant of 0'
            + (", the predictions' own" if s.name == "outcomes" else ""))
        out.append(f"        event_time: {{path: {q(s.time_path)}, {how}}}{note}")
    elif s.time_source == "order":
        out.append("        event_time: {source: order}   # none in the data: each record is "
                   "numbered in file order")
    elif s.time_source == "arrival" and s.id_source == "order":
        out.append("        event_time: {source: arrival}   # none in the data: the time of "
                   "the prediction of its row")
    elif s.time_source == "arrival":
        out.append("        event_time: {source: arrival}   # none in the data: joined by id "
                   "where it arrives")
    else:
        out.append("        event_time: {source: kafka_timestamp}")
    if s.name == "predictions":
        out.append("        features:")
        for f in plan.features:
            fmt = (f", format: {f.format}}}   # {format_note(f)}, here and in the "
                   "reference" if f.format else "}")
            out.append(f"          {q(f.name)}: {{path: {q(f.path)}, type: {f.kind}{fmt}")
        coded = [f for f in plan.features if f.missing]
        if coded:
            out.append("        missing_values_by_feature:   # codes for missing init found "
                       "(its lines say where): read as missing")
            out += [f"          {q(f.name)}: {_list(f.missing)}" for f in coded]
        if s.score:
            note = "   # P(good): the policy's reference.score_is turns it into P(bad)" \
                if plan.score_is == "p_good" else ""
            score = (f"{{path: {q(s.score)}, percent: true}}" if s.score_percent
                     else f"{{path: {q(s.score)}, log_odds: true}}" if s.score_log_odds
                     else q(s.score))
            out.append(f"        score: {score}{note}")
        elif s.proba:
            out.append(f"        proba: {{path: {q(s.proba)}, classes: {s.proba_classes}, "
                       f"score: {s.proba_at}}}"
                       "   # the score: the probability at this position")
        if s.model_version:
            out.append(f"        model_version: {q(s.model_version)}")
        if s.decision:
            decline = "" if s.decline is None else f", decline: {_list(s.decline)}"
            out.append(f"        decision: {{path: {q(s.decision)}, approve: "
                       f"{_list(s.approve or ['approve'])}{decline}}}")
        if s.exposure:
            out.append(f"        exposure: {q(s.exposure)}")
    if s.label:
        pending = f", pending: {_list(s.pending)}" if s.pending else ""
        out.append(f"        label: {{path: {q(s.label)}, bad: {_list(s.bad)}, good: "
                   f"{_list(s.good)}{pending}}}")
    return out


def connector_yaml(plan: Plan, source: str, bootstrap: str | None = None) -> str:
    """The connector: ``kind: file`` for file samples, ``kind: kafka`` (on ``bootstrap``)
    for a topic."""
    kafka = plan.predictions.sample.topic is not None
    lines = [
        f"# Written by driftwatch init from {source}; edit freely.",
        "# Check it: driftwatch policy check --connector THIS_FILE POLICY",
        "apiVersion: driftwatch/v1",
        "kind: Connector",
        "metadata:",
        f"  name: {q(plan.model)}",
        "source:",
        f"  kind: {'kafka' if kafka else 'file'}",
    ]
    if kafka:
        servers = _list((bootstrap or "${DRIFTWATCH_KAFKA_BOOTSTRAP}").split(","))
        lines.append(f"  connection: {{bootstrap_servers: {servers}, group_id: "
                     f"{q('driftwatch-' + plan.model)}}}")
    lines.append("  streams:")
    lines += _stream(plan.predictions, plan)
    if plan.outcomes is not None:
        lines += _stream(plan.outcomes, plan)
    lines.append("dead_letter: {path: dead_letter.jsonl}")
    return "\n".join(lines) + "\n"


def _reference_block(plan: Plan) -> list[str]:
    out = ["reference:                    # how the reference table's columns are read"]
    if plan.ref_names is not None:  # a file without a header line
        out += ["  csv:                        # the reference has no header line",
                f"    names: {_list(plan.ref_names)}"]
    out.append(f"  score: {q(plan.ref_score) if plan.ref_score else 'null'}")
    out.append(f"  score_is: {plan.score_is}              # p_bad | p_good")
    if plan.ref_label:
        pending = f", pending: {_list(plan.ref_pending)}" if plan.ref_pending else ""
        out.append(f"  label: {{column: {q(plan.ref_label)}, bad: {_list(plan.ref_bad)}, "
                   f"good: {_list(plan.ref_good)}{pending}}}")
    else:
        out.append("  label: null")
    if plan.ref_decision:
        decline = ("" if plan.ref_decline is None
                   else f", decline: {_list(plan.ref_decline)}")
        out.append(f"  decision: {{column: {q(plan.ref_decision)}, approve: "
                   f"{_list(plan.ref_approve or ['approve'])}{decline}}}")
    else:
        out.append("  decision: null")
    if plan.ref_exposure:
        out.append(f"  exposure: {q(plan.ref_exposure)}")
    out.append(f"  ignore: {_list(plan.ignore)}          # not features")
    return out


def _cooldowns(pace: Pace, pane: int) -> list[str]:
    why = {"mild": "an online update's time to show on outcomes",
           "moderate": "a shadow's time to gather outcomes",
           "severe": "a retraining's time to train, shadow and promote"}
    out = ["# After a tier acts, no action at that tier or below for this long, in event time",
           f"# ({window_text(pace, pane)}); a worse tier still acts at once.",
           "cooldown:"]
    if pace.per_record:
        out[0] = ("# After a tier acts, no action at that tier or below for this many records "
                  "(1s = one record)")
    out += [f"  {t + ':':<10}{d:<9} # {pace.spans[t]}: {why[t]}"
            for t, d in pace.cooldown.items()]
    return out


def _limits(pace: Pace) -> list[str]:
    day = ", ".join(f"{t}: {n}" for t, n in pace.max_actions_per_day.items())
    span = "86400 records (a day of event time)" if pace.per_record else "24 hours"
    return ["limits:                     # blast radius, whatever the cooldowns allow",
            f"  max_actions_per_day: {{{day}}}   # actions per tier in any {span}",
            f"  max_concurrent_retrains: {pace.max_concurrent_retrains}   # retraining jobs "
            "at a time on the GPU pool"]


def _min_labelled(pane: int) -> list[str]:
    """A ``detectors:`` block where the default ``min_labelled`` outgrows the window."""
    need = fitting_min_labelled(pane)
    if need is None:
        return []
    return ["detectors:",
            f"  min_labelled: {need}   # outcomes a window needs before its label signals "
            f"(AUC, bad rate, calibration) are reported: half a window of {pane} records"]


def policy_yaml(plan: Plan, pane: int, pace: Pace | None = None) -> str:
    """The policy, on the template's shape, with every feature listed; ``pace``: its
    cooldowns and limits (default: :func:`~driftwatch.onboard.pace.choose_pace` for the
    sample's event rate)."""
    if pace is None:
        pace = choose_pace(window_seconds(plan.predictions, pane),
                           per_record=plan.predictions.time_source == "order")
    feats = "\n".join(f"    - {q(f.name)}" for f in plan.features)
    lines = [
        "# Written by driftwatch init; a minimal policy to edit (see policies/template.yaml).",
        "# `driftwatch policy explain THIS_FILE` prints every default and what each tier does.",
        "apiVersion: driftwatch/v1",
        "kind: DriftPolicy",
        "metadata:",
        f"  name: {q(plan.model)}",
        "model:",
        f"  name: {q(plan.model)}",
        f"  reference: {q(plan.reference)}",
        "  features:                   # every feature the connector maps",
        feats,
        *_reference_block(plan),
        "window:",
        "  kind: count",
        f"  pane: {pane}",
        "  panes: 1",
        "signals:",
        "  # PSI per feature, binned on the reference: 0.10 some shift, 0.25 significant.",
        "  # Its missing values are one more bin: uncomment the measure to leave a feature",
        "  # that starts arriving empty to data_quality below.",
        "  - detector: psi",
        "    features: all",
        "    # measure: psi_without_missing",
        "    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}",
        *(["  # PSI of the model's score on the reference's: the system stability report.",
           "  - detector: score_psi",
           "    thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}"]
          if plan.ref_score and (plan.predictions.score or plan.predictions.proba) else []),
        f"persistence: {PERSISTENCE}",
        *_min_labelled(pane),
        *(["labels:",
           f"  ttl: {plan.label_ttl}   # a prediction's wait for its outcome: twice the "
           "longest delay in the samples (init's `label wait:` line)"]
          if plan.label_ttl else []),
        *_cooldowns(pace, pane),
        "data_quality:               # a broken feed is not drift: alert, block model changes",
        "  signals:",
        "    - detector: missing_rate    # increase over the reference's share",
        "      threshold: 0.05",
        "    - detector: out_of_range    # outside the reference's range: a unit change",
        "      threshold: 0.10",
        *(["    - detector: new_category_rate",
           f"      features: {_list([f.name for f in plan.features if f.kind == 'categorical'])}",
           "      threshold: 0.05"] if any(f.kind == "categorical" for f in plan.features)
          else []),
        "    - detector: bad_record_rate",
        "      threshold: 0.01",
        f"  cooldown: {pace.data_quality:<9} # {pace.spans['data_quality']}: one data-quality "
        "alert this often while the feed stays broken",
        *_limits(pace),
        "actions:",
        "  mild: none",
        "  moderate: alert",
        "  severe: {type: alert, channels: [ml-oncall]}",
    ]
    return "\n".join(lines) + "\n"


def write_files(files: dict[Path, str], *, force: bool) -> None:
    """Write each file; an existing one is an error unless ``force`` (nothing is written
    then)."""
    if not force:
        there = [str(p) for p in files if p.exists()]
        if there:
            also = f" (so does {', '.join(there[1:])})" if len(there) > 1 else ""
            raise ConfigError(f"the file already exists{also}", file=there[0],
                              hint="pass --force to overwrite")
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
