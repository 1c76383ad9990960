"""Reports of a live daemon: a decision report per decision, a rolling one, retention, index.

Built on the hand-made run folder of ``test_report.py`` (six windows: none, none, mild with
an online update, moderate with an executed shadow, severe with a retraining, a
data-quality alert), written by :class:`LiveReports` the way the daemon's writer does.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.clock import ManualClock
from driftwatch.service.live_reports import LiveReports, ReportJob, tail_lines
from driftwatch.windows.profile import ReferenceProfile

from .test_report import Elements, make_run
from .test_report import profile as profile

MODEL = "credit"


@pytest.fixture()
def folder(tmp_path: Path, profile: ReferenceProfile) -> Path:
    run = make_run(tmp_path, profile)
    root = tmp_path / "out"
    root.mkdir()
    shutil.move(run, root / MODEL)
    return root


def _records(folder: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in (folder / MODEL / "timeline.jsonl").read_bytes()
            .splitlines()]


def _job(folder: Path, profile: ReferenceProfile, window: int | None,
         upto: int | None = None) -> ReportJob:
    tl = folder / MODEL / "timeline.jsonl"
    base = orjson.loads((folder / MODEL / "summary.json").read_bytes())
    decision = None
    if window is not None:
        rec = _records(folder)[window]
        decision = {"window_id": window, "tier": rec["tier"],
                    "action": rec["decision"]["action"], "end": rec["end"]}
    return ReportJob(MODEL, folder / MODEL, tl.stat().st_size if upto is None else upto,
                     base, profile, decision)


def _executed(folder: Path) -> Any:
    entries = [orjson.loads(x) for x in (folder / MODEL / "actions.jsonl").read_bytes()
               .splitlines()]
    return lambda model: entries if model == MODEL else []


def test_a_decision_report_shows_its_decision_and_what_the_outbox_says_ran(
        folder: Path, profile: ReferenceProfile) -> None:
    (folder / MODEL / "actions.jsonl").rename(folder / "trail.jsonl")  # given, not read
    entries = [orjson.loads(x) for x in (folder / "trail.jsonl").read_bytes().splitlines()]
    reports = LiveReports(folder, ManualClock(1_767_225_600.0),
                          executed=lambda m: entries)
    path = reports.write(_job(folder, profile, 3))
    assert path == folder / MODEL / "decisions" / "window-3.html"
    doc = Elements(path.read_text())
    assert [a["data-window"] for a in doc.find("div", class_="decision")] == ["3"]
    (shadow,) = doc.find("div", class_="shadow")
    assert shadow["data-status"] == "executed"
    text = " ".join(doc.text)
    assert "Decision report · credit · window 3" in text
    assert "generated 2026-01-01T00:00:00Z" in text
    assert "4 windows judged" in text  # windows 0-3: none written after the decision
    manifest = orjson.loads((folder / MODEL / "reports.json").read_bytes())
    assert [(d["window_id"], d["tier"], d["action"]) for d in manifest["decisions"]] == \
        [(3, "moderate", "shadow")]


def test_the_report_stops_at_its_decision(folder: Path, profile: ReferenceProfile) -> None:
    reports = LiveReports(folder, ManualClock(0.0))
    path = reports.write(_job(folder, profile, 2))
    doc = Elements(path.read_text())
    tiers = [a["data-tier"] for a in doc.find("rect") if "data-tier" in a]
    assert tiers and "moderate" not in tiers and "severe" not in tiers  # windows 3, 4 later


def test_windows_bound_what_a_report_reads(folder: Path, profile: ReferenceProfile) -> None:
    reports = LiveReports(folder, ManualClock(0.0), windows=2)
    path = reports.write(_job(folder, profile, None))
    assert path == folder / MODEL / "report.html"
    text = " ".join(Elements(path.read_text()).text)
    assert "live report: windows 4 to 5, the most recent 2" in text
    assert "2,000 prediction events" in text  # the two windows shown, not the 6,000 in all
    # a decision older than the bound gets no report, and says why in the log
    assert reports.write(_job(folder, profile, 1)) is None
    assert not (folder / MODEL / "decisions" / "window-1.html").exists()


def test_retention_keeps_the_newest_and_latest_points_at_it(
        folder: Path, profile: ReferenceProfile) -> None:
    clock = ManualClock(100.0)
    reports = LiveReports(folder, clock, keep=2, executed=_executed(folder))
    (folder / MODEL / "decisions").mkdir()
    stray = folder / MODEL / "decisions" / "window-0.html"  # left by a crash, never listed
    stray.write_text("old")
    for w in (2, 3, 4, 5):
        clock.advance(1.0)
        assert reports.write(_job(folder, profile, w)) is not None
    files = sorted(p.name for p in (folder / MODEL / "decisions").iterdir())
    assert files == ["latest.html", "window-4.html", "window-5.html"]
    latest = (folder / MODEL / "decisions" / "latest.html").read_text()
    assert 'url=window-5.html"' in latest
    assert reports.written == 4 and reports.failed == 0
    # a window written again (a restart re-reads it) replaces its entry
    reports.write(_job(folder, profile, 5))
    manifest = orjson.loads((folder / MODEL / "reports.json").read_bytes())
    assert [d["window_id"] for d in manifest["decisions"]] == [5, 4]


def test_a_decision_report_is_written_again_once_its_action_ran(
        folder: Path, profile: ReferenceProfile) -> None:
    trail = _executed(folder)(MODEL)
    (shadow,) = trail
    pending = {**shadow, "state": "pending", "steps": [{"step": "recorded"}], "outcome": {},
               "shadow": None}
    now: list[dict[str, Any]] = [pending]
    clock = ManualClock(0.0)
    reports = LiveReports(folder, clock, executed=lambda m: now)
    path = reports.write(_job(folder, profile, 3))
    doc = Elements(path.read_text())
    assert "recorded, not run yet" in " ".join(doc.text)
    (entry,) = orjson.loads((folder / MODEL / "reports.json").read_bytes())["decisions"]
    assert entry["action_state"] == "pending"

    clock.advance(60)
    reports.write(_job(folder, profile, None))  # the outbox has not moved: nothing rewritten
    assert "recorded, not run yet" in path.read_text()
    now[:] = [shadow]  # the shadow ran and promoted its challenger
    clock.advance(60)
    reports.write(_job(folder, profile, None))
    doc = Elements(path.read_text())
    assert "executed · promoted" in " ".join(doc.text)
    assert doc.find("table", class_="champion-challenger")
    (entry,) = orjson.loads((folder / MODEL / "reports.json").read_bytes())["decisions"]
    assert entry["action_state"] == "succeeded" and entry["written_at"] == 120.0


def test_a_refresh_rewrites_the_decision_reports_whose_action_ran_and_nothing_else(
        folder: Path, profile: ReferenceProfile) -> None:
    """What ``--exit-when-done`` submits once the actions are through."""
    (shadow,) = _executed(folder)(MODEL)
    now: list[dict[str, Any]] = [{**shadow, "state": "pending", "steps": [{"step": "recorded"}],
                                  "outcome": {}, "shadow": None}]
    clock = ManualClock(0.0)
    reports = LiveReports(folder, clock, executed=lambda m: now)
    path = reports.write(_job(folder, profile, 3))
    assert path is not None and "recorded, not run yet" in path.read_text()
    now[:] = [shadow]
    clock.advance(60)
    reports.submit(dataclasses.replace(_job(folder, profile, None), page=False))
    reports.submit(_job(folder, profile, None))  # a rolling one is not the same job
    reports.flush()
    assert reports.pending() == 0
    assert "executed · promoted" in path.read_text()
    manifest = orjson.loads((folder / MODEL / "reports.json").read_bytes())
    assert manifest["decisions"][0]["action_state"] == "succeeded"
    assert manifest["rolling"] is not None  # written by the rolling job alone
    reports.close()
    (folder / MODEL / "report.html").unlink()
    reports = LiveReports(folder, clock, executed=lambda m: now)
    reports.write(dataclasses.replace(_job(folder, profile, None), page=False))
    assert not (folder / MODEL / "report.html").exists()


def test_a_lowered_keep_applies_at_the_next_rolling_run(
        folder: Path, profile: ReferenceProfile) -> None:
    clock = ManualClock(0.0)
    for w in (2, 3, 4):
        clock.advance(1.0)
        LiveReports(folder, clock, keep=10).write(_job(folder, profile, w))
    LiveReports(folder, clock, keep=1).write(_job(folder, profile, None))  # restarted
    files = sorted(p.name for p in (folder / MODEL / "decisions").glob("window-*.html"))
    assert files == ["window-4.html"]


class _Rows(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: list[tuple[str, str]] = []
        self._kind = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "tr" and a.get("class") == "report":
            self._kind = str(a["data-kind"])
        if tag == "a" and self._kind:
            self.rows.append((self._kind, str(a["href"])))
            self._kind = ""


def test_the_index_lists_every_report_newest_first(
        folder: Path, profile: ReferenceProfile) -> None:
    clock = ManualClock(1000.0)
    reports = LiveReports(folder, clock)
    for w in (2, 4):
        reports.write(_job(folder, profile, w))
    clock.advance(60)
    reports.write(_job(folder, profile, None))
    clock.advance(60)
    reports.write(_job(folder, profile, 5))
    rows = _Rows((folder / "index.html").read_text()).rows
    assert rows == [("decision", "credit/decisions/window-5.html"),
                    ("rolling", "credit/report.html"),
                    ("decision", "credit/decisions/window-4.html"),
                    ("decision", "credit/decisions/window-2.html")]


def test_the_writer_thread_writes_what_is_submitted(
        folder: Path, profile: ReferenceProfile) -> None:
    reports = LiveReports(folder, ManualClock(0.0))
    busy, write = threading.Event(), reports._write

    def held(job: Any) -> Any:  # the writer stays on the first report until told
        busy.wait(10)
        return write(job)

    reports._write = held  # type: ignore[method-assign]
    reports.submit(_job(folder, profile, 4))
    reports.submit(_job(folder, profile, None))
    reports.submit(_job(folder, profile, None))  # a rolling one already waits: one is enough
    busy.set()
    reports.flush()
    assert (folder / MODEL / "decisions" / "window-4.html").is_file()
    assert (folder / MODEL / "report.html").is_file()
    assert reports.written == 2
    reports.close()


def test_a_report_that_cannot_be_written_is_counted_not_raised(
        folder: Path, profile: ReferenceProfile) -> None:
    reports = LiveReports(folder, ManualClock(0.0))
    (folder / MODEL / "decisions").write_text("a file where the folder should be")
    assert reports.write(_job(folder, profile, 4)) is None
    assert reports.failed == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.binary(min_size=0, max_size=300), st.sampled_from([b" ", b"\t"]))
                .map(lambda b: b.replace(b"\n", b"x")), max_size=40),
       st.integers(0, 50), st.integers(0, 20_000), st.sampled_from([1, 7, 64, 1 << 16]))
def test_tail_lines_equals_reading_the_whole_prefix(
        tmp_path_factory: pytest.TempPathFactory, lines: list[bytes], n: int, cut: int,
        block: int) -> None:
    path = tmp_path_factory.mktemp("tail") / "t.jsonl"
    data = b"".join(line + b"\n" for line in lines)
    path.write_bytes(data)
    end = min(cut, len(data))
    # the loop passes a synced length, always at a line's end
    end = data.rfind(b"\n", 0, end) + 1
    want = [x for x in data[:end].split(b"\n") if x.strip()][-n:] if n else []
    assert tail_lines(path, end, n, block=block) == want
