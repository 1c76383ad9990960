"""SVG primitives for the report's charts: scales, ticks, short numbers, shapes.

Coordinates are printed with one decimal so the same data gives the same bytes on every
platform; everything else a chart needs to say goes in ``data-*`` attributes and in
``<title>`` children, which browsers show as tooltips (interaction without scripts).

>>> nice_ticks(0.0, 0.37)
[0.0, 0.1, 0.2, 0.3]
>>> short(45213.0), short(0.01234), short(-2.5e6), short(3.0)
('45.2k', '0.0123', '-2.5M', '3')
>>> str(rect(1, 2, 3.25, 4, class_="cur", data_count=7))
'<rect x="1.0" y="2.0" width="3.2" height="4.0" class="cur" data-count="7"/>'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from driftwatch.report.html import Markup, attrs, esc

__all__ = [
    "LinearScale",
    "c",
    "circle",
    "line",
    "nice_ticks",
    "polyline",
    "rect",
    "short",
    "svg",
    "text",
    "title",
]


def c(v: float) -> str:
    """A coordinate, rounded to a tenth of a pixel."""
    s = f"{v:.1f}"
    return "0.0" if s == "-0.0" else s


def short(x: float) -> str:
    """A compact axis label: three significant digits, k/M/G suffixes."""
    if not math.isfinite(x):
        return "∞" if x > 0 else ("−∞" if x < 0 else "—")
    a = abs(x)
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.3g}{suf}"
    return f"{x:.3g}"


def nice_ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """Round tick values covering ``[lo, hi]`` (at most about ``n + 1``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else [0.0]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    out = []
    k = 0
    while (v := first + k * step) <= hi + 1e-9 * step:
        out.append(round(v, 12) + 0.0)
        k += 1
    return out


@dataclass(frozen=True)
class LinearScale:
    """Maps ``[d0, d1]`` (data) to ``[r0, r1]`` (pixels)."""

    d0: float
    d1: float
    r0: float
    r1: float

    def __call__(self, v: float) -> float:
        span = self.d1 - self.d0
        t = 0.5 if span == 0 else (v - self.d0) / span
        return self.r0 + t * (self.r1 - self.r0)

    @classmethod
    def covering(
        cls, values: Sequence[float], r0: float, r1: float, *, zero: bool = False, pad: float = 0.05
    ) -> LinearScale:
        """A scale over the finite ``values`` (and 0 when ``zero``), padded a little."""
        fin = [v for v in values if v is not None and math.isfinite(v)]
        if zero:
            fin.append(0.0)
        if not fin:
            return cls(0.0, 1.0, r0, r1)
        lo, hi = min(fin), max(fin)
        if hi == lo:
            lo, hi = lo - (abs(lo) or 1.0) * 0.5, hi + (abs(hi) or 1.0) * 0.5
        p = (hi - lo) * pad
        return cls(lo if zero and lo == 0 else lo - p, hi + p, r0, r1)


def title(text_: str) -> Markup:
    return Markup(f"<title>{esc(text_)}</title>")


def rect(x: float, y: float, w: float, h: float, tip: str | None = None, **kw: Any) -> Markup:
    head = f'<rect x="{c(x)}" y="{c(y)}" width="{c(max(w, 0.0))}" height="{c(max(h, 0.0))}"'
    if tip is None:
        return Markup(f"{head}{attrs(kw)}/>")
    return Markup(f"{head}{attrs(kw)}>{title(tip)}</rect>")


def circle(x: float, y: float, r: float, **kw: Any) -> Markup:
    return Markup(f'<circle cx="{c(x)}" cy="{c(y)}" r="{c(r)}"{attrs(kw)}/>')


def line(x1: float, y1: float, x2: float, y2: float, **kw: Any) -> Markup:
    return Markup(f'<line x1="{c(x1)}" y1="{c(y1)}" x2="{c(x2)}" y2="{c(y2)}"{attrs(kw)}/>')


def polyline(points: Sequence[tuple[float, float]], tip: str | None = None, **kw: Any) -> Markup:
    pts = " ".join(f"{c(x)},{c(y)}" for x, y in points)
    inner = title(tip) if tip else ""
    return Markup(f'<polyline points="{pts}"{attrs(kw)}>{inner}</polyline>')


def text(x: float, y: float, s: str, **kw: Any) -> Markup:
    return Markup(f'<text x="{c(x)}" y="{c(y)}"{attrs(kw)}>{esc(s)}</text>')


def svg(width: float, height: float, body: Sequence[str], label: str, **kw: Any) -> Markup:
    """An ``<svg>`` with a viewBox (it scales to its container) and an accessible name."""
    return Markup(
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {c(width)} {c(height)}" '
        f'width="{c(width)}" height="{c(height)}" role="img"{attrs({"aria_label": label, **kw})}>'
        + "".join(body)
        + "</svg>"
    )
