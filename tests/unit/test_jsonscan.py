"""The compiled JSON scanner against orjson, the reference reader.

The rule it must keep: a line it takes holds exactly what orjson reads at the mapped
paths (same type, same double, bit for bit), and a line orjson refuses is never taken.
It may hand back a valid line (the block parser and orjson then read it), but never a
plain one: a line as a producer writes it (``orjson.dumps`` of ASCII text, integers and
doubles) is always taken.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.jsonscan import scanner_for

from ._orjson_paths import orjson_reads

# switched off on purpose there is no scanner to test: the other parsers are checked
# against orjson by test_decode_paths_agree.py
pytestmark = pytest.mark.skipif(
    os.environ.get("DRIFTWATCH_KERNEL", "").strip().lower() == "numpy",
    reason="DRIFTWATCH_KERNEL=numpy switches the compiled scanner off")

PATHS = {"id": ("id",), "x": ("a", "x"), "n": ("a", "n"), "flag": ("ok",),
         "level": ("a", "b", "level"), "x_again": ("a", "x")}
TYPES = {"id": pa.string(), "x": pa.float64(), "n": pa.int64(), "flag": pa.bool_(),
         "level": pa.string(), "x_again": pa.float64()}
_ABSENT = object()


def scanner() -> Any:
    sc = scanner_for(PATHS, TYPES, wait=True)
    assert sc is not None, "numba is a development dependency: the scanner must build"
    return sc


def scan_lines(lines: list[bytes]) -> tuple[list[int], dict[str, list[Any]]]:
    buf = b"\n".join(lines)
    lengths = np.array([len(x) for x in lines], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
    taken, cols = scanner().scan(buf, starts, starts + lengths)
    return taken.tolist(), {k: v.to_pylist() for k, v in cols.items()}


def expected(line: bytes) -> dict[str, Any] | None:
    """What orjson reads at each path, or ``None`` where the scanner must hand it back
    (orjson refuses it, or a mapped value does not fit its column)."""
    return orjson_reads(line, PATHS, TYPES)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
    return type(a) is type(b) and a == b


def check(lines: list[bytes]) -> list[int]:
    """Scan ``lines`` and check each taken one against orjson; return the taken indices."""
    taken, cols = scan_lines(lines)
    for row, i in enumerate(taken):
        want = expected(lines[i])
        assert want is not None, f"took a line orjson refuses or that does not fit: {lines[i]!r}"
        for key, value in want.items():
            got = cols[key][row]
            assert same(got, value), (lines[i], key, got, value)
    for i in set(range(len(lines))) - set(taken):
        # handed back: allowed, but never for a line a producer writes plainly
        assert not plain(lines[i]), f"handed back a plain line: {lines[i]!r}"
    return taken


def plain(line: bytes) -> bool:
    """A line as ``orjson.dumps`` writes it, with ASCII text without escapes, integers of
    up to 15 digits and doubles the scanner converts exactly (an integer mantissa of at
    most 2**53, a power of ten within 1e±22)."""
    if expected(line) is None:
        return False
    obj = orjson.loads(line)
    if orjson.dumps(obj) != line:
        return False

    def ok(v: Any) -> bool:
        if isinstance(v, dict):
            return all(ok(k) and ok(x) for k, x in v.items())
        if isinstance(v, list):
            return all(ok(x) for x in v)
        if isinstance(v, str):
            return v.isascii() and v.isprintable() and '"' not in v and "\\" not in v
        if isinstance(v, bool) or v is None:
            return True
        if isinstance(v, int):
            return abs(v) < 10**15
        # the scanner's exact rule (Clinger's fast path) on its digits as written: every
        # digit from the first non-zero one is in the integer mantissa, trailing zeros too
        # (900719925474100.0 is 9007199254741000, past 2**53), and the power of ten is
        # within 1e±22
        mantissa, _, e = repr(abs(v)).partition("e")
        whole, _, frac = mantissa.partition(".")
        digits = (whole + frac).lstrip("0")
        exp10 = int(e or 0) - len(frac)
        return int(digits or "0") <= 2**53 and (not digits or -22 <= exp10 <= 22)
    return ok(obj)


# -- generated lines ------------------------------------------------------------------------
def dumps(obj: Any) -> bytes:
    """As a producer writes it (orjson; the standard library past 64-bit integers)."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def number_text() -> st.SearchStrategy[str]:
    """Any JSON number's text, of every form the grammar allows."""
    sign = st.sampled_from(["", "-"])
    whole = st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,22}", fullmatch=True))
    frac = st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,20}", fullmatch=True))
    exp = st.one_of(st.just(""), st.from_regex(r"[eE][+-]?[0-9]{1,3}", fullmatch=True))
    return st.builds(lambda s, w, f, e: s + w + f + e, sign, whole, frac, exp)


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20),
                    st.floats(allow_nan=False, allow_infinity=False), texts)
