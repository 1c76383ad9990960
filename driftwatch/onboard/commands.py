"""``driftwatch init``: read the inputs, decide, print why, write two files.

The parser lives in :mod:`driftwatch.cli`; this is what it runs.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from driftwatch.clock import SystemClock
from driftwatch.csvdecimal import csv_notes
from driftwatch.csvnames import named_header
from driftwatch.errors import ConfigError
from driftwatch.namesflags import names_given
from driftwatch.onboard.envelopes import change_events, refuse_unread_shapes
from driftwatch.onboard.labelwait import label_wait
from driftwatch.onboard.pace import choose_pace, pace_line, window_seconds
from driftwatch.onboard.plan import Options, Sample, make_plan
from driftwatch.onboard.sample import (
    dotted_keys,
    flatten,
    kafka_sample,
    read_sample,
    sample_decimal,
    sample_separator,
)
from driftwatch.onboard.timefields import fix_two_digit_years
from driftwatch.onboard.windowsize import short_file_warning
from driftwatch.onboard.write import connector_yaml, policy_yaml, write_files

__all__ = ["dotted_note", "run_init"]


class _Usage(Exception):
    """A command line that cannot work: printed as one line, exit status 2."""


def _has_header(s: Sample) -> bool:
    """Whether the CSV sample ``s`` has a header line: none given its names, or a first
    line equal to them."""
    return s.names is None or s.path is None or s.delimiter is None or named_header(
        s.path, s.delimiter, s.names, s.name)


def _sample(path: str | None, topic: str | None, bootstrap: str | None, rows: int,
            what: str, names: tuple[str, ...] | None = None) -> Sample | None:
    if path and topic:
        raise _Usage(f"give the {what} sample as a file or a Kafka topic, not both")
    if topic:
        if not bootstrap:
            raise _Usage(f"--{'kafka' if what == 'predictions' else 'outcomes'}-topic "
                         "needs --bootstrap HOST:PORT")
        raw = kafka_sample(topic, bootstrap, min(rows, 500))
        return Sample([flatten(r) for r in raw], f"topic {topic}", topic=topic,
                      dotted=tuple(dotted_keys(raw)))
    if path:
        return Sample(read_sample(path, rows, names), path, path=path,
                      delimiter=sample_separator(path), decimal=sample_decimal(path),
                      names=names)
    return None


def dotted_note(s: Sample) -> str:
    """The warning for a topic whose records write keys with dots in them: a Kafka stream
    reads a dotted path as nested objects (a file's probe reads such a key whole)."""
    keys = ", ".join(s.dotted[:3]) + (", ..." if len(s.dotted) > 3 else "")
    first = s.dotted[0]
    return (f"warning: {s.name}: its records write {keys} as one key with dots in it; a "
            f"Kafka stream reads a dotted path as nested objects, so the connector's path "
            f"{first} finds nothing there and the field reads as absent, live and in a "
            f"recording; rename the key without dots in the producer (e.g. "
            f"{first.replace('.', '_')}) and map that name")


def _examples(dest: str, out: TextIO) -> int:
    try:
        from driftwatch.bundled import write_examples  # type: ignore[import-not-found]
    except ModuleNotFoundError:
        raise _Usage("the bundled examples are not part of this build") from None
    written = write_examples(Path(dest))
    print(f"wrote the examples to {dest}" if written is None else
          "\n".join(f"wrote {p}" for p in written), file=out)
    return 0


def run_init(args: argparse.Namespace, *, out: TextIO | None = None,
             err: TextIO | None = None) -> int:
    """What ``driftwatch init`` does; returns the exit status."""
    try:
        return _run(args, out or sys.stdout)
    except _Usage as exc:
        print(f"error: {exc}", file=err or sys.stderr)
        return 2


def _run(args: argparse.Namespace, out: TextIO) -> int:
    if args.example:
        return _examples(args.example, out)
    if not args.reference or not (args.sample or args.kafka_topic):
        raise _Usage("driftwatch init needs --reference TABLE and --sample FILE (or "
                     "--kafka-topic TOPIC --bootstrap HOST:PORT)")
    from driftwatch.windows.profile import read_reference_table, reference_notes

    ref_path = Path(args.reference)
    if not ref_path.exists():
        raise _Usage(f"the reference {args.reference} does not exist")
    ref_names = names_given(args.reference_names, args.reference_names_file,
                            "reference-names", args.reference)
    ref = read_reference_table(ref_path, ref_names, given="--reference-names")
    notes = reference_notes(ref_path, f"the reference {args.reference}", ref_names)
    if ref.empty:
        raise ConfigError("the reference has no rows", file=args.reference)
    model = args.model or ref_path.name.split(".")[0]
    names = (names_given(args.names, args.names_file, "names", args.sample),
             names_given(args.outcomes_names, args.outcomes_names_file, "outcomes-names",
                         args.outcomes))
    preds = _sample(args.sample, args.kafka_topic, args.bootstrap, args.rows, "predictions",
                    names[0])
    assert preds is not None
    outs = _sample(args.outcomes, args.outcomes_topic, args.bootstrap, args.rows, "outcomes",
                   names[1])
    seen_through: list[str] = []  # envelopes read through, said before the plan's lines
    for role in ("predictions", "outcomes"):
        s = preds if role == "predictions" else outs
        if s is None:
            continue
        rows, line = change_events(s.rows)
        if line is not None:
            s = replace(s, rows=rows)
            what = line[0] if role == "predictions" else f"outcomes {line[0]}"
            seen_through.append(f"{what:<34} {line[1]}")
            preds, outs = (s, outs) if role == "predictions" else (preds, s)
    refuse_unread_shapes(preds.rows, [str(c) for c in ref.columns], preds.name)
    opts = Options(
        model=model, id_field=args.id_field, time_field=args.time_field,
        time_format=args.time_format, time_unit=args.time_unit,
        score_field=args.score_field, label_field=args.label_field,
        decision_field=args.decision_field, exposure_field=args.exposure_field,
        score_is=args.score_is, proba_at=args.proba_at, label_bad=args.label_bad,
        approve=args.approve, decline=args.decline,
        ignore=args.ignore)
    for s in (preds, outs):
        if s is not None and s.delimiter is not None:
            said = csv_notes(s.name, s.delimiter, s.decimal, fix='if it is the comma, set '
                             'csv: {decimal: ","} on its stream in the connector',
                             header=_has_header(s))
            if said and s.delimiter != ",":  # the first line says how it is read
                comma = s.decimal is not None and s.decimal.mark == ","
                keys = "delimiter, decimal" if comma else "delimiter"
                said[0] += f"; the connector says so (csv: {keys})"
            notes += said
    notes += [dotted_note(s) for s in (preds, outs) if s is not None and s.dotted]
    notes += seen_through
    plan = make_plan(ref, args.reference, preds, outs, opts)
    plan.ref_names = ref_names  # read so by every command that reads the policy
    now = SystemClock().now()
    fix_two_digit_years(plan, now)
    if (wait := label_wait(plan.predictions, plan.outcomes, now)) is not None:
        plan.label_ttl = wait.ttl
        plan.say(*wait.line())
    pace = choose_pace(window_seconds(plan.predictions, args.pane),
                       per_record=plan.predictions.time_source == "order")
    plan.say(*pace_line(pace, args.pane))
    if preds.path is not None:  # a file: read whole where init read fewer than --rows
        short = short_file_warning(preds.name, n=len(preds.rows), pane=args.pane,
                                   limit=args.rows)
        if short is not None:
            plan.lines.append(short)
    conn_path = Path(args.connector_out or f"connectors/{model}.yaml")
    pol_path = Path(args.policy_out or f"policies/{model}.yaml")
    write_files({conn_path: connector_yaml(plan, args.reference, args.bootstrap),
                 pol_path: policy_yaml(plan, args.pane, pace)}, force=args.force)
    for line in [*notes, *plan.lines]:
        print(line.rstrip(), file=out)
    print(f"wrote {conn_path} and {pol_path}", file=out)
    print(f"next: driftwatch policy check --connector {conn_path} {pol_path}", file=out)
    return 0
