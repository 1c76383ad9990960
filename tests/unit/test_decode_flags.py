"""A yes/no feature spelled otherwise in the stream than in the reference (Home Credit's
``Y``/``N`` and ``0``/``1``, IEEE-CIS's ``T``/``F``, sent by a JSON service as ``true`` /
``false``) reads as the reference's level of the same side, in JSON, CSV, Parquet and the
Python API alike: it was a new category on every record, a severe data-quality fault on an
unchanged stream."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pytest

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.schema import FeatureSchema, unseen_code

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      fields:
        event_id: id
        event_time: ts
        features:
          own_car: own_car
          emp_phone: emp_phone
          m1: m1
          suite: suite
"""

#: reference levels, in the order the reference profile keeps them
SCHEMA = FeatureSchema(
    categorical=("own_car", "emp_phone", "m1", "suite"),
    levels=(("N", "Y"), ("0", "1"), ("T", "F"), ("Unaccompanied", "Family", "yes")),
    other=(frozenset(), frozenset(), frozenset(), frozenset()),
)


def _records(values: list[Any]) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "ts": 1_700_000_000 + i, "own_car": v, "emp_phone": v, "m1": v,
             "suite": v} for i, v in enumerate(values)]


def _codes_json(values: list[Any]) -> np.ndarray:
    dec = Decoder(parse_connector(CONNECTOR).stream("predictions"), SCHEMA)
    payloads = [orjson.dumps(r) for r in _records(values)]
    batch, bad = dec.decode(payloads, source="t", positions=np.arange(len(values)))
    assert not bad
    return batch.categorical


def test_json_booleans_read_as_the_references_flag_levels():
    codes = _codes_json([True, False, None])
    # own_car: Y is level 1, N level 0; emp_phone: 1 is level 1; m1: T is level 0
    assert codes[:, 0].tolist() == [1, 0, -1]
    assert codes[:, 1].tolist() == [1, 0, -1]
    assert codes[:, 2].tolist() == [0, 1, -1]
    # suite is no flag (three levels, one of them 'yes'): true stays a new category
    assert codes[:, 3].tolist() == [unseen_code(3), unseen_code(3), -1]


@pytest.mark.parametrize("spelled", [["yes", "no"], ["t", "f"], ["TRUE", "FALSE"], [1, 0]])
def test_other_flag_spellings_read_side_for_side(spelled):
    codes = _codes_json(spelled)
    assert codes[:, 0].tolist() == [1, 0]
    assert codes[:, 2].tolist() == [0, 1]


def test_text_that_is_no_flag_is_still_a_new_category():
    codes = _codes_json(["maybe", "Y"])
    assert codes[:, 0].tolist() == [unseen_code(2), 1]


def test_a_parquet_boolean_column_reads_side_for_side():
    dec = Decoder(parse_connector(CONNECTOR).stream("predictions"), SCHEMA)
    flags = pa.array([False, True, None])
    table = pa.table({"id": ["a", "b", "c"], "ts": [1_700_000_000] * 3, "own_car": flags,
                      "emp_phone": flags, "m1": flags, "suite": pa.array(["Family"] * 3)})
    batch, bad = dec.decode_table(table, source="t", positions=np.arange(3))
    assert not bad
    assert batch.categorical[:, :3].tolist() == [[0, 0, 1], [1, 1, 0], [-1, -1, -1]]


def test_a_dataframes_booleans_read_side_for_side_in_the_python_api():
    import pandas as pd

    from driftwatch import Monitor

    rng = np.random.default_rng(2)
    ref = pd.DataFrame({"FLAG_OWN_CAR": rng.choice(["Y", "N"], 2000, p=[.3, .7]),
                        "x": rng.normal(0, 1, 2000), "score": rng.uniform(0, 1, 2000)})
    mon = Monitor.from_reference(ref)
    cur = ref.sample(800, random_state=3)
    cur["FLAG_OWN_CAR"] = (cur["FLAG_OWN_CAR"] == "Y").astype("boolean")
    signals = mon.assess(cur).signals.set_index(["signal", "feature"])["value"]
    assert signals[("new_category_rate", "FLAG_OWN_CAR")] == 0.0
    assert SCHEMA.encode_categorical(0, [True, "no", "maybe", None]).tolist() == [
        1, 0, unseen_code(2), -1]
