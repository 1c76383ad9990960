"""Duration strings in policies: ``30s``, ``15m``, ``1h``, ``7d``, ``2w`` or ``1h30m``.

Plain numbers are refused on purpose (is ``3600`` seconds or minutes?), as are spaces,
signs and unit words.

>>> parse_duration("15m")
900.0
>>> parse_duration("1h30m")
5400.0
>>> format_duration(5400.0)
'1h30m'
>>> format_duration(0)
'0s'
>>> parse_duration("15 minutes")
Traceback (most recent call last):
...
ValueError: expected a duration like 15m, 1h or 7d (units s, m, h, d, w)
"""

from __future__ import annotations

import re

__all__ = ["DURATION_HELP", "UNITS", "format_duration", "parse_duration"]

UNITS: dict[str, int] = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
DURATION_HELP = "expected a duration like 15m, 1h or 7d (units s, m, h, d, w)"

_PART = re.compile(r"(\d+)([wdhms])")
_WHOLE = re.compile(r"(?:\d+[wdhms])+")


def parse_duration(text: str) -> float:
    """Seconds in ``text``; ``ValueError`` with :data:`DURATION_HELP` when malformed."""
    if not isinstance(text, str) or not _WHOLE.fullmatch(text):
        raise ValueError(DURATION_HELP)
    units = [u for _, u in _PART.findall(text)]
    order = list(UNITS)
    if [order.index(u) for u in units] != sorted({order.index(u) for u in units}):
        raise ValueError(DURATION_HELP + "; give each unit once, largest first")
    return float(sum(int(n) * UNITS[u] for n, u in _PART.findall(text)))


def format_duration(seconds: float) -> str:
    """The canonical text of a whole number of seconds (largest units first)."""
    rest = round(seconds)
    if rest == 0:
        return "0s"
    out = []
    for unit, size in UNITS.items():
        if unit == "w":  # ``14d`` reads better than ``2w``
            continue
        if rest >= size:
            n, rest = divmod(rest, size)
            out.append(f"{n}{unit}")
    return "".join(out)
