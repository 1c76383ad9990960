"""A score written as log-odds or scorecard points: read as a probability, in the connector
(every decoder path) and its validation, against values computed by hand."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.connectors.file import FileSource
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema
from driftwatch.scorescale import LOG_ODDS, PERCENT, PROBABILITY, ScoreScale

from ._csvconn import one_stream

CARD = ScoreScale.points(base=600, odds=50, pdo=20)


# -- the conversions ------------------------------------------------------------------------


@pytest.mark.parametrize(("points", "p_bad"), [
    (600, 1 / 51),  # odds 50:1 at base
    (620, 1 / 101),  # one pdo up: odds 100:1
    (580, 1 / 26),  # one pdo down: odds 25:1
    (660, 1 / 401),  # three pdo up: odds 400:1
])
def test_points_are_p_bad_at_the_scorecards_odds(points: float, p_bad: float) -> None:
    got = CARD.to_probability(np.array([float(points)]))[0]
    assert got == pytest.approx(p_bad, rel=1e-12)


@pytest.mark.parametrize(("x", "p"), [(0.0, 0.5), (math.log(3), 0.75), (-math.log(9), 0.1)])
def test_log_odds_are_the_probability_of_the_scores_class(x: float, p: float) -> None:
    assert LOG_ODDS.to_probability(np.array([x]))[0] == pytest.approx(p, rel=1e-12)


def test_huge_values_read_as_the_limits_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo = LOG_ODDS.to_probability(np.array([-1e6, -745.0, 745.0, 1e6]))
        pts = CARD.to_probability(np.array([-1e9, 1e9]))
    assert lo.tolist()[0] == 0.0 and lo.tolist()[-1] == 1.0
    assert 0.0 <= lo[1] < 1e-300 and lo[2] == 1.0
    assert pts.tolist() == [1.0, 0.0]
    assert np.isnan(CARD.to_probability(np.array([np.nan]))).all()


def test_percent_and_probability_as_before() -> None:
    assert PERCENT.to_probability(np.array([35.0])).tolist() == [0.35]
    assert PROBABILITY.to_probability(np.array([0.35])).tolist() == [0.35]


cards = st.builds(
    lambda b, o, d: ScoreScale.points(base=b, odds=o, pdo=d),
    st.floats(-1e4, 1e4), st.floats(1e-6, 1e6), st.floats(1e-3, 1e3))
finite = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(finite, min_size=2, max_size=30), cards)
def test_any_finite_input_reads_monotone_into_zero_one(xs: list[float],
                                                      card: ScoreScale) -> None:
    x = np.sort(np.array(xs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lo, pts = LOG_ODDS.to_probability(x), card.to_probability(x)
    for p in (lo, pts):
        assert np.isfinite(p).all() and (p >= 0).all() and (p <= 1).all()
    assert (np.diff(lo) >= 0).all()  # more log-odds: more likely
    assert (np.diff(pts) <= 0).all()  # more points: safer


@given(st.lists(st.floats(0, 1), min_size=1, max_size=20),
       st.one_of(st.floats(-1e6, -1e-9), st.floats(1 + 1e-9, 1e6)),
       st.sampled_from([LOG_ODDS, CARD, PERCENT]))
def test_a_reference_column_is_in_the_scale_when_a_value_is_outside_zero_one(
        probs: list[float], outside: float, scale: ScoreScale) -> None:
    assert not scale.written_in(np.array(probs))
    assert scale.written_in(np.array([*probs, outside, np.nan]))
    assert not PROBABILITY.written_in(np.array([*probs, outside]))


def test_a_scale_refuses_invalid_scorecard_numbers() -> None:
    for bad in ({"base": 600, "odds": 0, "pdo": 20}, {"base": 600, "odds": 50, "pdo": -20},
                {"base": math.inf, "odds": 50, "pdo": 20}):
        with pytest.raises(ValueError):
            ScoreScale.points(**bad)


# -- the connector --------------------------------------------------------------------------

def _text(score: str, ext: str = "jsonl") -> str:
    return one_stream(f"p.{ext}", ("event_id: id", "event_time: {path: ts, unit: s}",
                                   f"score: {score}"))


def connector(score: str, ext: str = "jsonl", base: Path | None = None) -> object:
    return parse_connector(_text(score, ext), file="c.yaml",
                           base_dir=base)


def located(score: str) -> ConnectorError:
    with pytest.raises(ConnectorError) as exc:
        connector(score)
    return exc.value


def line_col(text: str, snippet: str) -> str:
    for n, line in enumerate(text.splitlines(), 1):
        if snippet in line:
            return f"c.yaml:{n}:{line.index(snippet) + 1}"
    raise AssertionError(snippet)


@pytest.mark.parametrize(("score", "at", "says"), [
    ("{path: s, percent: true, log_odds: true}", "log_odds: true",
     "percent and log_odds both say what scale"),
    ("{path: s, percent: true, points: {base: 600, odds: 50, pdo: 20}}", "points:",
     "percent and points both say what scale"),
    ("{path: s, log_odds: true, points: {base: 600, odds: 50, pdo: 20}}", "points:",
     "log_odds and points both say what scale"),
    ("{path: s, points: {base: 600, odds: 50, pdo: -20}}", "-20",
     "expected a number above 0"),
    ("{path: s, points: {base: 600, odds: 0, pdo: 20}}", "0, pdo",
     "expected a number above 0 (the good:bad odds"),
    ("{path: s, points: {base: 600, odds: 50, pdo: .inf}}", ".inf",
     "expected a finite number"),
    ("{path: s, points: {base: six, odds: 50, pdo: 20}}", "six", "expected a finite number"),
    ("{path: s, points: {base: 600, odds: 50}}", "{base", "missing required key 'pdo'"),
    ("{path: s, points: {base: 600, odds: 50, pdo: 20, scale: 2}}", "scale: 2",
     "unknown key 'scale'"),
])
def test_invalid_scales_are_located_errors(score: str, at: str, says: str) -> None:
    err = located(score)
    text = _text(score)
    assert str(err).startswith(line_col(text, at) + ": ")
    assert says in str(err)


def test_the_mapping_carries_the_scale() -> None:
    assert connector("{path: s, log_odds: true}").stream("predictions").score_scale == LOG_ODDS
    card = connector("{path: s, points: {base: 600, odds: 50, pdo: 20}}")
    assert card.stream("predictions").score_scale == CARD
    assert connector("s").stream("predictions").score_scale == PROBABILITY


def test_points_with_a_policy_that_says_p_good_are_refused_where_written() -> None:
    text = _text("{path: s, points: {base: 600, odds: 50, pdo: 20}}")
    conn = parse_connector(text, file="c.yaml")
    assert conn.score_scale("p_bad") == CARD
    with pytest.raises(ConnectorError) as exc:
        conn.score_scale("p_good")
    assert str(exc.value).startswith(line_col(text, "points:") + ": ")
    assert "score_is: p_good" in str(exc.value)


# -- decoding -------------------------------------------------------------------------------

LINES = (b'{"id": "a", "ts": 1704067200, "s": 600}\n'
         b'{"id": "b", "ts": 1704067201, "s": 620.0}\n'
         b'{"id": "c", "ts": 1704067202, "s": "x"}\n')


def test_json_points_read_as_p_bad_on_every_path() -> None:
    m = connector("{path: s, points: {base: 600, odds: 50, pdo: 20}}").stream("predictions")
    dec = Decoder(m, FeatureSchema())
    block = dec.decode_block(LINES, source="p.jsonl")
    kafka = dec.decode(LINES.splitlines(), source="t", positions=np.arange(3))
    for batch, bad in (block, kafka):
        assert batch.ids.tolist() == ["a", "b"]
        assert batch.score.tolist() == pytest.approx([1 / 51, 1 / 101], rel=1e-12)
        assert [b.reason for b in bad] == ["wrong_type"]


def test_json_log_odds_read_as_the_probability() -> None:
    m = connector("{path: s, log_odds: true}").stream("predictions")
    batch, bad = Decoder(m, FeatureSchema()).decode_block(
        b'{"id": "a", "ts": 1, "s": 0}\n{"id": "b", "ts": 2, "s": -2.1972245773362196}\n'
        b'{"id": "c", "ts": 3, "s": -800}\n', source="p.jsonl")
    assert bad == []
    assert batch.score.tolist() == pytest.approx([0.5, 0.1, 0.0], rel=1e-12, abs=1e-300)


def test_csv_points_read_as_p_bad(tmp_path: Path) -> None:
    (tmp_path / "p.csv").write_text("id,ts,s\na,1704067200,600\nb,1704067201,580\n"
                                    "c,1704067202,inf\n")
    conn = connector("{path: s, points: {base: 600, odds: 50, pdo: 20}}", ext="csv",
                     base=tmp_path)
    src = FileSource(conn, FeatureSchema())
    polled = src.poll()
    src.close()
    assert polled is not None
    batch = polled.batches[0]
    assert batch.ids.tolist() == ["a", "b"]
    assert batch.score.tolist() == pytest.approx([1 / 51, 1 / 26], rel=1e-12)
    # infinite points are not the limit 0: the written value is not finite
    assert [b.reason for b in polled.bad] == ["non_finite_score"]


# -- what init guesses of a stream score outside [0, 1] and 0..100 ----------------------------


@given(st.lists(st.floats(-30, 30), min_size=1, max_size=40))
def test_init_reads_values_within_thirty_as_log_odds(xs: list[float]) -> None:
    from driftwatch.onboard.scaledscore import unscaled_kind

    assert unscaled_kind(xs) == "log_odds"


@given(st.lists(st.integers(-5000, 5000), min_size=1, max_size=40),
       st.integers(31, 5000), st.booleans())
def test_init_reads_whole_numbers_past_thirty_as_points(xs: list[int], far: int,
                                                        negative: bool) -> None:
    from driftwatch.onboard.scaledscore import unscaled_kind

    assert unscaled_kind([*xs, -far if negative else far]) == "points"


@given(st.lists(st.floats(100, 1000), min_size=8, max_size=40),
       st.lists(st.floats(-1e6, 1e6).filter(lambda v: abs(v) > 30), max_size=2))
def test_init_reads_values_mostly_in_100_to_1000_as_points(card: list[float],
                                                          other: list[float]) -> None:
    from driftwatch.onboard.scaledscore import unscaled_kind

    assert unscaled_kind([*card, *other]) == "points"
