"""HTML building blocks for the report: escaping, elements, number formats and the page.

Every piece of text that comes from data (feature names, category levels, policy paths,
reasons) goes through :func:`el` or :func:`esc`; only :class:`Markup` passes unescaped, so
a feature called ``<script>`` prints as text. Numbers are formatted here, once, so the
same run always gives the same bytes.

The page carries a Content-Security-Policy that forbids every fetch and every script: a
report opened offline looks exactly as it does online, and a hostile field value cannot
run code even if an escaping bug slipped through.

>>> str(el("td", "<b>&", class_="num", data_count=3))
'<td class="num" data-count="3">&lt;b&gt;&amp;</td>'
>>> str(el("p", Markup("<i>ok</i>")))
'<p><i>ok</i></p>'
>>> fmt(0.123456), fmt(12345678), fmt(None), fmt(float("nan")), pct(0.0523)
('0.1235', '12,345,678', '—', '—', '5.2%')
>>> slug("Débt / income  (%)")
'd-bt-income'
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "CSP",
    "Markup",
    "attrs",
    "el",
    "esc",
    "fmt",
    "join",
    "kv_table",
    "page",
    "pct",
    "slug",
    "table",
]

#: Nothing may load or run: styles are inline, images are inline SVG.
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)


class Markup(str):
    """A string that is already HTML: :func:`el` inserts it as is."""

    __slots__ = ()


def esc(value: Any) -> Markup:
    """Escape text (quotes included) for element content or attribute values."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def _attr_name(key: str) -> str:
    # class_ -> class, data_count -> data-count
    return key.rstrip("_").replace("_", "-")


def attrs(values: Mapping[str, Any]) -> str:
    """`` key="value"`` pairs in the given order; None and False are left out."""
    out = []
    for k, v in values.items():
        if v is None or v is False:
            continue
        name = _attr_name(k)
        out.append(f" {name}" if v is True else f' {name}="{html.escape(str(v), quote=True)}"')
    return "".join(out)


def el(tag: str, *children: Any, **kw: Any) -> Markup:
    """An element: text children are escaped, :class:`Markup` children are not."""
    inner = "".join(esc(c) for c in children if c is not None)
    return Markup(f"<{tag}{attrs(kw)}>{inner}</{tag}>")


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    return Markup(sep.join(esc(p) for p in parts if p is not None))


def fmt(x: Any, digits: int = 4) -> str:
    """A number for people: ints with thousands separators, floats to ``digits`` significant."""
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if not math.isfinite(x):
            return "—" if math.isnan(x) else ("∞" if x > 0 else "−∞")
        if x == int(x) and abs(x) < 1e15 and digits >= 4 and abs(x) >= 1:
            return f"{int(x):,}"
        return f"{x:.{digits}g}"
    return str(x)


def pct(x: Any, digits: int = 1) -> str:
    """A share as a percentage (``—`` when unknown)."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{100 * float(x):.{digits}f}%"


def slug(text: str) -> str:
    """A lower-case ASCII token for ids and class names (may be empty: add an index)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


def table(
    head: Iterable[Any], rows: Iterable[Iterable[Any]], *, class_: str | None = None, **kw: Any
) -> Markup:
    """A table; a cell that is a number is right-aligned and formatted with :func:`fmt`."""

    def cell(tag: str, v: Any) -> Markup:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return el(tag, fmt(v), class_="num")
        return el(tag, v)

    thead = el("thead", el("tr", *(el("th", h) for h in head)))
    body = el("tbody", *(el("tr", *(cell("td", v) for v in r)) for r in rows))
    return el("table", thead, body, class_=class_, **kw)


def kv_table(items: Iterable[tuple[Any, Any]], *, class_: str = "", **kw: Any) -> Markup:
    """A two-column key/value table."""
    rows = []
    for k, v in items:
        val = el("td", fmt(v) if isinstance(v, int | float) else v)
        rows.append(el("tr", el("th", k, scope="row"), val))
    return el("table", el("tbody", *rows), class_=f"kv {class_}".strip(), **kw)