values = st.recursive(scalars, lambda kids: st.one_of(
    st.lists(kids, max_size=3), st.dictionaries(st.sampled_from(["x", "n", "b", "q"]), kids,
                                                max_size=3)), max_leaves=8)


@st.composite
def records(draw: st.DrawFn) -> dict[str, Any]:
    """Objects shaped like the mapping, with mapped values of any type, missing or null."""
    def maybe(key: str, strat: st.SearchStrategy[Any], into: dict[str, Any]) -> None:
        if draw(st.integers(0, 9)):
            into[key] = draw(strat)

    inner: dict[str, Any] = {}
    maybe("x", st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                         st.integers(-(10**17), 10**17), values), inner)
    maybe("n", st.one_of(st.integers(-(10**19), 10**19), values), inner)
    maybe("b", st.one_of(st.fixed_dictionaries({"level": st.one_of(texts, values)}), values),
          inner)
    maybe("other", values, inner)
    rec: dict[str, Any] = {}
    maybe("id", st.one_of(texts, values), rec)
    maybe("a", st.one_of(st.just(inner), values), rec)
    maybe("ok", st.one_of(st.booleans(), values), rec)
    maybe("zz", values, rec)
    return rec


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(records(), min_size=1, max_size=20))
@example([{"a": {"x": 9377792250906700.0}}])  # past 2**53 as written: handed back, allowed
@example([{"a": {"x": 900719925474100.0}}])  # its ".0" takes the mantissa past 2**53
@example([{"a": {"x": 1.234e-20}}])  # 1234e-23: past 1e-22, handed back
def test_taken_lines_read_as_orjson_reads_them(recs: list[dict[str, Any]]) -> None:
    check([dumps(r) for r in recs])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(number_text(), number_text()), min_size=1, max_size=20))
def test_numbers_of_every_form(pairs: list[tuple[str, str]]) -> None:
    lines = [f'{{"a": {{"x": {x}, "n": {n}}}}}'.encode() for x, n in pairs]
    taken = check(lines)
    for i, (x, _) in enumerate(pairs):
        if i not in taken:
            continue
        # the double is correctly rounded (Python's float() is)
        assert scan_lines([lines[i]])[1]["x"][0] == float(x) or float(x) == 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=6))
def test_any_bytes_in_text(raw: bytes) -> None:
    check([b'{"id": "' + raw + b'", "zz": "' + raw + b'"}'])


@settings(max_examples=400, deadline=None)
@given(st.lists(records(), min_size=1, max_size=8), st.data())
def test_broken_lines_are_never_taken(recs: list[dict[str, Any]], data: st.DataObject) -> None:
    """Lines cut, spliced or with a byte changed: whatever orjson refuses is handed back."""
    lines = []
    for r in recs:
        raw = bytearray(dumps(r))
        how = data.draw(st.sampled_from(["cut", "byte", "insert", "spaces", "closing"]))
        at = data.draw(st.integers(0, len(raw)))
        if how == "cut":
            raw = raw[:at]
        elif how == "byte" and at < len(raw):
            raw[at] = data.draw(st.sampled_from(b'{}[]",:.-+eE0 \\\t\x01nNtf'))
        elif how == "insert":
            raw[at:at] = data.draw(st.sampled_from([b",", b",,", b"}", b"]", b'"', b"\\",
                                                    b" ", b"\t", b"\r", b"NaN", b"-",
                                                    b"01", b"1.", b".5", b"\x00",
                                                    b'\\u0041', b"\xff"]))
        elif how == "closing":  # a byte just before a closing bracket (a trailing comma)
            closers = [i for i, b in enumerate(raw) if b in b"}]"]
            i = data.draw(st.sampled_from(closers))
            raw[i:i] = data.draw(st.sampled_from([b",", b":", b'"', b" ,", b"-", b"e"]))
        else:
            raw = bytearray(raw.replace(b":", b" : ").replace(b",", b" ,\t"))
        lines.append(bytes(raw))
    check(lines)


