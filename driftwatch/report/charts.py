"""The report's charts, drawn as inline SVG from Python.

Why hand-written SVG rather than a charting library: the report must work offline as one
file and be byte-identical for the same replay. A vendored JavaScript library (Plotly is
about 3.5 MB minified, Vega with Vega-Lite about 1 MB) would dominate the file, need a
script to draw anything (nothing to see with scripts off, nothing to check without running
them), and lay out text differently across versions. Matplotlib renders server-side but
emits per-run ids and ~10x larger SVG paths, and a PNG would hide the numbers. A few
hundred lines of SVG give static charts a reviewer can print, that cost a few kilobytes
each, and that carry their data: every bar has ``data-count``, every line ``data-values``,
so a browser test (or a suspicious reviewer with dev tools) can check a plot against the
sketch it claims to show. Hover tooltips come from SVG ``<title>`` elements, without
scripts.

All charts on the window axis (:class:`WindowAxis`) share their x geometry, so the tier
strip, the signal lines and the data-quality heatmap line up vertically. Bar charts on
bins (histograms, counts by reason, cohorts) are in :mod:`driftwatch.report.bars`.

>>> ax = WindowAxis((1, 2, 3), ("2024-01-01T00:00:00Z", None, "2024-01-03T00:00:00Z"))
>>> ax.index(2), round(ax.x(0), 1) < round(ax.x(2), 1)
(1, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from driftwatch.report.html import Markup
from driftwatch.report.svg import (
    LinearScale,
    circle,
    line,
    nice_ticks,
    polyline,
    rect,
    short,
    svg,
    text,
    title,
)

__all__ = [
    "PALETTE",
    "Band",
    "Series",
    "WindowAxis",
    "action_groups",
    "heatmap",
    "signal_chart",
    "tier_strip",
]

#: Line colours, in order of use (colour-blind safe, after Okabe-Ito).
PALETTE = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9")
TIERS = ("none", "mild", "moderate", "severe")
_ACTION_MARK = {"online_update": "U", "shadow": "S", "retrain": "R", "alert": "A"}


def _num(v: float | None) -> str:
    return "nan" if v is None or not math.isfinite(v) else f"{v:.6g}"


@dataclass(frozen=True)
class WindowAxis:
    """Shared x axis of the timeline charts: one slot per window, in order."""

    window_ids: tuple[int, ...]
    ends: tuple[str | None, ...]
    width: float = 1100.0
    left: float = 150.0
    right: float = 16.0
    _pos: dict[int, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._pos.update({w: i for i, w in enumerate(self.window_ids)})

    @property
    def n(self) -> int:
        return len(self.window_ids)

    @property
    def step(self) -> float:
        return (self.width - self.left - self.right) / max(self.n, 1)

    def x(self, i: float) -> float:
        """Centre of window slot ``i`` (0-based position, not window id)."""
        return self.left + (i + 0.5) * self.step

    def index(self, window_id: int) -> int | None:
        return self._pos.get(window_id)

    def ticks(self, y: float, count: int = 7) -> list[Markup]:
        """Date labels (window end; ``record N`` whole) under the plot."""
        if not self.n:
            return []
        k = max(1, math.ceil(self.n / count))
        out = []
        for i in range(0, self.n, k):
            end = self.ends[i]
            label = (end if end.startswith("record") else end[:10]) if end else \
                f"w{self.window_ids[i]}"
            out.append(text(self.x(i), y, label, text_anchor="middle"))
        return out


@dataclass(frozen=True)
class Series:
    """A line over the window axis; None where a window has no value."""

    name: str
    values: Sequence[float | None]
    color: str = PALETTE[0]
    dashed: bool = False


@dataclass(frozen=True)
class Band:
    """An interval over the window axis (e.g. a confidence interval)."""

    name: str
    low: Sequence[float | None]
    high: Sequence[float | None]


def _runs(values: Sequence[float | None]) -> list[list[int]]:
    runs: list[list[int]] = []
    cur: list[int] = []
    for i, v in enumerate(values):
        if v is not None and math.isfinite(v):
            cur.append(i)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs


def _legend(series: Sequence[Series], right: float, y: float) -> list[Markup]:
    """A right-aligned legend: a line sample and the name of each series."""
    out: list[Markup] = []
    x = right
    for s in reversed(series):
        w = 6.0 * len(s.name) + 30
        x -= w
        out.append(line(x, y - 4, x + 18, y - 4, class_="line thr" if s.dashed else "line",
                        stroke=s.color))
        out.append(text(x + 22, y, s.name))
    return out


def signal_chart(
    axis: WindowAxis,
    label: str,
    series: Sequence[Series],
    *,
    band: Band | None = None,
    episodes: Sequence[tuple[int, int, str]] = (),
    actions: Sequence[tuple[int, str]] = (),
    focus: int | None = None,
    height: float = 130.0,
    hover: bool = True,
    zero: bool = False,
) -> Markup:
    """Small-multiple line chart: episodes shaded, actions and focus window marked."""
    top, bottom = 18.0, 20.0
    y0, y1 = height - bottom, top
    vals: list[float | None] = [v for s in series for v in s.values]
    if band is not None:
        vals += list(band.low) + list(band.high)
    ys = LinearScale.covering([v for v in vals if v is not None], y0, y1, zero=zero)
    body: list[str] = [text(4, 12, label, class_="ttl")]
    for i0, i1, tier in episodes:
        x0 = axis.x(i0) - axis.step / 2
        body.append(rect(x0, y1, (i1 - i0 + 1) * axis.step, y0 - y1, class_="episode",
                         data_tier=tier))
    for t in nice_ticks(ys.d0, ys.d1, 3):
        y = ys(t)
        body.append(line(axis.left, y, axis.width - axis.right, y, class_="grid"))
        body.append(text(axis.left - 6, y + 4, short(t), text_anchor="end"))
    body.append(line(axis.left, y0, axis.width - axis.right, y0, class_="axis"))
    if band is not None:
        lo, hi = band.low, band.high
        both = [v if (v is not None and hi[i] is not None) else None for i, v in enumerate(lo)]
        for run in _runs(both):
            pts = [(axis.x(i), ys(lo[i])) for i in run]  # type: ignore[arg-type]
            pts += [(axis.x(i), ys(hi[i])) for i in reversed(run)]  # type: ignore[arg-type]
            body.append(polyline(pts, tip=band.name, class_="band"))
    for s in series:
        fin = {v for v in s.values if v is not None and math.isfinite(v)}
        if len(fin) == 1 and len(_runs(s.values)) == 1 and len(s.values) > 1:
            y = ys(fin.pop())  # a constant (a policy level): one line, not n points
            body.append(line(axis.left, y, axis.width - axis.right, y,
                             class_="line thr" if s.dashed else "line", stroke=s.color,
                             data_series=s.name))
            continue
        for run in _runs(s.values):
            pts = [(axis.x(i), ys(s.values[i])) for i in run]  # type: ignore[arg-type]
            if len(pts) == 1:  # an isolated value (labels arrive in bursts): a dot
                body.append(circle(*pts[0], 2.5, fill=s.color))
                continue
            body.append(polyline(pts, tip=s.name, class_="line thr" if s.dashed else "line",
                                 stroke=s.color))
    for i, act in actions:
        x = axis.x(i)
        body.append(line(x, y1, x, y0, class_="act", data_action=act,
                         data_window=axis.window_ids[i]))
    if focus is not None:
        body.append(line(axis.x(focus), y1 - 4, axis.x(focus), y0, class_="focus"))
    if hover and axis.n:
        for i in range(axis.n):
            tip = f"window {axis.window_ids[i]} · {axis.ends[i] or ''}\n" + "\n".join(
                f"{s.name}: {_num(s.values[i])}" for s in series
            )
            body.append(rect(axis.x(i) - axis.step / 2, y1, axis.step, y0 - y1, tip=tip,
                             fill="transparent"))
    body.extend(axis.ticks(height - 5))
    body.extend(_legend(series, axis.width - axis.right, 12))
    # the data, one attribute per chart: "v1 v2 ..." ("nan" where a window has none) of the
    # first series; the others (references, levels) by name
    return svg(axis.width, height, body, label, class_="signal", data_series=series[0].name,
               data_values=" ".join(_num(v) for v in series[0].values) if series else "")


#: Markers closer than this (px) are drawn as one, so 1,000+ windows stay readable.
MARKER_GAP = 28.0


def action_groups(
    marks: Sequence[tuple[float, int, str]], gap: float = MARKER_GAP
) -> list[list[tuple[float, int, str]]]:
    """Actions ``(x, window position, action)`` in runs whose markers would overlap.

    >>> [len(g) for g in action_groups([(0, 0, "a"), (5, 1, "a"), (40, 2, "r")])]
    [2, 1]
    """
    groups: list[list[tuple[float, int, str]]] = []
    for m in sorted(marks):
        if groups and m[0] - groups[-1][0][0] < gap:
            groups[-1].append(m)
        else:
            groups.append([m])
    return groups


def _group_label(acts: Sequence[str]) -> str:
    letters = [_ACTION_MARK.get(a, "•") for a in acts]
    distinct = list(dict.fromkeys(letters))
    if len(letters) == 1:
        return letters[0]
    if len(distinct) == 1:
        return f"{distinct[0]}×{len(letters)}"
    return "".join(distinct[:3]) + ("…" if len(distinct) > 3 else "") + f" ×{len(letters)}"


def _action_marker(axis: WindowAxis, group: Sequence[tuple[float, int, str]]) -> list[str]:
    """One triangle and label per group; each action keeps its own element and tooltip."""
    def tri(x: float) -> str:
        return polyline([(x - 6, 74), (x + 6, 74), (x, 60), (x - 6, 74)], fill="#102a43")

    def g(k: int, act: str, inner: str) -> str:
        return (Markup(f'<g class="action" data-action="{act}" '
                       f'data-window="{axis.window_ids[k]}">')
                + inner + title(f"window {axis.window_ids[k]}: {act}") + Markup("</g>"))

    if len(group) == 1:
        x, k, act = group[0]
        return [g(k, act, tri(x) + text(x, 86, _group_label([act]), text_anchor="middle"))]
    cx = (group[0][0] + group[-1][0]) / 2
    out = [Markup('<g class="action-group">') + tri(cx)
           + text(cx, 86, _group_label([a for _, _, a in group]), text_anchor="middle")
           + title("; ".join(f"window {axis.window_ids[k]}: {a}" for _, k, a in group))
           + Markup("</g>")]
    out += [g(k, act, line(x, 56, x, 60, class_="act-tick")) for x, k, act in group]
    return out


def tier_strip(
    axis: WindowAxis,
    tiers: Sequence[str],
    dq_faults: Sequence[bool],
    actions: Sequence[tuple[int, str]],
    *,
    focus: int | None = None,
) -> Markup:
    """Tier per window (runs of a tier merged), data-quality faults and actions taken."""
    height = 92.0
    body: list[str] = [
        text(axis.left - 8, 24, "tier", text_anchor="end"),
        text(axis.left - 8, 46, "data-quality fault", text_anchor="end"),
        text(axis.left - 8, 68, "action", text_anchor="end"),
    ]
    i = 0
    while i < len(tiers):
        j = i
        while j + 1 < len(tiers) and tiers[j + 1] == tiers[i]:
            j += 1
        x0 = axis.x(i) - axis.step / 2
        tip = f"windows {axis.window_ids[i]}–{axis.window_ids[j]}: {tiers[i]}"
        body.append(rect(x0, 10, (j - i + 1) * axis.step, 20, tip=tip,
                         class_=f"t-{tiers[i]}", data_tier=tiers[i],
                         data_first=axis.window_ids[i], data_last=axis.window_ids[j]))
        i = j + 1
    for k, fault in enumerate(dq_faults):
        if fault:
            body.append(rect(axis.x(k) - axis.step / 2, 38, axis.step, 12, class_="dq",
                             tip=f"window {axis.window_ids[k]}: data-quality fault",
                             data_window=axis.window_ids[k]))
    for group in action_groups([(axis.x(k), k, act) for k, act in actions]):
        body.extend(_action_marker(axis, group))
    if focus is not None:
        body.append(line(axis.x(focus), 4, axis.x(focus), 54, class_="focus"))
    return svg(axis.width, height, body, "tier per window", class_="tiers")


def heatmap(
    axis: WindowAxis, rows: Sequence[tuple[str, Sequence[float | None]]], label: str,
    *, vmax: float | None = None,
) -> Markup:
    """Share per row and window (missing rates); equal shades in a row are merged."""
    row_h, top = 16.0, 6.0
    height = top + row_h * len(rows) + 20
    fin = [v for _, vs in rows for v in vs if v is not None and math.isfinite(v)]
    vmax = vmax or max([*fin, 1e-9])
    body: list[str] = []
    for r, (name, vs) in enumerate(rows):
        y = top + r * row_h
        lab = name if len(name) <= 24 else name[:23] + "…"
        body.append(text(axis.left - 6, y + 12, lab, text_anchor="end"))
        levels = [
            -1 if v is None or not math.isfinite(v) else min(int(8 * v / vmax), 7) if v > 0 else 0
            for v in vs
        ]
        i = 0
        while i < len(levels):
            j = i
            while j + 1 < len(levels) and levels[j + 1] == levels[i]:
                j += 1
            run = [v for v in vs[i : j + 1] if v is not None and math.isfinite(v)]
            hi = max(run) if run else None
            alpha = 0.15 + 0.12 * levels[i]
            shade = "#eef2f7" if levels[i] <= 0 else f"rgba(142,68,173,{alpha:.2f})"
            tip = (f"{name} · windows {axis.window_ids[i]}–{axis.window_ids[j]}: "
                   f"max {100 * hi:.2f}%" if hi is not None else f"{name}: no data")
            body.append(rect(axis.x(i) - axis.step / 2, y + 1, (j - i + 1) * axis.step,
                             row_h - 2, tip=tip, fill=shade, data_feature=name,
                             data_first=axis.window_ids[i], data_last=axis.window_ids[j],
                             data_max=_num(hi)))
            i = j + 1
    body.extend(axis.ticks(height - 4))
    return svg(axis.width, height, body, label, class_="heatmap", data_vmax=_num(vmax))
