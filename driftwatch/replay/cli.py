"""The ``driftwatch replay`` command: run, print the summary table, check ``--expect``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from driftwatch.actions.outcomes import outcome_counts, outcome_line
from driftwatch.pipeline.badcounts import unknown_labels_line
from driftwatch.replay import replay

__all__ = ["expired_predictions_line", "lost_outcomes_line", "print_summary",
           "read_ahead_line", "run_replay_command", "unmatched_outcomes_line"]


def print_summary(summary: dict, out=None) -> None:  # type: ignore[no-untyped-def]
    out = out or sys.stdout  # looked up per call: a default bound at import goes stale
    w = summary["windows_per_tier"]
    bad, read = summary["bad_records"], summary.get("records_read")
    share = f" ({bad / read:.2%} of {read} records read)" if bad and read else ""
    print(f"model {summary['model']}: {summary['events']} events, "
          f"{summary['outcomes']} outcomes, {bad} bad records{share}, "
          f"{summary['windows']} windows", file=out)
    print("  windows per tier: " + ", ".join(f"{k} {v}" for k, v in w.items()), file=out)
    for i, ep in enumerate(summary["episodes"], 1):
        print(f"  episode {i}: first alert {ep['first_alert']} (window {ep['first_window']}), "
              f"max tier {ep['max_tier']}, {ep['windows']} windows", file=out)
    for f in summary.get("data_quality_faults", ()):
        span = (f"window {f['first_window']}" if f["windows"] == 1
                else f"windows {f['first_window']}-{f['last_window']}")
        what = ", ".join(f["signals"][:4]) + (f" and {len(f['signals']) - 4} more"
                                              if len(f["signals"]) > 4 else "")
        print(f"  data-quality fault: {span} (from {f['first_alert']}): {what}; model "
              "changes held" + (f", action {f['action']}" if f.get("action") else ""),
              file=out)
    for stream, values in (summary.get("unknown_labels") or {}).items():
        print(f"  {unknown_labels_line(stream, values)}", file=out)
    for line in (read_ahead_line(summary),
                 expired_predictions_line(summary.get("labels") or {}),
                 lost_outcomes_line(summary.get("labels") or {}),
                 unmatched_outcomes_line(summary.get("labels") or {})):
        if line:
            print(f"  {line}", file=out)
    by = summary["actions_by_type"]
    acts = summary.get("actions") or []
    ran = summary.get("actions_executed", False)
    if by:
        decided = [a for a in acts if a.get("parent_id") is None]  # follow-ups have own lines
        said = f" ({outcome_counts(decided)})" if ran else " (dry run, not executed)"
        gpu = (f"; retraining at most {summary['retrain_gpu_hours_max']} GPU-hours"
               if by.get("retrain") else "")  # no retraining decided: no GPU-hours to bound
        print("  actions: " + ", ".join(f"{k} x{v}" for k, v in by.items()) + said + gpu,
              file=out)
    else:
        print("  actions: none", file=out)
    undecided = summary.get("undecided", ())
    open_ids = {u["id"] for u in undecided}
    for a in acts if ran else ():
        if a.get("id") not in open_ids:  # an open action's line is its `undecided:` below
            print(f"  {outcome_line(a)}", file=out)
    for u in undecided:
        print(f"  undecided: {u['action']} {u['id']} ({u['key']}): {u['reason']}", file=out)


def read_ahead_line(summary: dict) -> str | None:  # type: ignore[type-arg]
    """The summary's line for the joins of outcomes read ahead of their predictions (None
    where none were, or none joined): an outcomes file without times is read first, so
    each of its outcomes is there before its prediction and every join counts as a late
    prediction, which is expected there and no fault, unlike on a live stream.

    >>> read_ahead_line({"outcomes_read_ahead": True,
    ...                  "labels": {"late_predictions": 16000, "joined": 16000}})[:69]
    'outcomes read ahead: 16000 of 16000 joins counted as late_predictions'
    >>> read_ahead_line({"labels": {"late_predictions": 3, "joined": 10}}) is None
    True
    """
    labels = summary.get("labels") or {}
    late = int(labels.get("late_predictions") or 0)
    if not summary.get("outcomes_read_ahead") or not late:
        return None
    return (f"outcomes read ahead: {late} of {labels.get('joined', '?')} joins counted as "
            "late_predictions, as expected here: the outcomes have no times (event_time: "
            "{source: arrival}), so replay reads them before the predictions and each outcome "
            "waits for its prediction; on a live stream the same count would mean the "
            "prediction stream lags")


def lost_outcomes_line(labels: dict) -> str | None:  # type: ignore[type-arg]
    """The summary's line for outcomes that never met their prediction (None when every
    outcome found its prediction or waits still).

    >>> lost_outcomes_line({"orphan_outcomes": 50000, "outcomes": 150000})[:60]
    'outcomes lost: 50000 of 150000 found no prediction (orphan_o'
    >>> lost_outcomes_line({"orphan_outcomes": 0, "outcomes": 10}) is None
    True
    """
    lost = int(labels.get("orphan_outcomes") or 0)
    if not lost:
        return None
    expired = ", had expired unlabelled (labels.ttl) before it came," \
        if labels.get("expired") else ","
    return (f"outcomes lost: {lost} of {labels.get('outcomes', '?')} found no prediction "
            f"(orphan_outcomes): their predictions were not in the recording{expired} or "
            "came after the outcome had waited 7 days of event time or the room for waiting "
            "outcomes (labels.max_pending) was full")


def unmatched_outcomes_line(labels: dict) -> str | None:  # type: ignore[type-arg]
    """The summary's line for outcomes still waiting for their prediction when the
    recording ends (None when none waits): an outcomes file paired with its predictions
    by row that has more rows than theirs leaves its last rows here.

    >>> unmatched_outcomes_line({"orphans_held": 100, "outcomes": 1100})[:62]
    'outcomes unmatched: 100 of 1100 found no prediction by the end'
    >>> unmatched_outcomes_line({"orphans_held": 0, "outcomes": 10}) is None
    True
    """
    held = int(labels.get("orphans_held") or 0)
    if not held:
        return None
    expired = ("; or their predictions expired unlabelled (labels.ttl) before they came"
               if labels.get("expired") else "")
    return (f"outcomes unmatched: {held} of {labels.get('outcomes', '?')} found no prediction "
            "by the end of the recording (orphans_held): their predictions are not in it "
            "(outcomes of predictions made before the recording began, or, paired by row, "
            f"rows of the outcomes file past the predictions' last){expired}")


def expired_predictions_line(labels: dict) -> str | None:  # type: ignore[type-arg]
    """The summary's line for predictions whose wait for an outcome ran out (None when
    none did): where outcomes come later than ``labels.ttl``, every one expires so and no
    label metric is ever reported.

    >>> expired_predictions_line({"expired": 26692, "predictions": 30000})[:53]
    'predictions expired: 26692 of 30000 waited labels.ttl'
    >>> expired_predictions_line({"expired": 0, "predictions": 10}) is None
    True
    """
    expired = int(labels.get("expired") or 0)
    if not expired:
        return None
    return (f"predictions expired: {expired} of {labels.get('predictions', '?')} waited "
            "labels.ttl for their outcome and were dropped unlabelled (expired): where "
            "outcomes come later than that, raise the policy's labels.ttl")


def champion_ref(uri: str | None, columns: list[str], score_is: str | None = None,
                 score_scale: str | None = None) -> object:
    """``--champion``, ``--champion-column COL=FEATURE``, ``--champion-score-is`` and
    ``--champion-score-scale`` as a ``ChampionRef`` (or None); ``score_scale: stream`` is
    resolved by the replay, once it read the connector."""
    from driftwatch.errors import ConfigError

    if uri is None:
        if columns:
            raise ConfigError("--champion-column needs --champion")
        if score_is is not None:
            raise ConfigError("--champion-score-is needs --champion")
        if score_scale is not None:
            raise ConfigError("--champion-score-scale needs --champion")
        return None
    from driftwatch.registry.reading import champion_scale
    from driftwatch.registry.scorers import ChampionRef

    scale: object = "probability"
    if score_scale is not None:
        try:
            scale = champion_scale(score_scale)
        except ConfigError as exc:  # the option's name where a file's line would be
            raise exc.recast(ConfigError, file="--champion-score-scale", path=None) from None

    mapping = {}
    for item in columns:
        col, sep, feature = item.partition("=")
        if not sep or not col or not feature:
            raise ConfigError(f"--champion-column expects COL=FEATURE, found {item!r}")
        mapping[col] = feature
    try:
        return ChampionRef.parse(uri, mapping, score_is or "p_bad", scale)
    except ConfigError as exc:  # the option's name where a file's line would be
        raise exc.recast(ConfigError, file="--champion") from None


def run_replay_command(args: argparse.Namespace) -> int:
    from driftwatch.errors import ConfigError
    from driftwatch.policy.expect import parse_expectation

    expectations = [parse_expectation(e) for e in args.expect]
    dated = [e.text for e in expectations if e.range_kind]
    if dated and _record_order(args.connector):
        raise ConfigError(
            f"--expect {dated[0]!r} names a date, but the connector numbers records in "
            "file order (event_time: {source: order}): its windows have no dates",
            hint="leave the range out, or map the records' time if they have one")
    champion = champion_ref(getattr(args, "champion", None),
                            getattr(args, "champion_column", []),
                            getattr(args, "champion_score_is", None),
                            getattr(args, "champion_score_scale", None))
    if champion is not None and not args.execute:
        raise ConfigError("--champion names the model actions run on: add --execute")
    levels = None
    if not getattr(args, "no_levels_cache", False):
        from driftwatch.policy.level_store import default_level_dir

        levels = getattr(args, "levels_cache", None) or default_level_dir()
    res = replay(
        args.connector,
        args.input,
        args.out,
        policy=args.policy,
        reference=args.reference,
        batch_size=args.batch_size,
        progress=not args.quiet,
        report=not args.no_report,
        execute=args.execute,
        state_dir=args.state_dir,
        champion=champion,
        tracking_uri=getattr(args, "tracking_uri", None),
        levels_cache=levels,
        read_process=_reader(getattr(args, "reader", "auto")),
        judge_process=_judge(getattr(args, "judge", "auto")),
    )
    print_summary(res.summary)
    out = Path(args.out)
    wrote = [out / "timeline.jsonl", out / "summary.json"]
    if not args.no_report:
        wrote.append(out / "report.html")
    print("wrote " + ", ".join(str(p) for p in wrote))
    failed = 0
    for exp in expectations:
        r = exp.check(res.records)
        if r.passed:
            print(f"ok    expect {exp.text}: {r.message}")
        else:
            failed += 1
            print(f"FAIL  expect {exp.text}\n      {r.message}", file=sys.stderr)
    return 1 if failed else 0


def _reader(choice: str) -> bool | None:
    """``--reader``: None (auto), or whether to read in a child process."""
    return _forked("reader", choice, instead="thread")


def _judge(choice: str) -> bool | None:
    """``--judge``: None (auto), or whether to judge in a process of its own."""
    return _forked("judge", choice, instead="loop")


def _forked(flag: str, choice: str, *, instead: str) -> bool | None:
    """``--FLAG auto|process|INSTEAD``: None for auto, else whether to fork; ``process``
    where ``fork`` is missing is refused rather than quietly done in the loop's process."""
    from driftwatch.connectors.file_process import reads_in_process
    from driftwatch.errors import ConfigError

    if choice == "auto":
        return None
    if choice == "process" and not reads_in_process(total_bytes=0, wanted=True):
        raise ConfigError(f"--{flag} process needs the fork start method, which this "
                          "platform lacks", hint=f"use --{flag} {instead} (or auto)")
    return choice == "process"


def _record_order(connector: str) -> bool:
    """Whether the connector at ``connector`` numbers its predictions in file order
    (False when it cannot be read: the replay says why)."""
    from driftwatch.connectors.config import load_connector
    from driftwatch.errors import DriftwatchError

    try:
        conn = load_connector(connector)
    except DriftwatchError:
        return False
    return conn.numbers_records()
