"""``format: percent`` reads a decimal comma (``"13,56%"``, a European export) as the
decimal point, by one rule on every path (the reference's
:func:`~driftwatch.textnumbers.number_in`, a decoded record's list, a CSV or Parquet text
column through pyarrow), but only where the comma cannot be a thousands comma:
``"1,234%"`` (1234 or 1.234?) is no percentage, never a guess, unless the file it came
from writes its decimals with the comma: there it is 1.234."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.columns import text_numbers
from driftwatch.onboard.infer import percent_text
from driftwatch.textnumbers import number_in


def _read_everywhere(texts: list[str], decimal: str = ".") -> list[Any]:
    """What each path reads ``texts`` as (None: a bad value), the paths agreeing;
    ``decimal``: the decimal mark of the file they came from."""
    def one(t: str) -> float | None:
        try:
            return number_in("percent", t, decimal)
        except ValueError:
            return None
    ref = [one(t) for t in texts]
    for raw in (texts, pa.array(texts, pa.string())):
        v, bad, _ = text_numbers(raw, "percent", decimal)
        assert [None if b else x for x, b in zip(v.tolist(), bad.tolist(), strict=True)] == ref
    return ref


def _written(units: int, places: int, style: str) -> str:
    """``units`` / 10**``places`` as percent text in ``style`` (Python's own formatting)."""
    sign, a = ("-" if units < 0 else ""), abs(units)
    digits = f"{a // 10**places},{a % 10**places:0{places}d}"
    return {"comma": f"{sign}{digits}%", "spaced": f" {sign}{digits} % ",
            "no_sign": f"{sign}{digits}"}[style]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**9, 10**9), st.sampled_from([1, 2, 4, 5]),
                          st.sampled_from(["comma", "spaced", "no_sign"])),
                min_size=1, max_size=40))
def test_a_decimal_comma_reads_back_exactly(rates: list[tuple[int, int, str]]) -> None:
    texts = [_written(u, p, s) for u, p, s in rates]
    assert _read_everywhere(texts) == [u / 10**p for u, p, _ in rates], texts
    if all(s != "no_sign" for _, _, s in rates):
        assert percent_text(texts)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 999), st.sampled_from(["", "%", " %"]),
       st.sampled_from(["", "-"]))
def test_a_comma_before_exactly_three_digits_is_never_read(
        whole: int, three: int, sign: str, minus: str) -> None:
    """'1,234%' is 1234 with a thousands comma or 1.234 with a decimal one: refused."""
    text = f"{minus}{whole},{three:03d}{sign}"
    assert _read_everywhere([text]) == [None], text
    assert not percent_text([text, "13.56%"])


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 999), st.sampled_from(["", "%", " %"]),
       st.sampled_from(["", "-"]))
def test_in_a_decimal_comma_file_a_comma_before_three_digits_is_the_decimal_mark(
        whole: int, three: int, sign: str, minus: str) -> None:
    """Before: '1,234%' was refused in a file whose decimals are commas too, where it can
    only be 1.234 (a thousands mark there is the point)."""
    text = f"{minus}{whole},{three:03d}{sign}"
    want = float(f"{minus}{whole}.{three:03d}")
    assert _read_everywhere([text, "13,56%"], decimal=",") == [want, 13.56], text
    assert percent_text([f"{whole},{three:03d}%", "13,56%"], decimal=",")


@pytest.mark.parametrize("decimal", [".", ","])
@pytest.mark.parametrize("text", ["13,56,7%", "1.234,5%", ",5%", "5,%", "1, 5%", "1,5e3%"])
def test_other_commas_are_no_percentage(text: str, decimal: str) -> None:
    assert _read_everywhere([text], decimal) == [None]


# -- words Python's float reads: no percentage, as "abc%" is none -----------------------------

_WORDS = ("nan", "inf", "infinity", "n/a", "abc")


@settings(max_examples=300, deadline=None)
@given(word=st.sampled_from(_WORDS), cases=st.lists(st.booleans(), min_size=8, max_size=8),
       sign=st.sampled_from(["", "-", "+"]), spaced=st.booleans(), rate=st.booleans())
def test_nan_or_inf_before_the_sign_is_refused_like_any_word(
        word: str, cases: list[bool], sign: str, spaced: bool, rate: bool) -> None:
    """``"nan%"``, ``"NaN %"``, ``"-Inf%"`` read as NaN or infinity (Python's ``float`` and
    pyarrow's cast take them), so a NaN rate passed for a number; they are refused on every
    path, as ``"abc%"`` is, and a good rate beside them still reads."""
    spelled = "".join(c.upper() if up else c for c, up in zip(word, cases, strict=False))
    text = f"{sign}{spelled}{' ' if spaced else ''}%" if rate else f"{sign}{spelled}"
    assert _read_everywhere([text, "13.5%"]) == [None, 13.5], text
    with pytest.raises(ValueError, match="not a number or percent text"):
        number_in("percent", text)
    assert not percent_text([text, "13.56%"])
