"""What orjson reads at mapped paths of a JSON line: the reference the JSON scanner's
tests hold it to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import pyarrow as pa

__all__ = ["orjson_reads"]


def orjson_reads(line: bytes, paths: Mapping[str, tuple[str, ...]],
                 types: Mapping[str, pa.DataType]) -> dict[str, Any] | None:
    """What orjson reads at each of ``paths`` (key -> path parts), or ``None`` where the
    scanner must hand the line back: orjson refuses it, or a mapped value does not fit
    its column's type in ``types`` (string, float64, int64 or bool)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(obj) is not dict:
        return None
    out: dict[str, Any] = {}
    for key, parts in paths.items():
        v: Any = obj
        for part in parts:
            if v is None:
                break
            if type(v) is not dict:
                return None
            v = v.get(part)
        typ = types[key]
        if v is None:
            out[key] = None
        elif typ == pa.string() and type(v) is str:
            out[key] = v
        elif typ == pa.float64() and type(v) in (int, float):
            out[key] = float(v)
        elif (typ == pa.int64() and type(v) is int) or (typ == pa.bool_() and type(v) is bool):
            out[key] = v
        else:
            return None
    return out
