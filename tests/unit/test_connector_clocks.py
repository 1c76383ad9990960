"""Two streams that read one time field as numbers read it on one clock: an ``origin:``
given to one stream only put every outcome decades from its prediction (an IEEE-shaped
replay lost 29,999 of 30,000 outcomes, with nothing said of the clocks)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.errors import ConnectorError

A, B = "2017-11-30T00:00:00Z", "2018-01-01T00:00:00Z"


def _text(pred_time: str, out_time: str) -> str:
    return f"""
apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: c}}
source:
  kind: file
  streams:
    predictions:
      paths: [p.csv]
      fields:
        event_id: id
        event_time: {pred_time}
        score: score
    outcomes:
      paths: [o.csv]
      fields:
        event_id: id
        event_time: {out_time}
        label: {{path: label, bad: [1], good: [0]}}
"""


def _time(path: str, unit: str, origin: str | None) -> str:
    parts = [f"path: {path}", f"unit: {unit}"] + ([f'origin: "{origin}"'] if origin else [])
    return "{" + ", ".join(parts) + "}"


@given(origins=st.tuples(st.sampled_from([None, A, B]), st.sampled_from([None, A, B])),
       unit=st.sampled_from(["s", "ms", "h", "d"]), auto=st.booleans(),
       nested=st.booleans())
def test_one_field_in_one_unit_is_refused_exactly_where_the_origins_differ(
        origins: tuple[str | None, str | None], unit: str, auto: bool, nested: bool) -> None:
    """Compared by the field's name (the last segment of its path), in one unit; a unit
    left to the values (``auto``: epoch seconds or milliseconds) is any epoch unit's."""
    text = _text(_time("txn.dt" if nested else "dt", unit, origins[0]),
                 _time("dt", "auto" if auto else unit, origins[1]))
    # unit auto with an origin counts seconds from it
    theirs = ("s" if origins[1] else "auto") if auto else unit
    if origins[0] == origins[1] or theirs not in (unit, "auto"):
        parse_connector(text, file="c.yaml")
        return
    with pytest.raises(ConnectorError) as err:
        parse_connector(text, file="c.yaml")
    said = str(err.value)
    assert said.startswith("c.yaml:18:21: stream 'outcomes' reads dt with "), said
    assert "same origin" in said


@pytest.mark.parametrize(("pred", "out"), [
    (_time("dt", "s", A), _time("outcome_dt", "s", None)),  # another field
    (_time("dt", "s", A), _time("dt", "ms", None)),  # another unit: another clock
    (_time("dt", "s", A), "{source: arrival}"),
    (_time("dt", "s", A), '{path: dt, format: "%Y-%m-%d"}'),  # text dates
    (_time("dt", "s", A), "{path: dt, unit: iso}"),
])
def test_fields_read_otherwise_are_not_one_clock(pred: str, out: str) -> None:
    parse_connector(_text(pred, out), file="c.yaml")
