"""A JSON stream whose time is a number in most lines and text in some (epoch seconds beside
an ISO string, or the other way round) is decoded by the block parsers, the lines of each
kind apart, with the batches and dead letters of the line-by-line path. Every block holding
both kinds fell back, down to pieces read line by line: with 1% text times a 100k-line file
decoded about 19 times slower than with none."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder

from .test_decode_paths_agree import CONNECTOR, SCHEMA, assert_same, letters


def _mapping(unit: str) -> Any:
    """The block-parser tests' connector, its time read in ``unit``."""
    return parse_connector(CONNECTOR.replace("unit: auto", f"unit: {unit}")).streams[0]


def _line(i: int, ts: Any, decoy: bool = False) -> bytes:
    rec: dict[str, Any] = {"id": f"e{i}", "a": {"income": 1.5 * i}, "loan": {"purpose": "car"},
                           "m": {"score": (i % 100) / 100}}
    if ts is not _ABSENT:
        rec["ts"] = ts
    if decoy:  # the key at another depth, text: the byte search guesses wrong, no harm
        rec["loan"]["ts"] = "decoy"
    return orjson.dumps(rec)


_ABSENT = object()
_NUMBERS = st.one_of(st.integers(1_600_000_000, 1_800_000_000_000), st.floats(1.6e9, 1.8e9))
_TEXTS = st.one_of(st.sampled_from(["2024-02-01T10:00:00+01:00", "2023-11-14T22:13:20Z",
                                    "1704067200", "1704067200.5", "1.7e9", " 1704067200 ",
                                    "nope", "", "2024-13-45"]),
                   st.integers(1_600_000_000, 1_800_000_000).map(str))
_ODD = st.sampled_from([None, True, _ABSENT, [1], {"x": 1}])


def _times(major: st.SearchStrategy[Any], minor: st.SearchStrategy[Any]
           ) -> st.SearchStrategy[list[Any]]:
    """Mostly ``major``, some ``minor`` (enough, often, for a block of their own), a few of
    anything else."""
    return st.lists(st.one_of(*[major] * 3, minor, _ODD), min_size=250, max_size=500)


def _agree(unit: str, warm: list[bytes], lines: list[bytes]) -> Decoder:
    """Decode ``lines`` (after ``warm``) as a block and as payloads with each parser: the
    same batches and dead letters. Returns the block parsers' decoder."""
    mapping = _mapping(unit)
    slow = Decoder(mapping, SCHEMA, block_parse=False, now=1.8e9)
    fast = [Decoder(mapping, SCHEMA, now=1.8e9), Decoder(mapping, SCHEMA, scan=False, now=1.8e9)]
    for dec in (*fast, slow):
        dec.decode_block(b"\n".join(warm) + b"\n", source="warm")
    block = b"\n".join(lines) + b"\n"
    offsets = np.arange(100, 100 + len(lines))
    b, bbad = slow.decode_block(block, source="f.jsonl", first_line=65)
    c, cbad = slow.decode(lines, source="t", positions=offsets, partition=1)
    for dec in fast:
        a, abad = dec.decode_block(block, source="f.jsonl", first_line=65)
        assert_same(a, b)
        assert letters(abad) == letters(bbad)
        a, abad = dec.decode(lines, source="t", positions=offsets, partition=1)
        assert_same(a, c)
        assert letters(abad) == letters(cbad)
    return fast[1]


def _warm(major: Any, minor: Any) -> list[bytes]:
    """A stream's first lines, which show the field holding both kinds."""
    return [_line(i, minor if i % 8 == 0 else major) for i in range(64)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(times=_times(_NUMBERS, _TEXTS), unit=st.sampled_from(["auto", "s"]),
       decoys=st.sets(st.integers(0, 499), max_size=5))
def test_numbers_with_some_text_times_decode_as_line_by_line(
        times: list[Any], unit: str, decoys: set[int]) -> None:
    lines = [_line(i, t, i in decoys) for i, t in enumerate(times)]
    _agree(unit, _warm(1_704_067_200, "2024-01-01T00:00:00Z"), lines)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(times=_times(_TEXTS, _NUMBERS), decoys=st.sets(st.integers(0, 499), max_size=5))
def test_text_with_some_number_times_decode_as_line_by_line(
        times: list[Any], decoys: set[int]) -> None:
    lines = [_line(i, t, i in decoys) for i, t in enumerate(times)]
    _agree("auto", _warm("2024-01-01T00:00:00Z", 1_704_067_200), lines)


def test_a_mixed_block_goes_to_the_block_parsers() -> None:
    """1% text times among 4000 lines: the block parsers take them all (they took none of
    the blocks that held one), the 40 text ones as a block of their own."""
    times: list[Any] = [1_704_067_200 + 60 * i for i in range(4000)]
    for i in range(0, 4000, 100):
        times[i] = f"2024-01-01T00:{i % 60:02d}:00Z"
    lines = [_line(i, t) for i, t in enumerate(times)]
    warm = [_line(i, 1_704_067_200) for i in range(64)]
    dec = _agree("auto", warm, lines)
    before = dec.rows_block_parsed
    dec.decode_block(b"\n".join(lines) + b"\n", source="again")
    assert dec.rows_block_parsed - before == len(lines)
