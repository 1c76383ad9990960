"""``format: money`` reads every common way of writing an amount back to the cent, by one
rule on every path (the reference's :func:`~driftwatch.textnumbers.number_in`, a decoded
record's list, a CSV or Parquet text column through pyarrow): a sign or an accountant's
brackets (``"($1,234.00)"``, which was no amount), a currency sign or none, thousands
grouped by commas or not; a comma that does not split groups of three is no amount."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.columns import text_numbers
from driftwatch.money import bare_money
from driftwatch.onboard.infer import money_text, text_format
from driftwatch.textnumbers import number_in


def _written(cents: int, style: str) -> str:
    """``cents`` as money text in ``style`` (Python's own formatting, not the reader's)."""
    sign, a = ("-" if cents < 0 else ""), abs(cents) / 100
    grouped, plain = f"{a:,.2f}", f"{a:.2f}"
    if style == "whole":  # no cents written
        grouped = f"{abs(cents) // 100:,}"
    if cents < 0 and style.startswith("brackets"):
        return {"brackets": f"(${grouped})", "brackets_bare": f"({grouped})",
                "brackets_after": f"$({grouped})"}[style]
    return {"plain": f"{sign}{plain}", "grouped": f"{sign}{grouped}",
            "dollar": f" {sign}${grouped} ", "euro": f"€ {sign}{grouped}",
            "sign_after": f"${sign}{grouped}", "whole": f"{sign}{grouped}",
            "brackets": f"${grouped}", "brackets_bare": grouped,
            "brackets_after": f"${grouped}"}[style]


_STYLES = ("plain", "grouped", "dollar", "euro", "sign_after", "whole", "brackets",
           "brackets_bare", "brackets_after")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**13, 10**13), st.sampled_from(_STYLES)),
                min_size=1, max_size=40))
def test_an_amount_in_every_style_reads_back_to_the_cent(
        amounts: list[tuple[int, str]]) -> None:
    # a whole amount: its cents dropped toward zero
    cents = [(-1 if c < 0 else 1) * (abs(c) // 100 * 100) if s == "whole" else c
             for c, s in amounts]
    texts = [_written(c, s) for c, (_, s) in zip(cents, amounts, strict=True)]
    want = [c / 100 for c in cents]
    assert [number_in("money", t) for t in texts] == want, texts
    for raw in (texts, pa.array(texts, pa.string())):
        v, bad, null = text_numbers(raw, "money")
        assert v.tolist() == want and not bad.any() and not null.any(), texts


_GROUPED = re.compile(r"\d{1,3}(,\d{3})*")


@settings(max_examples=300, deadline=None)
@given(digits=st.text("0123456789", min_size=1, max_size=10),
       commas=st.sets(st.integers(1, 9), max_size=4), brackets=st.booleans())
def test_a_comma_reads_only_between_groups_of_three_digits(
        digits: str, commas: set[int], brackets: bool) -> None:
    """``1,234,567`` is an amount; ``1,23``, ``12,34,567`` and ``1234,567`` are none."""
    cuts = sorted(c for c in commas if c < len(digits))
    text = ",".join(digits[a:b] for a, b in zip([0, *cuts], [*cuts, len(digits)],
                                                 strict=True))
    written = f"(${text})" if brackets else f"${text}"
    grouped = not cuts or _GROUPED.fullmatch(text) is not None
    for raw in ([written], pa.array([written], pa.string())):
        v, bad, _ = text_numbers(raw, "money")
        if grouped:
            assert v.tolist() == [(-1 if brackets else 1) * float(int(digits))], written
        else:
            assert bad.tolist() == [True], written


# -- init: which text columns it maps with format: money ------------------------------------

_MARKED = ("grouped", "dollar", "euro", "sign_after", "whole", "brackets", "brackets_bare")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-10**11, 10**11), min_size=1, max_size=30),
       st.sampled_from(_MARKED))
def test_init_takes_a_column_of_amounts_for_money_when_one_is_marked_as_such(
        cents: list[int], style: str) -> None:
    """A currency sign, a thousands comma or a bracket marks the column; plain numbers
    written as text do not."""
    big = [*cents, -123_456_789]  # one marked in every style: a comma, and a bracket
    texts = [_written(c, style) for c in big]
    assert money_text(texts) and text_format(texts) == "money", texts
    assert not money_text([_written(c, "plain") for c in cents])
    assert not money_text([*texts, "12 apples"])
    assert money_text([*texts, "12 apples"], most=True)


# -- a decimal-comma file: points group the thousands, the comma starts the cents ----------

def _european(cents: int, style: str) -> str:
    """``cents`` as a European export writes it (Python's formatting, its marks swapped)."""
    sign, a = ("-" if cents < 0 else ""), abs(cents) / 100
    grouped = f"{a:,.2f}".translate(str.maketrans(",.", ".,"))
    if cents < 0 and style == "brackets":
        return f"(€ {grouped})"
    return {"plain": f"{sign}{grouped}", "after": f"{sign}{grouped} €",
            "after_tight": f"{sign}{grouped}€", "before": f"€ {sign}{grouped}",
            "sign_first": f"{sign}€{grouped}", "bare": f"{sign}{a:.2f}".replace(".", ","),
            "brackets": f"€ {grouped}"}[style]


_EUROPEAN = ("plain", "after", "after_tight", "before", "sign_first", "bare", "brackets")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-10**13, 10**13), st.sampled_from(_EUROPEAN)),
                min_size=1, max_size=40))
def test_an_amount_from_a_decimal_comma_file_reads_back_to_the_cent(
        amounts: list[tuple[int, str]]) -> None:
    """``1.234,56 €``, ``€ -1.234,56``, ``-1.234,56`` are -1234.56 on every path; they were
    no amount (a column of them was ignored as a value per row)."""
    texts = [_european(c, s) for c, s in amounts]
    want = [c / 100 for c, _ in amounts]
    assert [number_in("money", t, decimal=",") for t in texts] == want, texts
    for raw in (texts, pa.array(texts, pa.string())):
        v, bad, null = text_numbers(raw, "money", decimal=",")
        assert v.tolist() == want and not bad.any() and not null.any(), texts
    marked = [*texts, _european(-123_456_789, "plain")]  # a thousands point marks them
    assert text_format(marked, decimal=",") == "money", marked


@pytest.mark.parametrize("text", ["1.23", "1.2345,6", "12.34.567", "1,234.56", "$5 €",
                                  "(-1.234,56)", "1.234,56,7"])
def test_a_point_reads_only_between_groups_of_three_in_a_decimal_comma_file(
        text: str) -> None:
    for raw in ([text], pa.array([text], pa.string())):
        assert text_numbers(raw, "money", decimal=",")[1].tolist() == [True], text


@pytest.mark.parametrize(("text", "dot"), [("1.234,56 €", None), ("12,50", None),
                                           ("1,234.5 $", 1234.5), ("$1,234.50", 1234.5)])
def test_a_dot_decimal_file_reads_its_amounts_as_before(text: str, dot: float | None) -> None:
    """The point's rule is unchanged: thousands points are no amount there (a currency
    sign after the amount now reads on either rule)."""
    v, bad, _ = text_numbers(pa.array([text], pa.string()), "money")
    assert (None if bad[0] else v[0]) == dot
    assert (bare_money(text) is None) == (dot is None)
