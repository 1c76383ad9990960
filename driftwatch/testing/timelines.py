"""Compare two timelines window by window: what the regression and Kafka tests assert.

Counts, sketches and decisions must be equal; floats (signal values, and the values a
decision's reasons cite) agree to ``rel`` (float sums differ in summation order across
batch sizes, sources and instances).

>>> w = {"window_id": 0, "n_events": 5, "signals": [{"signal": "psi", "group": "drift",
...      "feature": "x", "value": 0.1}]}
>>> assert_same_windows([w], [dict(w)], keys=("window_id", "n_events"))
>>> assert_same_windows([w], [dict(w, n_events=6)], keys=("n_events",))
Traceback (most recent call last):
...
AssertionError: window 0: n_events 5 != 6
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["assert_same_windows"]


def assert_same_windows(
    got: Sequence[dict[str, Any]],
    want: Sequence[dict[str, Any]],
    *,
    keys: Iterable[str],
    groups: Iterable[str] | None = None,
    rel: float = 1e-9,
    abs_tol: float = 1e-12,
) -> None:
    """Assert ``got`` and ``want`` have the same windows: ``keys`` equal, and the same
    signals (of ``groups``, all when None; a signal is its name, feature and segment) with
    values equal to ``rel``/``abs_tol``."""
    _check(len(got) == len(want), f"{len(got)} windows != {len(want)}")
    keys = tuple(keys)
    keep = None if groups is None else set(groups)
    for a, b in zip(got, want, strict=True):
        wid = a.get("window_id")
        for k in keys:
            _check(_same(a[k], b[k], rel, abs_tol), f"window {wid}: {k} {a[k]!r} != {b[k]!r}")
        sa = [s for s in a["signals"] if keep is None or s["group"] in keep]
        sb = [s for s in b["signals"] if keep is None or s["group"] in keep]
        na = [(s["signal"], s["feature"], s.get("segment")) for s in sa]
        nb = [(s["signal"], s["feature"], s.get("segment")) for s in sb]
        _check(na == nb, f"window {wid}: other signals (only in got: "
                         f"{sorted(set(na) - set(nb), key=str)}, only in want: "
                         f"{sorted(set(nb) - set(na), key=str)})")
        for x, y in zip(sa, sb, strict=True):
            u, v = x["value"], y["value"]
            _check(_same(u, v, rel, abs_tol),
                   f"window {wid}: {x['signal']}[{x['feature']}] {u!r} != {v!r}")


def _same(u: Any, v: Any, rel: float, abs_tol: float) -> bool:
    """Equal, with floats (also inside dicts and lists) equal to ``rel``/``abs_tol``.

    >>> _same({"r": [0.1 + 0.2]}, {"r": [0.3]}, 1e-9, 0.0), _same([1], [1, 2], 1e-9, 0.0)
    (True, False)
    """
    if isinstance(u, float) and isinstance(v, float):
        return u == v or (math.isnan(u) and math.isnan(v)) or math.isclose(
            u, v, rel_tol=rel, abs_tol=abs_tol)
    if isinstance(u, dict) and isinstance(v, dict):
        return u.keys() == v.keys() and all(_same(u[k], v[k], rel, abs_tol) for k in u)
    if isinstance(u, list | tuple) and isinstance(v, list | tuple):
        return len(u) == len(v) and all(_same(x, y, rel, abs_tol)
                                        for x, y in zip(u, v, strict=True))
    return bool(u == v)


def _check(ok: bool, message: str) -> None:
    # raised, not asserted: the message stays the same under pytest's assert rewriting
    if not ok:
        raise AssertionError(message)