@pytest.mark.parametrize("line, why", [
    (b'{"id": "a", "id": "b"}', "a mapped key twice: orjson keeps the last"),
    (b'{"a": {"x": 1}, "a": {"x": 2}}', "a mapped parent twice"),
    (b'{"id": "\\u0041"}', "a \\u escape"),
    (b'{"id": "a\\nb"}', "an escape in mapped text"),
    (b'{"a": {"x": 1e400}}', "an infinite double"),
    (b'{"a": {"x": 0.1234567890123456789}}', "more digits than a double holds exactly"),
    (b'{"a": {"n": 1.0}}', "a double in an integer column"),
    (b'{"a": 5}', "a mapped parent that is not an object"),
    (b'{"a": {"x": [1]}}', "a list where a number is mapped"),
    (b'{"id": 1}', "a number in a text column"),
    (b'{"ok": 1}', "a number in a boolean column"),
    (b'{"zz": NaN}', "NaN anywhere"),
    (b'{"zz": [1,]}', "a trailing comma in a list"),
    (b'{"zz": 1,}', "a trailing comma in an object"),
    (b'{"a": {"q": 1,}}', "a trailing comma in a mapped object"),
    (b'{"zz": {"q": 1,}}', "a trailing comma in an unmapped object"),
    (b'{"zz": {,}}', "a lone comma"),
    (b'{"zz": {"q"}}', "a key without a value"),
    (b'{"zz": 01}', "a leading zero"),
    (b'{"zz": "\x01"}', "a control character in text"),
    (b'{"zz": "\xc0\xaf"}', "an overlong UTF-8 sequence"),
    (b'{"zz": "\xed\xa0\x80"}', "a surrogate in UTF-8"),
    (b'{"zz": "\xf4\x90\x80\x80"}', "past U+10FFFF"),
    (b'{"zz": "\xe2\x82"}', "a UTF-8 sequence cut short"),
    (b'{"zz": \xc3\xa9}', "text outside quotes"),
    (b'{"i\\u0064": "x"}', "an escaped key that spells a mapped one (id)"),
    (b'{"a": {"\\u0078": 1}}', "an escaped key in a mapped object (x)"),
    (b'{"i\\"d": "x"}', "any escape in a key where keys are mapped"),
    (b'{"i\x01d": "x"}', "a control character in a key"),
    (b'{"\xc3": "x"}', "a key cut inside a UTF-8 sequence"),
    (b'{"id', "a key without its closing quote"),
    (b'{} {}', "two objects on a line"),
    (b'[{}]', "a list, not an object"),
    (b'{"zz": ' + b"[" * 600 + b"]" * 600 + b"}", "nesting deeper than the scanner goes"),
])
def test_lines_handed_back(line: bytes, why: str) -> None:
    taken, _ = scan_lines([line, b'{"id": "ok"}'])
    assert taken == [1], why


