"""``driftwatch replay``: the live pipeline, run on a recording in event time.

Data scientists test a policy on a recorded stream before it goes live; CI runs replays
with ``--expect`` assertions as regression tests. Actions never run unless asked
(``execute=True``); otherwise each decision lists what *would* have run.

Outputs in ``out_dir``: ``timeline.jsonl`` (one line per window), ``summary.json``,
``dead_letter.jsonl`` (bad records with reason and position) and ``report.html``.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from driftwatch.actions.reference import ReferenceReader
from driftwatch.connectors.config import Connector, load_connector
from driftwatch.connectors.deadletter import DeadLetterWriter
from driftwatch.connectors.file import FileInput, FileSource, bind_inputs, separator_notes
from driftwatch.connectors.file_process import ProcessSource, input_bytes, reads_in_process
from driftwatch.connectors.jsonscan import load_scanner_ahead
from driftwatch.connectors.probe import probe_inputs
from driftwatch.connectors.readers import detect_format
from driftwatch.detectors.config import DetectorConfig
from driftwatch.errors import ConfigError, SourceError
from driftwatch.numba_setup import prewarm
from driftwatch.onboard.consistency import check_reference, resolve_reference
from driftwatch.outputlog import segments
from driftwatch.pipeline import ModelMonitor, WindowResult, window_spec_from_policy
from driftwatch.pipeline.closecuts import cut_at_closes
from driftwatch.pipeline.loadahead import load_loops_ahead
from driftwatch.policy.durations import parse_duration
from driftwatch.policy.level_store import LevelStore
from driftwatch.policy.loader import load_policy
from driftwatch.policy.schema import Policy
from driftwatch.replay.frozen import setup_frozen
from driftwatch.replay.isolation import poison_records, timeline_record
from driftwatch.replay.judge_process import JudgeProcess, judges_apart
from driftwatch.replay.profile_cache import cached_profile
from driftwatch.replay.timeline import TimelineWriter, when
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile, reference_notes

__all__ = [
    "RUN_FILES",
    "ReplayResult",
    "build_monitor",
    "clear_previous_run",
    "monitor_for",
    "nothing_read_error",
    "replay",
    "slim_record",
    "summarise",
]

DEFAULT_WINDOW = WindowSpec(kind="count", pane_size=5_000)
_BULKY = ("signals", "features")


def slim_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A timeline line without its bulky per-signal and per-feature parts: what
    :func:`summarise` reads of it."""
    return {k: v for k, v in rec.items() if k not in _BULKY}

log = logging.getLogger(__name__)


@dataclass
class ReplayResult:
    """What a replay produced; ``records`` are the timeline's lines without their bulky
    ``signals`` and ``features`` (read ``timeline.jsonl`` for those)."""

    out_dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    results: list[WindowResult] = field(default_factory=list)
    open_actions: list[int] = field(default_factory=list)


def _resolve(path: str, base: Path) -> Path:
    p = Path(path)
    if p.is_absolute() or p.exists():
        return p
    return base / p


def build_monitor(
    policy: Policy | None,
    *,
    reference: str | Path | None = None,
    base_dir: Path | None = None,
    window: WindowSpec | None = None,
    connector: Connector | None = None,
    profile_cache: Path | None = None,
) -> ModelMonitor:
    """A monitor for the policy's model, on its reference profile (kept in, and read back
    from, ``profile_cache`` where given: :mod:`~driftwatch.replay.profile_cache`).

    A reference table is read with the policy's ``reference:`` conventions; features the
    ``connector`` types explicitly get that type in the profile, the values it reads as
    missing are missing there too, its percent and money features are read as such text,
    and a score column written in its score's scale (log-odds, points, percent) is read as
    the stream's score is.
    """
    ref = reference or (policy.model.reference if policy else None)
    if ref is None:
        raise ConfigError("no reference: give --reference or a policy whose model names one")
    ref_path = _resolve(str(ref), base_dir or Path.cwd())
    # the actions read the reference through the same reader (ReferenceReader.of)
    profile = cached_profile(ReferenceReader.of(policy, connector), ref_path, profile_cache)
    return monitor_for(policy, profile, window=window)


