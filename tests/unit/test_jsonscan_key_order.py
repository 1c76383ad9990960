"""The scanner's key prediction against orjson and against itself.

Within a scan the scanner first compares each key of a mapped object with the key that
followed the previous one on the last line (see ``_scanloops._predicted``); only on a miss
does it hash the key and look it up. A line must read the same whatever the lines before
it taught the scanner: scanned in one block with others or alone, with keys in changing
orders, unmapped keys between mapped ones, names that are prefixes of others, keys twice,
escaped keys, and mapped names holding a quote or a backslash (which no line can spell
without an escape, and which therefore must never be matched).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.jsonscan import scanner_for

from ._orjson_paths import orjson_reads as reads

pytestmark = pytest.mark.skipif(
    os.environ.get("DRIFTWATCH_KERNEL", "").strip().lower() == "numpy",
    reason="DRIFTWATCH_KERNEL=numpy switches the compiled scanner off")

#: names of one byte to past two words (compared eight bytes at a time)
LONG, EIGHT = "credit_history_months", "decision"
PATHS = {"k": ("k",), "kk": ("kk",), "empty": ("",), "acute": ("é",), "quote": ('k"',),
         "backslash": ("k\\",), "txt": ("txt",), "long": (LONG,), "eight": (EIGHT,),
         "ok": ("o", "k"), "okk": ("o", "kk"), "olong": ("o", LONG), "ook": ("o", "o", "k")}
TYPES = {key: pa.string() if key == "txt" else pa.float64() for key in PATHS}
#: keys lines are drawn from: the mapped names, names a byte longer or shorter or with
#: another last byte, unmapped ones
KEYS = ["k", "kk", "kkk", "", "é", "e", 'k"', "k\\", "K", "txt", "o", "x", LONG, LONG[:-1],
        LONG + "_", LONG[:-1] + "z", "credit_histori_months", EIGHT, EIGHT[:-1], EIGHT + "s",
        EIGHT[:-1] + "N"]


def scan(lines: list[bytes]) -> list[dict[str, Any] | None]:
    """Each line's columns where the scanner took it, else ``None``."""
    sc = scanner_for(PATHS, TYPES, wait=True)
    assert sc is not None, "numba is a development dependency: the scanner must build"
    buf = b"\n".join(lines)
    lengths = np.array([len(x) for x in lines], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    taken, cols = sc.scan(buf, starts, starts + lengths)
    out: list[dict[str, Any] | None] = [None] * len(lines)
    columns = {key: cols[key].to_pylist() for key in PATHS}
    for row, i in enumerate(taken.tolist()):
        out[i] = {key: columns[key][row] for key in PATHS}
    return out


def orjson_reads(line: bytes) -> dict[str, Any] | None:
    """What orjson reads at each path, or ``None`` where it refuses the line or a mapped
    value does not fit its column."""
    return reads(line, PATHS, TYPES)


def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def one(x: Any, y: Any) -> bool:
        if isinstance(x, float) and isinstance(y, float):
            return x == y and math.copysign(1, x) == math.copysign(1, y)
        return type(x) is type(y) and x == y

    return a.keys() == b.keys() and all(one(a[k], b[k]) for k in a)


# -- lines as lists of (key, value) pairs, written by hand: keys may repeat ---------------------
Pairs = list[tuple[str, Any, bool]]  # key, value (a scalar or nested pairs), key escaped


def write(pairs: Pairs) -> bytes:
    def key(name: str, escaped: bool) -> str:
        # json.dumps escapes a quote or backslash; written raw, the line is no JSON
        return json.dumps(name, ensure_ascii=False) if escaped else f'"{name}"'

    def value(v: Any) -> str:
        return write(v).decode() if isinstance(v, list) else json.dumps(v, ensure_ascii=False)

    return ("{" + ",".join(f"{key(k, e)}:{value(v)}" for k, v, e in pairs) + "}").encode()


def plain(pairs: Pairs) -> bool:
    """No key twice in an object and no key that needs an escape, at any depth: a line the
    scanner must take (when its values fit, which :func:`orjson_reads` says)."""
    names = [k for k, _, _ in pairs]
    return (len(set(names)) == len(names)
            and all(json.dumps(k, ensure_ascii=False) == f'"{k}"' for k in names)
            and all(plain(v) for _, v, _ in pairs if isinstance(v, list)))


# names of the same node mostly, so that the lines share (and reorder) their keys
keys = st.one_of(st.sampled_from(["k", "kk", "o", LONG, EIGHT]), st.sampled_from(KEYS))
scalars = st.one_of(st.integers(-999, 999), st.none(), st.sampled_from(["a", "bc", ""]))


def objects(depth: int = 3) -> st.SearchStrategy[Pairs]:
    """An object's pairs; "o" mostly holds an object (mapped down to o.o.k), other keys
    now and then (unmapped ones)."""
    if depth == 0:
        return st.lists(st.tuples(keys, scalars, st.booleans()), max_size=3)

    @st.composite
    def pair(draw: st.DrawFn) -> tuple[str, Any, bool]:
        key = draw(keys)
        nested = draw(st.integers(0, 9)) < (8 if key == "o" else 1)
        return key, draw(objects(depth - 1) if nested else scalars), draw(st.booleans())

    return st.lists(pair(), max_size=5)


@st.composite
def streams(draw: st.DrawFn) -> list[Pairs]:
    """Lines that mostly repeat the previous line's keys, reordered, with a key left out,
    one put in (anywhere) or a key twice, nested objects repeated with them."""
    lines = [draw(objects())]
    for _ in range(draw(st.integers(0, 12))):
        last = list(lines[-1])
        how = draw(st.sampled_from(["same", "shuffle", "drop", "insert", "twice", "new"]))
        if how == "shuffle":
            last = draw(st.permutations(last))
        elif how == "drop" and last:
            del last[draw(st.integers(0, len(last) - 1))]
        elif how == "insert":
            last.insert(draw(st.integers(0, len(last))),
                        (draw(keys), draw(scalars), draw(st.booleans())))
        elif how == "twice" and last:
            last.insert(draw(st.integers(0, len(last))), draw(st.sampled_from(last)))
        elif how == "new":
            last = draw(objects())
        lines.append(last)
    return lines


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_a_line_reads_the_same_after_any_lines(stream: list[Pairs]) -> None:
    lines = [write(p) for p in stream]
    together = scan(lines)
    for line, pairs, got in zip(lines, stream, together, strict=True):
        alone = scan([line])[0]
        assert (got is None) == (alone is None), line
        assert got is None or alone is None or same(got, alone), line
        want = orjson_reads(line)
        if got is not None:
            assert want is not None and same(got, want), (line, got, want)
        elif want is not None:
            assert not plain(pairs), f"handed back a plain line: {line!r}"


@pytest.mark.parametrize("lines, taken", [
    # a name that is a prefix of the one predicted, and one the predicted is a prefix of
    ([b'{"kk":1}', b'{"k":2}', b'{"kkk":3}', b'{"k":4}'], [True, True, True, True]),
    ([b'{"k":1,"kk":2}', b'{"kk":3,"k":4}', b'{"k":5,"kk":6}'], [True, True, True]),
    # unmapped keys between the mapped ones, then none
    ([b'{"k":1,"x":0,"kk":2}', b'{"k":3,"kk":4}', b'{"k":5,"x":0,"kk":6}'], [True] * 3),
    # a key twice, where the second would be the predicted one
    ([b'{"k":1,"kk":2}', b'{"k":1,"kk":2,"kk":3}', b'{"k":1,"k":2}'], [True, False, False]),
    # nested: the same key names in the parent and the child, each their own prediction
    ([b'{"o":{"k":1,"o":{"k":2}},"k":3}'] * 3 + [b'{"k":3,"o":{"o":{"k":2},"k":1}}'],
     [True] * 4),
    # a key with an escape, after lines that taught the name it spells
    ([b'{"k":1}', b'{"\\u006b":1}', b'{"k\\"":1}', b'{"k\\\\":1}'], [True, False, False, False]),
    # a mapped name with a quote or a backslash cannot be written without an escape
    ([b'{"k":1,"kk":2}', b'{"k":1,"k"":2}', b'{"k":1,"k\\":2}'], [True, False, False]),
    # the predicted name cut short by the end of the line
    ([b'{"kk":1}', b'{"kk', b'{"k'], [True, False, False]),
    ([b'{"credit_history_months":1}', b'{"credit_history_months'], [True, False]),
    # long names that differ from the predicted one only in their last bytes
    ([b'{"credit_history_months":1}', b'{"credit_history_monthz":2}',
      b'{"credit_history_months_":3}', b'{"credit_history_month":4}',
      b'{"credit_history_months":5}'], [True] * 5),
    ([b'{"decision":1}', b'{"decisioN":2}', b'{"decisions":3}', b'{"decisio":4}'], [True] * 4),
])
def test_lines_after_lines(lines: list[bytes], taken: list[bool]) -> None:
    got = scan(lines)
    assert [g is not None for g in got] == taken
    for line, g in zip(lines, got, strict=True):
        if g is not None:
            want = orjson_reads(line)
            assert want is not None and same(g, want), line
