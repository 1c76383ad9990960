"""Assemble the report: sections in a fixed order, one self-contained HTML file.

Size bound: :data:`MAX_BYTES` (2 MB) by default. A report is built at full detail first; if
it is larger, it is rebuilt with less detail (fewer feature panels, fewer decisions listed,
no hover targets) and says so at the top; if even the smallest form does not fit,
:class:`ReportSizeError`. Sizes grow with windows x charts, not with events.

Determinism: the same output folder gives the same bytes. The report holds no clock
reading; ``generated_at`` (a string the caller passes, e.g. an ISO time from its
``Clock``) is the only thing that may differ, printed in the footer when given.

>>> MAX_BYTES
2000000
>>> [b.top_features for b in BUDGETS]
[6, 3, 3, 1]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from driftwatch import __version__
from driftwatch.errors import DriftwatchError
from driftwatch.report.cohorts import cohort_section
from driftwatch.report.deployments import actions_section, retraining_section, shadow_section
from driftwatch.report.features import features_section
from driftwatch.report.html import Markup, el, join, page
from driftwatch.report.inputs import TIER_ORDER, RunData, load_run, signal_index
from driftwatch.report.model import confidence_section, performance_section
from driftwatch.report.quality import quality_section
from driftwatch.report.reasons import reasons_section
from driftwatch.report.sections import (
    Budget,
    Context,
    Section,
    summary_section,
    tier_badge,
    timeline_section,
)
from driftwatch.report.segments import segments_section
from driftwatch.report.versions import versions_section
from driftwatch.windows.profile import ReferenceProfile

__all__ = [
    "BUDGETS",
    "MAX_BYTES",
    "SECTIONS",
    "ReportSizeError",
    "build_report",
    "report_path",
    "write_report",
]

#: Default size bound of one report, in bytes.
MAX_BYTES = 2_000_000

#: Detail levels, tried in order until the report fits the size bound.
BUDGETS = (
    Budget(),
    Budget(top_features=3, max_decisions=20),
    Budget(top_features=3, max_decisions=10, hover=False),
    Budget(top_features=1, max_decisions=5, hover=False),
)

#: Section builders in page order; their ids are stable: run-summary, timeline, features,
#: segments (only with segment signals), data-quality, confidence, performance, cohorts,
#: shadow, retraining, actions (only with decided actions), versions (only with executed
#: actions), reasons.
SECTIONS: tuple[Callable[[Context], Section | None], ...] = (
    summary_section,
    timeline_section,
    features_section,
    segments_section,
    quality_section,
    confidence_section,
    performance_section,
    cohort_section,
    shadow_section,
    retraining_section,
    actions_section,
    versions_section,
    reasons_section,
)


class ReportSizeError(DriftwatchError, ValueError):
    """Even the least detailed form of a report exceeds its size bound."""


def _render(run: RunData, decision: int | None, budget: Budget, level: int,
            generated_at: str | None) -> str:
    ctx = Context(run, decision, budget)
    sections = [s for build in SECTIONS if (s := build(ctx)) is not None]
    worst = max((str(r.get("tier") or "none") for r in run.records), key=TIER_ORDER.index,
                default="none")
    first, last = run.records[0] if run.records else {}, run.records[-1] if run.records else {}
    if decision is None:
        h1 = f"Drift report · {run.model}"
        current = str(last.get("tier") or "none")
        badges = join([el("span", "now ", tier_badge(current), class_="now"), " ",
                       el("span", "worst in this run ", tier_badge(worst), class_="worst")])
    else:
        h1 = f"Decision report · {run.model} · window {decision}"
        badges = tier_badge(str((ctx.focus_record or {}).get("tier") or "none"))
    if decision is None:
        sub = f"{first.get('start') or '?'} → {last.get('end') or '?'} · {len(run.records)} windows"
    else:
        rec = ctx.focus_record or {}
        sub = (f"window {decision}: {rec.get('start') or '?'} → {rec.get('end') or '?'} · "
               f"{rec.get('n_events', 0):,} events")
    header = el("header", el("h1", h1, " ", badges), el("p", sub), class_="top")
    nav = el("nav", *(el("a", s.title, href=f"#{s.id}") for s in sections), class_="toc")
    notice = None
    if level:
        notice = el("p", f"Detail reduced to stay under the size bound: {budget.top_features} "
                         f"feature panels, {budget.max_decisions} decisions listed"
                         + ("" if budget.hover else ", no hover values") + ".", class_="banner")
    body = join([notice, *(s.render() for s in sections)], "\n")
    foot = f"driftwatch {__version__} report from timeline.jsonl"
    if generated_at:
        foot += f" · generated {generated_at}"
    title = h1.replace(" · ", " - ")
    return page(title, header, nav, Markup(body), el("footer", foot))


def build_report(
    run: RunData,
    *,
    decision: int | None = None,
    generated_at: str | None = None,
    max_bytes: int = MAX_BYTES,
) -> str:
    """The report's HTML, at the most detail that fits ``max_bytes`` (UTF-8)."""
    if decision is not None:
        run.window(decision)  # unknown window: SourceError naming the range
    size = 0
    with signal_index():  # the run holds its records while the pages are rendered
        for level, budget in enumerate(BUDGETS):
            html = _render(run, decision, budget, level, generated_at)
            size = len(html.encode("utf-8"))
            if size <= max_bytes:
                return html
    raise ReportSizeError(
        f"report is {size:,} bytes at its least detail, over the bound of {max_bytes:,}: "
        "split the run (fewer windows) or raise the bound"
    )


def report_path(out_dir: str | Path, decision: int | None = None) -> Path:
    """``DIR/report.html``, or ``DIR/report-window-N.html`` for one decision."""
    name = "report.html" if decision is None else f"report-window-{decision}.html"
    return Path(out_dir) / name


def write_report(
    out_dir: Path,
    *,
    reference: ReferenceProfile | None = None,
    decision: int | None = None,
    generated_at: str | None = None,
    path: Path | None = None,
    max_bytes: int = MAX_BYTES,
    windows: int | None = None,
) -> Path:
    """Build the report of a replay output folder and write it (atomically).

    ``path`` defaults to :func:`report_path`; ``generated_at`` is printed in the footer
    and is the only input that is not read from the folder. ``windows``: only the last
    so many windows (all when None).
    """
    run = load_run(out_dir, reference=reference, windows=windows)
    html = build_report(run, decision=decision, generated_at=generated_at, max_bytes=max_bytes)
    dest = Path(path) if path is not None else report_path(out_dir, decision)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    tmp.write_bytes(html.encode("utf-8"))
    tmp.replace(dest)
    return dest