def monitor_for(
    policy: Policy | None,
    profile: ReferenceProfile,
    *,
    window: WindowSpec | None = None,
    model: str | None = None,
    detectors: DetectorConfig | None = None,
) -> ModelMonitor:
    """The pipeline of the policy's model on ``profile``: replay, the daemon (through
    :func:`build_monitor`) and the Python API all start here."""
    spec = window or (window_spec_from_policy(policy) if policy else DEFAULT_WINDOW)
    name = model or (policy.model.name if policy else "model")
    return ModelMonitor(name, profile, spec, policy=policy, detectors=detectors)


def _episodes(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    order = ["none", "mild", "moderate", "severe"]
    for r in records:
        tier = r["tier"]
        if tier != "none":
            if cur is None:
                cur = {
                    "first_window": r["window_id"],
                    "first_alert": r["end"],
                    "max_tier": tier,
                    "windows": 0,
                }
                out.append(cur)
            cur["windows"] += 1
            cur["last_window"] = r["window_id"]
            cur["end"] = r["end"]
            if order.index(tier) > order.index(cur["max_tier"]):
                cur["max_tier"] = tier
        else:
            cur = None
    return out


def _faults(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs of windows in a data-quality fault: where, which signals on which features,
    and the action of the run's first window (a broken feed alerts apart from the drift
    tiers, and holds model changes)."""
    out: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for r in records:
        d = r.get("decision") or {}
        if not d.get("data_quality_fault"):
            cur = None
            continue
        if cur is None:
            cur = {"first_window": r["window_id"], "first_alert": r["end"], "windows": 0,
                   "action": d.get("action"), "signals": []}
            out.append(cur)
        cur["windows"] += 1
        cur["last_window"] = r["window_id"]
        for x in d.get("reasons", ()):
            if x.get("kind") == "data_quality":
                name = x["signal"] + (f"[{x['feature']}]" if x.get("feature") else "")
                if name not in cur["signals"]:
                    cur["signals"].append(name)
    return out


def _verdict(r: dict[str, Any]) -> dict[str, Any]:
    d = r.get("decision") or {}
    return {"window_id": r["window_id"], "tier": r["tier"], "time": d.get("time"),
            "completeness": r["cohort"].get("completeness"),
            "reasons": d.get("reasons", [])}


def summarise(
    records: Sequence[dict[str, Any]],
    monitor: ModelMonitor,
    executed: Sequence[dict[str, Any]] | None = None,
    numbered: bool = False,
) -> dict[str, Any]:
    """Windows per tier, episodes, actions, GPU-hours of retraining, cohort verdicts and
    every kept cohort's expected and realised rates.

    ``numbered``: event time is each prediction's number in its stream (``event_time:
    {source: order}``): the summary says so (``"event_time": "record order"``), the first
    and last events are ``record N``, and its label delays count records.

    Where the monitor read its outcomes ahead of the predictions (an outcomes file without
    times, ``event_time: {source: arrival}``), the summary says so
    (``"outcomes_read_ahead": true``): each such outcome joins when its prediction is read,
    so every join counts in ``labels.late_predictions``, as expected there.

    ``executed``: the audit-trail entries of an executing replay; each action then says
    what it came to (:func:`~driftwatch.actions.outcomes.action_outcome`). Without them
    (a dry run) each action is one that would have run, marked ``dry run``.
    """
    verdicts = [r for r in records if r.get("cohort") is not None]
    records = [r for r in records if r.get("cohort") is None]
    tiers = Counter(r["tier"] for r in records)
    actions: list[dict[str, Any]] = []
    gpu_hours = 0.0
    # a window without a time (none is made now; older timelines have some) sorts first
    for r in sorted((*records, *verdicts), key=lambda r: (r["end_time"] is not None,
                                                         r["end_time"] or 0.0)):
        d = r.get("decision") or {}
        if d.get("action"):
            s = d.get("action_settings") or {}
            actions.append(
                {
                    "window_id": r["window_id"],
                    "time": r["end"],
                    "tier": r["tier"],
                    "action": d["action"],
                    "requires_approval": d.get("requires_approval", False),
                    # the keys an executed action has, so summary.json reads the same way
                    "id": None,
                    "kind": d["action"],
                    "window": r["window_id"],
                    "state": "dry run",
                    "reason": None,
                    "version": None,
                }
            )
            if d["action"] == "retrain":
                limit = s.get("time_limit", 3600.0)
                limit = parse_duration(limit) if isinstance(limit, str) else limit
                gpu_hours += float(s.get("gpus", 1)) * float(limit) / 3600
    by_type = dict(sorted(Counter(a["action"] for a in actions).items()))  # decisions only
    if executed is not None:
        actions = _with_outcomes(actions, executed)
    j = monitor.joiner
    errors = {"errors_by_stage": dict(sorted(monitor.errors_by_stage.items()))} \
        if monitor.errors_by_stage else {}
    return {
        **errors,
        "model": monitor.model,
        **_policy_meta(monitor),
        "reference": monitor.profile.fingerprint,
        "windows": len(records),
        "windows_per_tier": {t: tiers.get(t, 0) for t in ("none", "mild", "moderate", "severe")},
        "episodes": _episodes(records),
        "data_quality_faults": _faults(records),
        "actions": actions,
        "actions_by_type": by_type,
        "actions_executed": executed is not None,
        "retrain_gpu_hours_max": round(gpu_hours, 3),
        **monitor.record_counts(),
        "late_events": monitor.window.n_late,
        "bad_by_reason": dict(sorted(monitor.bad_by_reason.items())),
        "unknown_labels": {s: dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0])))
                           for s, v in sorted(monitor.unknown_labels.items())},
        "labels": j.stats(),
        "label_delay": j.delay_stats(),
        "label_cohorts": [c.to_dict() for c in j.cohort_stats()],
        "cohort_verdicts": [_verdict(r) for r in verdicts],
        "window_cohorts": [c.summary(monitor.window.watermark, j.ttl)
                           for c in j.book.cohorts() if c.window_id >= 0],
        "first_event": when(records[0]["start_time"], numbered) if records else None,
        "last_event": when(records[-1]["end_time"], numbered) if records else None,
        **({"event_time": "record order"} if numbered else {}),
        # outcomes without times read ahead of the predictions: every join counts in
        # labels.late_predictions, as it should, and the summary says why
        **({"outcomes_read_ahead": True} if monitor.outcomes_read_ahead else {}),
    }


def _policy_meta(monitor: ModelMonitor) -> dict[str, Any]:
    """The policy's name, owner and description for the summary (and the report's run
    overview), where a policy is given and says them."""
    if monitor.policy is None:
        return {}
    meta = monitor.policy.metadata
    out = {"policy_name": meta.name}
    out.update({k: v.strip() for k, v in (("policy_owner", meta.owner),
                                          ("policy_description", meta.description))
                if v and v.strip()})
    return out


def _with_outcomes(
    decided: list[dict[str, Any]], executed: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Each decided action with what the outbox says it came to; the actions a decision
    did not ask for itself (a retraining's shadow) follow, each after its parent."""
    from driftwatch.actions.outcomes import action_outcome

    first = {}
    for e in executed:
        if e.get("parent_id") is None:
            first.setdefault((e.get("window_id"), e.get("action")), e)
    out: list[dict[str, Any]] = []
    seen: set[Any] = set()
    for a in decided:
        e = first.get((a["window_id"], a["action"]))
        if e is None or e.get("id") in seen:
            out.append({**a, "id": None, "kind": a["action"], "window": a["window_id"],
                        "state": "not recorded", "reason": "the outbox holds no such action",
                        "version": None})
            continue
        seen.add(e.get("id"))
        out.append({**a, **action_outcome(e)})
    for e in executed:  # follow-ups after their parent; anything else recorded at the end
        if e.get("id") in seen:
            continue
        seen.add(e.get("id"))
        row = {"window_id": e.get("window_id"), "action": e.get("action"),
               "tier": e.get("tier"), "parent_id": e.get("parent_id"),
               "requires_approval": e.get("requires_approval", False), **action_outcome(e)}
        at = next((i for i, a in enumerate(out) if e.get("parent_id") is not None
                   and a.get("id") == e.get("parent_id")), None)
        if at is None:
            out.append(row)
            continue
        while at + 1 < len(out) and out[at + 1].get("parent_id") == e.get("parent_id"):
            at += 1  # after the parent's earlier follow-ups
        out.insert(at + 1, row)
    return out


