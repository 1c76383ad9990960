"""Bar charts on bins rather than on the window axis: reference vs current histograms, counts
by reason, completeness per cohort. Every bar carries its count in ``data-count``.

>>> h = histogram(["a", "b"], [3, 1], [2, 2], moved={0}, label="x")
>>> h.count('data-series="cur"'), 'data-count="3"' in h
(2, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from driftwatch.report.html import Markup, el, join
from driftwatch.report.svg import LinearScale, line, nice_ticks, rect, svg, text

__all__ = ["columns", "hbars", "histogram", "histogram_legend"]


def _num(v: float | None) -> str:
    return "nan" if v is None or not math.isfinite(v) else f"{v:.6g}"


def histogram(
    labels: Sequence[str],
    cur: Sequence[int],
    ref: Sequence[int] | None,
    *,
    moved: set[int] | frozenset[int] = frozenset(),
    edge_labels: Sequence[str] | None = None,
    label: str = "",
    width: float = 540.0,
    height: float = 220.0,
    feature: str | None = None,
    window: int | None = None,
) -> Markup:
    """Reference vs current shares on the same bins; moved bins outlined and marked.

    ``edge_labels`` (numeric features) label the boundaries between the first
    ``len(edge_labels) + 1`` bins; later bins (missing) and categorical bins get their own
    label under the bar.
    """
    left, right, top, bottom = 44.0, 8.0, 16.0, 42.0
    n = len(cur)
    n_cur, n_ref = max(sum(cur), 1), max(sum(ref or ()), 1)
    s_cur = [v / n_cur for v in cur]
    s_ref = [v / n_ref for v in ref] if ref is not None else []
    ys = LinearScale(0.0, max([*s_cur, *s_ref, 0.01]) * 1.12, height - bottom, top)
    slot = (width - left - right) / max(n, 1)
    bw = slot * (0.4 if ref is not None else 0.7)
    body: list[str] = []
    for t in nice_ticks(0.0, ys.d1, 4):
        y = ys(t)
        body.append(line(left, y, width - right, y, class_="grid"))
        body.append(text(left - 4, y + 4, f"{100 * t:.0f}%", text_anchor="end"))
    y0 = ys(0.0)
    for b in range(n):
        x = left + b * slot + slot / 2
        if ref is not None:
            body.append(rect(x - bw, ys(s_ref[b]), bw, y0 - ys(s_ref[b]),
                             tip=f"{labels[b]}\nreference: {ref[b]:,} ({100 * s_ref[b]:.2f}%)",
                             class_="ref", data_series="ref", data_bin=b, data_label=labels[b],
                             data_count=int(ref[b])))
        cls = "cur moved" if b in moved else "cur"
        xc = x if ref is not None else x - bw / 2
        body.append(rect(xc, ys(s_cur[b]), bw, y0 - ys(s_cur[b]),
                         tip=f"{labels[b]}\ncurrent: {cur[b]:,} ({100 * s_cur[b]:.2f}%)",
                         class_=cls, data_series="cur", data_bin=b, data_label=labels[b],
                         data_count=int(cur[b])))
        if b in moved:
            top_y = min(ys(s_cur[b]), ys(s_ref[b]) if ref is not None else y0)
            body.append(text(x, top_y - 4, "▲", text_anchor="middle", fill="#f59e0b"))
    body.append(line(left, y0, width - right, y0, class_="axis"))
    n_edges = len(edge_labels) if edge_labels is not None else -1
    for b in range(n):
        if edge_labels is not None and b < n_edges:
            xb = left + (b + 1) * slot
            body.append(line(xb, y0, xb, y0 + 4, class_="axis"))
            body.append(text(xb, y0 + 15 + 10 * (b % 2), edge_labels[b], text_anchor="middle"))
        elif edge_labels is None or b > n_edges:
            chars = max(int(slot / 6.2), 3)
            lab = labels[b] if len(labels[b]) <= chars else labels[b][: chars - 1] + "…"
            body.append(text(left + b * slot + slot / 2, y0 + 15 + 10 * (b % 2 if n > 8 else 0),
                             lab, text_anchor="middle"))
    return svg(width, height, body, label, class_="hist", data_feature=feature,
               data_window=window, data_n_cur=sum(cur),
               data_n_ref=sum(ref) if ref is not None else None)


def histogram_legend(has_reference: bool, current: str) -> Markup:
    """The colour key of a :func:`histogram`: reference (when drawn) and current."""
    ref = (join([el("i", style="background:var(--ref)"), "reference"]) if has_reference
           else "no reference profile")
    return el("div", ref, join([el("i", style="background:var(--cur)"), current]),
              class_="legend")


def hbars(items: Sequence[tuple[str, int]], label: str, *, width: float = 540.0) -> Markup:
    """Horizontal bars with their counts (bad records by reason, and the like)."""
    left, row = 190.0, 22.0
    height = 10 + row * max(len(items), 1)
    xs = LinearScale(0.0, max([v for _, v in items] + [1]), left, width - 70)
    body: list[str] = []
    for k, (name, v) in enumerate(items):
        y = 6 + k * row
        lab = name if len(name) <= 30 else name[:29] + "…"
        body.append(text(left - 6, y + 14, lab, text_anchor="end"))
        body.append(rect(left, y + 3, xs(v) - left, row - 8, tip=f"{name}: {v:,}",
                         class_="cur", data_label=name, data_count=int(v)))
        body.append(text(xs(v) + 4, y + 14, f"{v:,}"))
    return svg(width, height, body, label, class_="hbars")


def columns(
    labels: Sequence[str], shares: Sequence[float | None], counts: Sequence[int], label: str,
    *, width: float = 1100.0, height: float = 150.0, left: float = 150.0,
) -> Markup:
    """Vertical bars of a share in [0, 1] per period (cohort completeness), with counts."""
    top, bottom, right = 18.0, 22.0, 16.0
    ys = LinearScale(0.0, 1.0, height - bottom, top)
    n = max(len(labels), 1)
    step = (width - left - right) / n
    body: list[str] = [text(4, 12, label, class_="ttl")]
    for t in (0.0, 0.5, 1.0):
        body.append(line(left, ys(t), width - right, ys(t), class_="grid"))
        body.append(text(left - 6, ys(t) + 4, f"{100 * t:.0f}%", text_anchor="end"))
    for i, (lab, v, k) in enumerate(zip(labels, shares, counts, strict=True)):
        if v is None or not math.isfinite(v):
            continue
        x = left + i * step
        body.append(rect(x + step * 0.1, ys(v), step * 0.8, ys(0.0) - ys(v),
                         tip=f"{lab}: {100 * v:.1f}% of {k:,}", class_="cur", data_label=lab,
                         data_share=_num(v), data_count=int(k)))
    every = max(1, math.ceil(n / 7))
    for i in range(0, len(labels), every):
        body.append(text(left + (i + 0.5) * step, height - 6, labels[i], text_anchor="middle"))
    return svg(width, height, body, label, class_="columns")
