"""Reports from a live daemon: one per decision when it is made, and a rolling one on a schedule.

What the reports folder (``<state>/out``, served under ``/reports/``) holds::

    index.html                           every report of every model, newest first
    <model>/report.html                  the rolling report: the most recent windows
    <model>/decisions/window-<id>.html   one per decision (tier above none, or an action)
    <model>/decisions/latest.html        a redirect to the newest decision report
    <model>/reports.json                 what the index lists (window, tier, action, times)

The consume loop only takes what a report needs that it owns (the timeline's synced length,
the monitor's counters, the reference profile) and hands a :class:`ReportJob` to one writer
thread, which reads the timeline's tail, the audit trail (what the outbox says ran), builds
the page and writes it atomically (a temporary file, then a rename). A decision report made
while its action was still open is written again by the next rolling run once the outbox
says the action moved on (or by a job that does only that: what ``--exit-when-done``
submits once the actions are through). A report that cannot be written is a log line; the
daemon goes on.
At most ``keep`` decision reports per model stay on disk (the oldest are removed), and a
report covers at most ``windows`` windows, so neither the disk nor the time to write one
grows with the daemon's age.

>>> entries = [{"window_id": w, "written": f"t{w}"} for w in (3, 9, 5)]
>>> [e["window_id"] for e in newest_first(entries)]
[9, 5, 3]
>>> [e["window_id"] for e in retained(entries, keep=2)]
[9, 5]
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import orjson

from driftwatch.clock import Clock
from driftwatch.outputlog import open_generation, segment_path

__all__ = [
    "DECISIONS",
    "LiveReports",
    "ReportJob",
    "index_page",
    "newest_first",
    "report_job",
    "retained",
    "tail_lines",
    "timeline_tail",
]

log = logging.getLogger(__name__)

#: Sub-folder of a model's reports folder that holds its decision reports.
DECISIONS = "decisions"
_MANIFEST = "reports.json"
#: Outbox states after which an action may still change what its decision report says.
_OPEN = ("pending", "running", "awaiting_approval")
_BLOCK = 1 << 16


def tail_lines(path: Path, end: int, n: int, *, block: int = _BLOCK) -> list[bytes]:
    """The last ``n`` complete lines of ``path`` before byte ``end`` (read backwards, so
    the cost follows ``n``, not the file's length)."""
    if n <= 0 or end <= 0:
        return []
    with path.open("rb") as fh:
        return _tail(fh, end, n, block)


def timeline_tail(path: Path, generation: int, end: int, n: int, *,
                  block: int = _BLOCK) -> list[bytes]:
    """The last ``n`` lines of a rotated timeline (``path`` its active file) before byte
    ``end`` of ``generation``: from that file, then from the segments before it, newest
    first, as far as needed. Safe while the daemon rotates the log (a segment deleted
    meanwhile ends the read)."""
    if n <= 0:
        return []
    try:
        with open_generation(path, generation) as fh:
            lines = _tail(fh, end, n, block) if end > 0 else []
    except FileNotFoundError:
        return []
    g = generation - 1
    while len(lines) < n and g >= 1:
        try:
            with segment_path(path, g).open("rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                lines = _tail(fh, size, n - len(lines), block) + lines
        except FileNotFoundError:
            break
        g -= 1
    return lines


def _tail(fh: Any, end: int, n: int, block: int) -> list[bytes]:
    """:func:`tail_lines` of an open file."""
    if n <= 0 or end <= 0:
        return []
    def whole(buf: bytes, pos: int) -> list[bytes]:
        pieces = buf.split(b"\n")
        if pos > 0:  # the first piece may be the end of a longer line
            pieces = pieces[1:]
        return [line for line in pieces if line.strip()]

    pos, chunks, newlines = end, [], 0
    while pos > 0:
        # newlines are counted per block read: a count over all read so far would
        # scan the tail once per block (quadratic in its length)
        if newlines > n and len(whole(b"".join(reversed(chunks)), pos)) >= n:
            break
        step = min(block, pos)
        pos -= step
        fh.seek(pos)
        chunk = fh.read(step)
        chunks.append(chunk)
        newlines += chunk.count(b"\n")
    return whole(b"".join(reversed(chunks)), pos)[-n:]


def newest_first(entries: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Decision entries, the most recent window first."""
    return sorted(entries, key=lambda e: int(e["window_id"]), reverse=True)


def retained(entries: Sequence[Mapping[str, Any]], *, keep: int) -> list[Mapping[str, Any]]:
    """The ``keep`` most recent decision entries."""
    return newest_first(entries)[: max(0, keep)]


def _atomic_write(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(dest)


@dataclass(frozen=True)
class ReportJob:
    """What the writer needs for one report; taken in the loop's thread.

    ``upto`` is the timeline's synced length in its active file, of ``generation``: the
    writer reads no byte past it (and reads the segments before it for older windows).
    ``decision`` (``window_id``, ``tier``, ``action``, ``end``) makes a decision report;
    None, the rolling one, or with ``page`` False only the decision reports whose
    action moved on (the rolling page stays as it is). ``base`` holds the monitor-level
    summary (counters, label statistics, the reference fingerprint).
    """

    model: str
    out_dir: Path
    upto: int
    base: Mapping[str, Any]
    reference: Any = None
    decision: Mapping[str, Any] | None = None
    page: bool = True
    generation: int = 1


@dataclass
class LiveReports:
    """The writer thread and the reports folder it keeps (see the module docstring).

    ``executed(model)`` returns the model's audit-trail entries (what ran, from the
    outbox), or None when actions are off.
    """

    root: Path
    clock: Clock
    windows: int = 200
    keep: int = 100
    executed: Callable[[str], list[dict[str, Any]]] | None = None
    _queue: queue.Queue[ReportJob | None] = field(default_factory=queue.Queue)
    _thread: threading.Thread | None = None
    _pending_rolling: set[tuple[str, bool]] = field(default_factory=set)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    written: int = 0
    failed: int = 0

    # -- the loop's side -------------------------------------------------------------------
    def submit(self, job: ReportJob) -> None:
        """Queue a report (a rolling one already waiting for the model is not queued twice)."""
        if job.decision is None:
            with self._guard:
                if (job.model, job.page) in self._pending_rolling:
                    return
                self._pending_rolling.add((job.model, job.page))
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="driftwatch-reports",
                                            daemon=True)
            self._thread.start()
        self._queue.put(job)

    def close(self, timeout_s: float = 10.0) -> None:
        """Write what is queued (for at most ``timeout_s``) and stop the writer."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout_s)
            if self._thread.is_alive():
                log.warning("reports still being written after %.0fs; left unfinished",
                            timeout_s)
            self._thread = None

    def pending(self) -> int:
        """Reports queued or being written."""
        return self._queue.unfinished_tasks

    def flush(self) -> None:
        """Block until every queued report is written (tests, shutdown)."""
        self._queue.join()

    # -- the writer's side -----------------------------------------------------------------
    def _work(self) -> None:
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                if job.decision is None:
                    with self._guard:
                        self._pending_rolling.discard((job.model, job.page))
                self.write(job)
            finally:
                self._queue.task_done()

    def write(self, job: ReportJob) -> Path | None:
        """Build and write one report now (in the calling thread); None if it failed."""
        try:
            path = self._write(job)
        except Exception as exc:  # a report is a convenience; the daemon goes on
            self.failed += 1
            log.warning("%s: writing the %s report failed (%s: %s)", job.model,
                        "decision" if job.decision else "rolling", type(exc).__name__, exc)
            return None
        self.written += 1
        return path

    def _write(self, job: ReportJob) -> Path | None:
        from driftwatch.replay.timeline import iso

        timeline = job.out_dir / "timeline.jsonl"
        records = [orjson.loads(line) for line in
                   timeline_tail(timeline, job.generation, job.upto, self.windows)]
        if not records:
            return None
        first = int(records[0].get("window_id", 0))
        executed = self.executed(job.model) if self.executed is not None else []
        executed = [e for e in executed if int(e.get("window_id") or 0) >= first]
        at = self.clock.now()
        now = iso(at) or ""
        doc = self._manifest(job.model)
        d = job.decision
        if d is None and not job.page:
            dest = None
            doc["decisions"] = retained([self._refreshed(job, e, records, executed, (at, now))
                                         for e in doc["decisions"]], keep=self.keep)
        elif d is None:
            dest = self._page(job, records, executed, None, now)
            if dest is None:
                return None
            doc["rolling"] = {"file": "report.html", "written": now, "written_at": at,
                              "first_window": first, "last_window": records[-1].get("window_id"),
                              "end": records[-1].get("end"), "tier": records[-1].get("tier")}
            doc["decisions"] = retained([self._refreshed(job, e, records, executed, (at, now))
                                         for e in doc["decisions"]], keep=self.keep)
            self._prune(job.model, doc["decisions"])  # a lowered `keep` applies here too
        else:
            wid = int(d["window_id"])
            dest = self._page(job, records, executed, wid, now)
            if dest is None:
                return None
            entry = {"window_id": wid, "tier": str(d.get("tier") or "none"),
                     "action": d.get("action"), "end": d.get("end"), "written": now,
                     "written_at": at, "file": f"{DECISIONS}/{dest.name}",
                     "action_state": _state_of(executed, wid)}
            others = [e for e in doc["decisions"] if e.get("window_id") != wid]
            doc["decisions"] = retained([*others, entry], keep=self.keep)
            self._prune(job.model, doc["decisions"])
        self._save(job.model, doc)
        return dest

    def _page(self, job: ReportJob, records: list[dict[str, Any]],
              executed: list[dict[str, Any]], window: int | None, now: str) -> Path | None:
        """Write the rolling report (``window`` None) or ``window``'s decision report, made
        from the windows up to it; None when the window is past the tail read."""
        from driftwatch.report import RunData, build_report

        if window is not None:
            cut = [i for i, r in enumerate(records) if r.get("window_id") == window]
            if not cut:
                log.warning("%s: window %d is not in the timeline's last %d windows; no "
                            "decision report", job.model, window, self.windows)
                return None
            records = records[: cut[0] + 1]
        first = int(records[0].get("window_id", 0))
        summary = {**job.base, "windows": len(records)}
        if first > 0:  # the daemon's totals would not match the windows shown: sum those
            for k in ("events", "outcomes", "late_events"):
                summary.pop(k, None)
        run = RunData(job.out_dir, records, summary, job.reference, executed,
                      {str(k): int(v) for k, v in (job.base.get("bad_by_reason") or {}).items()})
        if first > 0:
            run.warnings.append(f"live report: windows {first} to "
                                f"{records[-1].get('window_id')}, the most recent "
                                f"{len(records)}; earlier ones are in the timeline files")
        html = build_report(run, decision=window, generated_at=now)
        model_dir = self.root / job.model
        dest = model_dir / "report.html" if window is None else \
            model_dir / DECISIONS / f"window-{window}.html"
        _atomic_write(dest, html.encode("utf-8"))
        return dest

    def _refreshed(self, job: ReportJob, entry: dict[str, Any], records: list[dict[str, Any]],
                   executed: list[dict[str, Any]], when: tuple[float, str]) -> dict[str, Any]:
        """A decision report whose action was still open is written again once the outbox
        says it moved on (ran, waits for approval, failed), so it tells what ran."""
        before = entry.get("action_state")
        if before not in _OPEN:
            return entry
        wid = int(entry["window_id"])
        now_state = _state_of(executed, wid)
        if now_state == before or self._page(job, records, executed, wid, when[1]) is None:
            return entry
        return {**entry, "action_state": now_state, "written": when[1], "written_at": when[0]}

    # -- what the index lists --------------------------------------------------------------
    def _manifest(self, model: str) -> dict[str, Any]:
        path = self.root / model / _MANIFEST
        try:
            doc = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            doc = {}
        return {"model": model, "rolling": doc.get("rolling"),
                "decisions": list(doc.get("decisions") or ())}

    def _save(self, model: str, doc: dict[str, Any]) -> None:
        _atomic_write(self.root / model / _MANIFEST,
                      orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
        latest = newest_first(doc["decisions"])
        if latest:
            _atomic_write(self.root / model / DECISIONS / "latest.html",
                          _redirect(Path(latest[0]["file"]).name))
        _atomic_write(self.root / "index.html", index_page(self._manifests()).encode("utf-8"))

    def _prune(self, model: str, kept: Sequence[Mapping[str, Any]]) -> None:
        """Remove decision reports past retention (and any a crash left unlisted)."""
        names = {Path(str(e["file"])).name for e in kept}
        for p in (self.root / model / DECISIONS).glob("window-*.html"):
            if p.name not in names:
                p.unlink(missing_ok=True)

    def _manifests(self) -> list[dict[str, Any]]:
        return [self._manifest(p.parent.name) for p in sorted(self.root.glob(f"*/{_MANIFEST}"))]


def report_job(rt: Any, result: Any = None, *, page: bool = True) -> ReportJob | None:
    """What a report of runtime ``rt`` needs, taken in the loop's thread: its rolling
    report (with ``page`` False: only its decision reports whose action moved on), or the
    decision report of ``result`` (a ``WindowResult``; None when its decision is none:
    tier none and no action, as ``/status`` counts them)."""
    from driftwatch.replay import summarise

    decision = None
    if result is not None:
        d = result.decision
        tier = str(getattr(d, "tier", "none")) if d is not None else "none"
        if d is None or (tier == "none" and not d.action):
            return None
        from driftwatch.replay.timeline import iso

        decision = {"window_id": int(result.window.window_id), "tier": tier,
                    "action": d.action or None, "end": iso(float(result.window.end_time))}
    upto = rt.timeline.sync()
    generation = rt.timeline.generation
    if upto == 0 and generation == 1:
        return None
    return ReportJob(model=rt.name, out_dir=rt.out_dir, upto=upto,
                     base=summarise([], rt.monitor), reference=rt.monitor.profile,
                     decision=decision, page=page, generation=generation)


def _state_of(executed: Sequence[Mapping[str, Any]], window: int) -> str | None:
    """The outbox state of the window's (last) action; None when it has none."""
    states = [str(e.get("state")) for e in executed if e.get("window_id") == window
              and e.get("parent_id") is None]
    return states[-1] if states else None


def _redirect(target: str) -> bytes:
    t = escape(target, quote=True)
    return (f'<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">'
            f'<meta http-equiv="refresh" content="0; '
            f'url={t}"><title>latest decision report</title><a href="{t}">{t}</a>\n').encode()


def index_page(manifests: Sequence[Mapping[str, Any]]) -> str:
    """The ``/reports/`` index: every report, newest first (by when it was written, then
    by window).

    >>> html = index_page([{"model": "credit", "rolling": {"file": "report.html",
    ...     "written": "2026-01-02T00:00:00Z", "written_at": 2.0, "first_window": 0,
    ...     "last_window": 9,
    ...     "end": "2024-01-09T00:00:00Z", "tier": "mild"}, "decisions": [{"window_id": 7,
    ...     "tier": "mild", "action": "online_update", "end": "2024-01-08T00:00:00Z",
    ...     "written": "2026-01-01T00:00:00Z", "written_at": 1.0,
    ...     "file": "decisions/window-7.html"}]}])
    >>> html.index("credit/report.html") < html.index("credit/decisions/window-7.html")
    True
    """
    rows: list[tuple[tuple[float, int], str]] = []
    for m in manifests:
        model = escape(str(m["model"]))
        r = m.get("rolling")
        if r:
            rows.append(((float(r.get("written_at") or 0), 1 << 62), _row(
                f"{model}/{r['file']}", model, "rolling",
                f"windows {r.get('first_window')}–{r.get('last_window')}",
                str(r.get("tier") or "none"), "", str(r.get("end") or ""), str(r.get("written")))))
        for d in m.get("decisions") or ():
            rows.append(((float(d.get("written_at") or 0), int(d["window_id"])), _row(
                f"{model}/{d['file']}", model, "decision", f"window {d.get('window_id')}",
                str(d.get("tier") or "none"), str(d.get("action") or "none"),
                str(d.get("end") or ""), str(d.get("written")))))
    rows.sort(key=lambda x: x[0], reverse=True)
    body = "".join(r for _, r in rows) or '<tr><td colspan="7">no reports yet</td></tr>'
    return ("<!doctype html><html lang=\"en\"><meta charset=\"utf-8\">"
            "<link rel=\"icon\" href=\"data:,\"><title>driftwatch "
            "reports</title><style>body{font:14px system-ui,sans-serif;margin:2em}"
            "td,th{padding:.2em .8em;text-align:left}</style><h1>driftwatch reports</h1>"
            "<p>Newest first. A decision report is written when the decision is made; the "
            "rolling report of each model is rewritten on a schedule.</p>"
            "<table class=\"reports\"><thead><tr><th>written</th><th>model</th><th>report"
            "</th><th>covers</th><th>tier</th><th>action</th><th>window end (event time)"
            f"</th></tr></thead><tbody>{body}</tbody></table></html>\n")


def _row(href: str, model: str, kind: str, covers: str, tier: str, action: str, end: str,
         written: str) -> str:
    h = escape(href, quote=True)
    return (f'<tr class="report" data-kind="{kind}" data-model="{model}" '
            f'data-tier="{escape(tier)}"><td>{escape(written)}</td><td>{model}</td>'
            f'<td><a href="{h}">{kind}</a></td><td>{escape(covers)}</td><td>{escape(tier)}</td>'
            f"<td>{escape(action)}</td><td>{escape(end)}</td></tr>")