def test_what_is_taken_whatever_the_layout() -> None:
    lines = [
        b' { "a" : { "b" : { "level" : "hi" } , "x" : -0.0 , "n" : -12 } , "ok" : true } ',
        b'{"a":null,"ok":null,"id":null}',
        b'{"zz": {"deep": [1, {"x": 2}, "s\\"q"], "e": 1E+2}, "id": "caf\xc3\xa9"}',
        b'{}',
        b'{"a": {"x": 12345678901234567}}',  # over 2**53: handed back
        b'{"a": {"x": -0, "n": 0}}',
    ]
    taken, cols = scan_lines(lines)
    assert taken == [0, 1, 2, 3, 5]
    assert cols["level"] == ["hi", None, None, None, None]
    assert cols["x"][0] == 0.0 and math.copysign(1, cols["x"][0]) == -1
    assert math.copysign(1, cols["x"][4]) == 1  # "-0" is orjson's integer 0
    assert cols["n"] == [-12, None, None, None, 0]
    assert cols["flag"] == [True, None, None, None, None]
    assert cols["id"] == [None, None, "café", None, None]
    assert cols["x"] == cols["x_again"]


def test_a_line_of_any_length_is_scanned() -> None:
    wide = {"id": "w", "a": {"x": 1.5}, **{f"f{i}": i * 0.25 for i in range(400)}}
    line = orjson.dumps(wide)
    assert len(line) > 4000
    taken, cols = scan_lines([line])
    assert taken == [0] and cols["x"] == [1.5]


def test_types_it_cannot_build_give_no_scanner() -> None:
    assert scanner_for({"p": ("p",)}, {"p": pa.list_(pa.float64())}, wait=True) is None
    assert scanner_for({"a": ("a",), "b": ("a", "b")}, {"a": pa.float64(),
                                                       "b": pa.float64()}) is None
    assert scanner_for({"a": ("a",), "b": ("a",)}, {"a": pa.float64(), "b": pa.string()}) is None


def test_an_object_of_hundreds_of_mapped_keys() -> None:
    """Every key found through the node's hash table, colliding or not, in any order."""
    names = [f"f{i}" for i in range(300)] + ["", "é", "f1 ", "F1"]
    sc = scanner_for({n: ("o", n) for n in names}, {n: pa.float64() for n in names},
                     wait=True)
    assert sc is not None
    rec = {"o": {n: float(i) for i, n in enumerate(reversed(names))}}
    rec["o"]["unmapped"] = 1.0
    line = orjson.dumps(rec)
    taken, cols = sc.scan(line, np.array([0]), np.array([len(line)]))
    assert taken.tolist() == [0]
    assert {n: cols[n].to_pylist()[0] for n in names} == {n: rec["o"][n] for n in names}


@settings(max_examples=150, deadline=None,  # monkeypatch.context() is per example
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(records().map(dumps), st.sampled_from(
    [b'{"id": 1}', b"{", b"", b'{"a": {"x": 1e400}}', b'{"zz": NaN}'])), max_size=40),
       threads=st.integers(1, 4), part_lines=st.integers(1, 6))
def test_a_block_scanned_in_parts_gives_what_one_pass_gives(
        lines: list[bytes], threads: int, part_lines: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut into parts on the scan threads, lines handed back anywhere (a whole part too):
    the same lines taken, the same columns, in the same order."""
    from driftwatch.connectors import jsonscan

    with monkeypatch.context() as m:
        m.setattr(jsonscan, "scan_threads", lambda: 1)
        one = scan_lines(lines)
        m.setattr(jsonscan, "scan_threads", lambda: threads)
        m.setattr(jsonscan, "PART_LINES", part_lines)
        assert len(jsonscan._cuts(len(lines))) - 1 == max(1, min(threads, len(lines)
                                                                 // part_lines))
        assert scan_lines(lines) == one


def test_a_thread_that_leaves_cores_scans_in_fewer_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from driftwatch.connectors import jsonscan

    monkeypatch.setattr(jsonscan, "scan_threads", lambda: 2)
    parts: dict[str, int] = {}

    def run(name: str, left: int | None) -> None:
        if left is not None:
            jsonscan.leave_cores(left)
        parts[name] = len(jsonscan._cuts(10**5)) - 1

    for name, left in (("reader", 1), ("plain", None)):
        t = threading.Thread(target=run, args=(name, left))
        t.start()
        t.join()
    assert parts == {"reader": 1, "plain": 2}