_CSS = """
:root{--ink:#1f2933;--muted:#616e7c;--line:#d9e2ec;--bg:#f5f7fa;--card:#fff;
--ref:#9aa5b1;--cur:#2563eb;--hi:#f59e0b;--none:#cbd2d9;--mild:#f7c948;--moderate:#f0831c;
--severe:#d64545;--dq:#8e44ad}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
color:var(--ink);background:var(--bg)}
header.top{background:#102a43;color:#f0f4f8;padding:18px 28px}
header.top h1{margin:0 0 4px;font-size:22px;font-weight:600}
header.top p{margin:0;color:#bcccdc}
header.top h1 .now,header.top h1 .worst{font-size:13px;font-weight:400;color:#bcccdc;
margin-left:10px}
nav.toc{position:sticky;top:0;z-index:2;background:#243b53;padding:6px 28px;display:flex;
flex-wrap:wrap;gap:4px 18px}
nav.toc a{color:#d9e2ec;text-decoration:none;font-size:13px}
nav.toc a:hover{color:#fff;text-decoration:underline}
main{max-width:1200px;margin:0 auto;padding:16px 28px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;
padding:16px 20px;margin:16px 0;overflow-x:auto}
section>h2{margin:0 0 4px;font-size:18px}
section>p.lead{margin:0 0 12px;color:var(--muted)}
h3{font-size:15px;margin:14px 0 6px}
.tiles{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
.tile{border:1px solid var(--line);border-radius:6px;padding:8px 12px;background:#fbfcfd}
.tile b{display:block;font-size:20px;font-weight:600}
.tile>span{color:var(--muted);font-size:12px}
.tile b .tier{font-size:15px;padding:2px 10px;vertical-align:2px}
.tier{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:600;
color:#102a43;background:var(--none)}
.tier-mild{background:var(--mild)}.tier-moderate{background:var(--moderate);color:#fff}
.tier-severe{background:var(--severe);color:#fff}.tier-none{background:var(--none)}
.tag{display:inline-block;padding:0 6px;border-radius:4px;font-size:12px;
background:#e4e7eb;color:#3e4c59;margin-right:4px}
.tag.warn{background:#fff3c4;color:#8d2b0b}.tag.dq{background:#eadcf1;color:#5b2378}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
thead th{background:#f0f4f8;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.champion-challenger td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
table.kv th{font-weight:500;color:var(--muted)}
code,.src{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px}
table.reasons td.src{white-space:nowrap}
.decision,.feature>.grid2>div{overflow-x:auto}
.grid2{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:8px 24px}
figure{margin:6px 0 12px}
figcaption{font-size:12px;color:var(--muted)}
svg{max-width:100%;height:auto;display:block}
svg text{font:11px system-ui,sans-serif;fill:#52606d}
svg .ttl{font-size:12px;font-weight:600;fill:#1f2933}
svg .axis{stroke:#9aa5b1;stroke-width:1}
svg .grid{stroke:#e4e7eb;stroke-width:1}
svg .ref{fill:var(--ref)}svg .cur{fill:var(--cur)}
svg .moved{stroke:var(--hi);stroke-width:2.5}
svg .thr{stroke-dasharray:5 3;stroke-width:1.2}
svg .line{fill:none;stroke-width:1.8}
svg .band{fill:#2563eb;opacity:.15}
svg .episode{fill:#f0831c;opacity:.10}
svg .act{stroke:#102a43;stroke-width:1;stroke-dasharray:2 3;opacity:.45}
svg .focus{stroke:#8e44ad;stroke-width:2}
svg .t-none{fill:var(--none)}svg .t-mild{fill:var(--mild)}
svg .t-moderate{fill:var(--moderate)}svg .t-severe{fill:var(--severe)}
svg .dq{fill:var(--dq)}
.legend{font-size:12px;color:var(--muted);margin:2px 0 6px}
.legend i{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;border-radius:2px;
vertical-align:-1px}
.feature{border-top:1px solid var(--line);padding-top:8px}
.note{color:var(--muted);font-size:12px}
.banner{background:#fff3c4;border:1px solid #f7c948;padding:8px 12px;border-radius:6px}
details>summary{cursor:pointer;color:#243b53}
footer{color:var(--muted);font-size:12px;text-align:center;padding:12px}
@media print{nav.toc{display:none}section{break-inside:avoid}}
"""


def page(title: str, header: Markup, nav: Markup, body: Markup, footer: Markup) -> str:
    """The whole document: one file, no external resources."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        '<meta name="generator" content="driftwatch report">'
        '<link rel="icon" href="data:,">'  # served over HTTP, a page asks for no favicon
        f"<title>{esc(title)}</title><style>{_CSS.strip()}</style></head>\n"
        f"<body>{header}{nav}<main>\n{body}</main>{footer}</body></html>\n"
    )