def _reads_json(inputs: Sequence[str | Path]) -> bool:
    """Whether any of ``inputs`` is JSON lines or a Kafka recording (the JSON scanner's)."""
    for p in inputs:
        with contextlib.suppress(OSError, SourceError, ValueError):
            if Path(p).is_file() and detect_format(Path(p)) in ("jsonl", "kafka-recording"):
                return True
    return False


def replay(
    connector: Connector | str | Path,
    inputs: Sequence[str | Path],
    out_dir: str | Path,
    *,
    policy: Policy | str | Path | None = None,
    reference: str | Path | None = None,
    batch_size: int = 10_000,
    progress: bool = True,
    report: bool = True,
    execute: bool = False,
    state_dir: str | Path | None = None,
    on_window: Callable[[WindowResult], None] | None = None,
    keep_results: bool = False,
    warn: Callable[[str], None] | None = None,
    note: Callable[[str], None] | None = None,
    champion: Any = None,
    tracking_uri: str | None = None,
    levels_cache: str | Path | None = None,
    read_process: bool | None = None,
    judge_process: bool | None = None,
) -> ReplayResult:
    """Run a recording through the pipeline and write the timeline and summary.

    A previous run's files in ``out_dir`` are replaced whole (see :data:`RUN_FILES`), and
    so is its default ``state`` folder when ``execute`` runs without ``state_dir``: a
    rerun never appends to an old dead-letter file or finds old actions done.

    Before reading, the first records of each stream are probed
    (:func:`~driftwatch.connectors.probe.probe_inputs`): ``features: infer`` takes the
    nested path where a feature sits, and each mapped field absent from most of them is
    passed to ``warn`` (default: a ``warning:`` line on stderr) and, for features, becomes
    the ``field_absent`` data-quality signal of every window. A CSV (input or reference)
    read with another separator than the comma, found in its header, is said in one line
    passed to ``note`` (default: a ``note:`` line on stderr).

    With ``execute``, ``champion`` (a :class:`~driftwatch.registry.scorers.ChampionRef`)
    names the user's registered model; the monitored model takes its registered name. Its
    scores that disagree with the reference's score column are said through ``note``.

    ``levels_cache``: a folder where calibrated levels are kept between runs
    (:class:`~driftwatch.policy.level_store.LevelStore`), and the reference's profile
    (:mod:`~driftwatch.replay.profile_cache`); a run on the same reference and settings
    reads them back instead of resampling and binning again (the same values).

    ``read_process``: read and decode the files in a child process, beside the loop
    (:mod:`~driftwatch.connectors.file_process`; the same polls, so the same results).
    None: when the inputs hold at least
    :data:`~driftwatch.connectors.file_process.MIN_PROCESS_BYTES` once decompressed and a
    second core is there.

    ``judge_process``: judge the closed windows in a third process
    (:mod:`~driftwatch.replay.judge_process`; the same timeline). None: where the files
    are read in a process, no action runs, neither ``on_window`` nor ``keep_results`` is
    asked, the policy has no ``cohort_*`` rule, a second core is there and the windows
    close often (count panes of at most
    :data:`~driftwatch.replay.judge_process.DENSE_PANE` events).
    """
    prewarm()  # the window kernel needs numba once the reference is read: import it now
    if read_process is not False and _reads_json(inputs):
        load_scanner_ahead()  # while the reference is read: a forked reader gets them
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    clear_previous_run(out, state=execute and state_dir is None)
    conn = connector if isinstance(connector, Connector) else load_connector(connector)
    pol = policy if isinstance(policy, Policy) or policy is None else load_policy(policy)
    check_reference(pol, connector=conn, reference=reference)
    if champion is not None:  # score_scale: stream reads the connector's score scale
        champion = champion.resolved(
            conn.stream_score_scale(pol.reference.score_is if pol else "p_bad"),
            connector=f"connector {conn.name!r}")
    numbered = conn.numbers_records()
    monitor = build_monitor(pol, reference=reference, connector=conn,
                            profile_cache=None if levels_cache is None else Path(levels_cache))
    # labelled training rows are for actions to learn from: without them, none are kept
    monitor.keep_training_rows = execute
    if any(s.role == "outcomes" and s.event_time.source == "arrival" for s in conn.streams):
        monitor.read_outcomes_ahead()  # read ahead of the predictions: all may wait
    if levels_cache is not None:
        monitor.calibrators.store = LevelStore(levels_cache)
    bound = bind_inputs(conn, [Path(p) for p in inputs])
    for text in _separator_notes(reference or (pol.model.reference if pol else None), bound,
                                 pol.reference.conventions().names if pol else None):
        (note or _note)(text)
    # the first records: where `features: infer` finds each feature, which paths match nothing
    probe = probe_inputs(conn, monitor.profile.schema, bound,
                         missing=monitor.profile.missing_shares())
    conn = probe.connector
    schema = conn.schema_for(monitor.profile.schema)
    for text in probe.warnings():
        (warn or _stderr)(text)
    monitor.absent_fields = probe.absent_features()
    dl = DeadLetterWriter(out / "dead_letter.jsonl")
    source: FileSource | ProcessSource = FileSource(conn, schema, batch_size=batch_size,
                                                    dead_letter=dl, inputs=bound)
    total = sum(Path(p).stat().st_size for p in inputs if Path(p).exists())
    if reads_in_process(total_bytes=input_bytes(inputs), wanted=read_process):
        source = ProcessSource(source)
    result = ReplayResult(out_dir=out)
    actions = None
    entries: list[dict[str, Any]] | None = None  # the audit trail, when actions ran
    if execute:
        from driftwatch.replay.execute import ReplayActions

        ref = reference or (pol.model.reference if pol else None)
        if champion is not None:
            monitor.model = champion.name
        reader = ReferenceReader.of(pol, conn)  # as build_monitor read the reference
        actions = ReplayActions(state_dir or out / "state", monitor, reference=str(ref),
                                champion=champion, tracking_uri=tracking_uri,
                                note=note or _note, text_formats=conn.text_formats(),
                                score_scale=reader.score_scale, reference_reader=reader)
    bar = _progress(total, progress)
    with TimelineWriter(out / "timeline.jsonl") as tl, setup_frozen():

        def emit(results: list[WindowResult]) -> None:
            for res in results:
                rec = timeline_record(res, numbered)
                if res.error is not None:
                    log.error("window %d: the %s stage failed (%s); recorded, the replay "
                              "goes on", res.window.window_id, res.error.stage,
                              res.error.message)
                tl.write(rec)
                # the full records are on disk; memory keeps what summaries and
                # expectations read, so a long replay does not grow with its windows
                result.records.append(slim_record(rec))
                if keep_results:
                    result.results.append(res)
                if actions is not None:
                    actions.on_window(res)
                if on_window is not None:
                    on_window(res)

        judge = None
        if judges_apart(monitor, wanted=judge_process,
                        reader_process=isinstance(source, ProcessSource),
                        executes=actions is not None,
                        hooked=on_window is not None or keep_results, note=note or _note):
            # the judge writes the timeline from here on; this process writes nothing to
            # it (nothing is buffered here at the fork: the file was only opened)

            def judged() -> list[dict[str, Any]]:  # in the judge, at the end
                tl.close()
                return result.records

            judge = JudgeProcess(monitor, emit, judged)
        try:
            if isinstance(source, ProcessSource):
                source.start(batch_size)  # forked: threads may start now
                if judge is not None:  # forked too, before any thread starts here
                    judge.start(close=(source.fileno(),))
                load_loops_ahead()  # while the reader decodes its first polls
            while (polled := source.poll(batch_size)) is not None:
                # executing, the poll is taken in window by window: the actions step where
                # each window closed in the stream, not where a poll happens to end, so they
                # come to the same whatever the batch size (a shadow counts the outcomes
                # that followed its window, not those of the rest of the poll)
                parts = [polled] if actions is None else cut_at_closes(monitor.window, polled)
                for part in parts:
                    if judge is not None:
                        judge.send(monitor.take_in(part))
                        closed = []
                    else:
                        closed = monitor.process(part)
                        emit(closed)
                    for err in monitor.take_poll_errors():
                        bad = poison_records(err)
                        dl.write(bad)
                        log.error("a poll of %d events could not be processed (%s: %s); "
                                  "they are dead-lettered", len(bad), err.error.stage,
                                  err.error.message)
                    if actions is not None and closed:
                        actions.step()
                if bar is not None:
                    bar.update(polled.bytes_read)
                    windows = tl.count if judge is None else judge.sent
                    bar.set_postfix_str(f"events={monitor.n_events:,} windows={windows:,}",
                                        refresh=False)
            if judge is None:
                emit(monitor.flush())
            else:
                result.records, errors = judge.finish()
                for stage, n in errors.items():
                    monitor.errors_by_stage[stage] = monitor.errors_by_stage.get(stage, 0) + n
            if actions is not None:
                still_open = actions.finish()
                result.open_actions = [r.id for r in still_open]
                undecided = [_undecided(r) for r in still_open]
                entries = actions.export(out / "actions.jsonl")
        finally:
            if actions is not None:
                actions.close()
            if judge is not None:
                judge.close()
            source.close()
            dl.close()
            if bar is not None:
                bar.close()
    result.summary = summarise(result.records, monitor, executed=entries, numbered=numbered)
    if actions is not None:
        result.summary["undecided"] = undecided
    (out / "summary.json").write_bytes(
        orjson.dumps(result.summary, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    )
    if monitor.n_events == 0:  # nothing to measure: say why instead of an empty report
        raise nothing_read_error(inputs, monitor.bad_by_reason, monitor.n_outcomes,
                                 out / "dead_letter.jsonl")
    monitor.profile.save(out / "reference.json.gz")
    if report:
        from driftwatch.report import write_report

        try:
            write_report(out, reference=monitor.profile)
        except Exception as exc:  # the timeline and summary stand without the report
            log.error("writing the report failed (%s: %s); the timeline and summary are "
                      "complete", type(exc).__name__, exc)
    return result


#: What a replay writes into its output folder (a rerun replaces all of them).
RUN_FILES = ("timeline.jsonl", "summary.json", "dead_letter.jsonl", "report.html",
             "reference.json.gz", "actions.jsonl")


def clear_previous_run(out: Path, *, state: bool = False) -> None:
    """Remove what an earlier replay left in ``out`` (and its ``state`` folder if asked)."""
    import shutil

    for name in RUN_FILES:
        (out / name).unlink(missing_ok=True)
    for _, seg in segments(out / "timeline.jsonl"):  # a daemon's rotated timeline
        seg.unlink(missing_ok=True)
    if state and (out / "state").is_dir():
        shutil.rmtree(out / "state")


def _stderr(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


def _note(text: str) -> None:
    print(f"note: {text}", file=sys.stderr)


def _separator_notes(reference: str | Path | None, inputs: Sequence[FileInput],
                     names: Sequence[str] | None = None) -> list[str]:
    """What :func:`replay` says about CSV files read with another separator or decimal
    mark than the comma and the point: the reference's (by its head; ``names``: its
    columns, the policy's, when it has no header line) and each input's."""
    out = [] if reference is None else reference_notes(resolve_reference(str(reference)),
                                                       f"the reference {reference}", names)
    return out + separator_notes(inputs)


def nothing_read_error(
    inputs: Sequence[str | Path],
    bad_by_reason: dict[str, int],
    n_outcomes: int,
    dead_letter: Path,
) -> SourceError:
    """The one-line error of a replay that read no prediction: files empty, every record
    rejected (with the top reasons and the first detail), or outcomes only."""
    names = ", ".join(str(p).split("=", 1)[-1] for p in inputs) or "no input"
    bad = sum(bad_by_reason.values())
    if bad:
        top = sorted(bad_by_reason.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
        first = ""
        try:
            with dead_letter.open("rb") as fh:
                d = orjson.loads(fh.readline())
            first = f"; first: {d.get('source')}:{d.get('position')}: {d.get('detail')}"
        except (OSError, orjson.JSONDecodeError):
            pass
        hint = ""
        if top[0][0] == "invalid_json" and any(_looks_like_csv(p) for p in inputs):
            hint = " (the file looks like CSV: name it .csv or set format: csv in the connector)"
        return SourceError(
            f"every record was rejected ({bad} bad records: "
            + ", ".join(f"{r} {n}" for r, n in top) + f"){first}{hint}; "
            f"all of them are in {dead_letter}")
    if n_outcomes:
        return SourceError(f"no predictions in {names}: only {n_outcomes} outcomes were read; "
                           "check the predictions stream's paths in the connector")
    return SourceError(f"no records in {names}: the input is empty")


def _looks_like_csv(path: str | Path) -> bool:
    p = Path(str(path).split("=", 1)[-1])
    try:
        with p.open("rb") as fh:
            head = fh.read(2)
            fh.seek(0)
            stream = gzip.GzipFile(fileobj=fh) if head == b"\x1f\x8b" else fh
            head = stream.readline(4096)
    except (OSError, EOFError):
        return False
    return not head.lstrip().startswith((b"{", b"[")) and head.count(b",") >= 1


def _undecided(rec: Any) -> dict[str, Any]:
    """An action still open when the recording ended, and why."""
    why = rec.note or rec.state.value
    if rec.action == "shadow":
        why = f"{why} when the recording ended"
    return {"id": rec.id, "action": rec.action, "key": rec.key, "state": rec.state.value,
            "reason": why}


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(
        total=total or None,
        unit="B",
        unit_scale=True,
        desc="replay",
        file=sys.stderr,
        mininterval=0.5,
        disable=None,
    )
