"""Values that mean missing (``missing_values``): declared once in the connector, read as
null in the stream and in the reference alike, and checked with located errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.decode import Decoder
from driftwatch.errors import ConfigError, ConnectorError
from driftwatch.policy.levels import load_reference
from driftwatch.schema import FeatureSchema
from driftwatch.sentinels import MissingValues
from driftwatch.windows.conventions import build_profile

HEAD = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features: infer
"""
SCHEMA = FeatureSchema(numeric=("income", "age"), categorical=("purpose",),
                       levels=(("car", "home", "-1"),))


def connector(extra: str) -> Any:
    return parse_connector(HEAD + extra, file="c.yaml")


def decode(extra: str, records: list[dict[str, Any]], schema: FeatureSchema = SCHEMA) -> Any:
    dec = Decoder(connector(extra).resolved(schema).stream("predictions"), schema)
    block = b"\n".join(orjson.dumps(r) for r in records)
    batch, bad = dec.decode_block(block, source="f")
    assert bad == []
    return batch


def rec(i: int, income: Any, age: Any = 30, purpose: Any = "car") -> dict[str, Any]:
    return {"id": f"r{i}", "ts": 1_700_000_000 + i, "income": income, "age": age,
            "purpose": purpose}


# -- decode ---------------------------------------------------------------------------------


def test_listed_numbers_decode_as_missing_in_every_numeric_feature() -> None:
    batch = decode("        missing_values: [-9, -8]\n",
                   [rec(0, -9, -8), rec(1, -9.0, 40), rec(2, 5.5, -7), rec(3, None, 30)])
    assert np.isnan(batch.numeric[:, 0]).tolist() == [True, True, False, True]
    assert batch.numeric[:, 1].tolist()[1:] == [40.0, -7.0, 30.0]  # -7 was not listed
    assert np.isnan(batch.numeric[0, 1])


def test_a_per_feature_list_replaces_the_stream_list() -> None:
    batch = decode("        missing_values: [-9]\n"
                   "        missing_values_by_feature: {age: [], income: [999999]}\n",
                   [rec(0, -9, -9), rec(1, 999999, 999999)])
    assert np.isnan(batch.numeric[:, 0]).tolist() == [False, True]
    assert batch.numeric[:, 1].tolist() == [-9.0, 999999.0]


def test_categorical_levels_listed_decode_as_missing() -> None:
    batch = decode("        missing_values: [-1, NA]\n",
                   [rec(0, 1, purpose="NA"), rec(1, 1, purpose=-1), rec(2, 1, purpose="home"),
                    rec(3, 1, purpose="na")])
    assert batch.categorical[:, 0].tolist()[:3] == [-1, -1, 1]
    assert batch.categorical[3, 0] != -1  # text matches exactly, as levels do


def test_without_missing_values_nothing_changes() -> None:
    batch = decode("", [rec(0, -9, -8)])
    assert batch.numeric.tolist() == [[-9.0, -8.0]]


def test_csv_numbers_match_in_categorical_features() -> None:
    import pyarrow as pa

    schema = FeatureSchema(numeric=(), categorical=("purpose",), levels=(("car",),))
    c = connector("        missing_values: [-1]\n").resolved(schema)
    dec = Decoder(c.stream("predictions"), schema)
    table = pa.table({"id": ["a", "b", "c"], "ts": ["1700000000"] * 3,
                      "purpose": ["-1.0", "-1", "car"]})
    batch, bad = dec.decode_table(table, source="f.csv", positions=np.arange(3), lenient=True)
    assert bad == [] and batch.categorical[:, 0].tolist() == [-1, -1, 0]


# -- validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(("extra", "where", "expected"), [
    ("        missing_values: -9\n", "c.yaml:12:25", "expected a list of numbers or text"),
    ("        missing_values: [-9, null]\n", "c.yaml:12:30", "expected a finite number"),
    ("        missing_values: [-9, true]\n", "c.yaml:12:30", "expected a finite number"),
    ("        missing_values_by_feature: [-9]\n", "c.yaml:12:36", "expected a mapping"),
    ("        missing_values_by_feature: {age: ['']}\n", "c.yaml:12:43",
     "expected a finite number"),
])  # fmt: skip
def test_bad_lists_are_located(extra: str, where: str, expected: str) -> None:
    with pytest.raises(ConnectorError) as e:
        connector(extra)
    assert str(e.value).startswith(f"{where}: {expected}"), str(e.value)


def test_a_number_written_as_text_for_a_numeric_feature_is_located() -> None:
    """Text that is no number (``"?"``) may mean missing among numbers; ``"-9"`` would be
    read as which?"""
    c = connector("        missing_values_by_feature:\n          income: [-9, '-9']\n")
    with pytest.raises(ConnectorError) as e:
        c.schema_for(SCHEMA)
    msg = str(e.value)
    assert msg.startswith("c.yaml:13:24: feature 'income' is numeric: expected a number "
                          "that means missing, or text that is no number"), msg
    assert "found '-9'" in msg
    connector("        missing_values_by_feature:\n          income: [-9, '?']\n"
              ).schema_for(SCHEMA)


def test_an_unknown_feature_is_located_with_the_nearest_name() -> None:
    c = connector("        missing_values_by_feature:\n          incme: [-9]\n")
    with pytest.raises(ConnectorError) as e:
        c.schema_for(SCHEMA)
    assert str(e.value).startswith("c.yaml:13:11: feature 'incme' is not a feature"), \
        str(e.value)
    assert "did you mean 'income'?" in str(e.value)


def test_text_in_the_stream_list_is_for_categorical_features_only() -> None:
    c = connector("        missing_values: [-9, unknown]\n")
    assert c.schema_for(SCHEMA) is SCHEMA
    assert c.missing_values().numbers("income").tolist() == [-9.0]


def test_a_stream_without_features_cannot_declare_them() -> None:
    text = HEAD.replace("        features: infer\n", "") + "        missing_values: [-9]\n"
    with pytest.raises(ConnectorError, match="missing_values needs features"):
        parse_connector(text, file="c.yaml")


def test_two_streams_that_disagree_are_refused() -> None:
    text = HEAD + "        missing_values: [-9]\n" + """\
    more:
      role: predictions
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features: infer
        missing_values: [-8]
"""
    c = parse_connector(text, file="c.yaml")
    with pytest.raises(ConnectorError, match="reads other values as missing"):
        c.missing_values()


# -- the reference --------------------------------------------------------------------------


def frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    income = rng.lognormal(10, 0.4, n).round(0)
    income[rng.random(n) < 0.2] = -9
    return pd.DataFrame({"income": income, "age": rng.integers(18, 80, n),
                         "purpose": rng.choice(["car", "home", "NA"], n), "score":
                         rng.uniform(0, 1, n)})


def test_the_reference_reads_them_as_missing_and_records_them() -> None:
    df = frame()
    mv = MissingValues((-9, "NA"))
    prof = build_profile(df, missing=mv)
    plain = build_profile(df)
    share = float((df["income"] == -9).mean())
    assert prof.missing_shares()["income"] == pytest.approx(share)
    assert plain.missing_shares()["income"] == 0.0
    # the range starts at the real values, not at the code far below them
    assert prof.layout.numeric.fine_edges[0][0] > 0 > plain.layout.numeric.fine_edges[0][0]
    assert set(prof.schema.levels[0]) == {"car", "home"}
    assert prof.meta["missing_values"] == {"income": [-9, "NA"], "age": [-9, "NA"],
                                           "purpose": [-9, "NA"]}
    assert "missing_values" not in plain.meta


def test_a_saved_profile_must_read_the_same_values_as_missing(tmp_path: Any) -> None:
    path = build_profile(frame(), missing=MissingValues((-9,))).save(tmp_path / "p.json")
    assert load_reference(path, None, missing=MissingValues((-9,))).sketch.n == 400
    with pytest.raises(ConfigError, match="reads other values as missing"):
        load_reference(path, None, missing=MissingValues())


# -- declaring them is replacing them by null -----------------------------------------------

SENTINELS = [-9, -8, -7, -1]
nums = st.one_of(st.sampled_from(SENTINELS), st.sampled_from(SENTINELS),
                 st.integers(-20, 20), st.floats(-1e6, 1e6), st.none())
cats = st.sampled_from(["car", "home", "NA", "?", -1, None])
declared = st.tuples(
    st.lists(st.sampled_from([*SENTINELS, "NA", "?"]), max_size=4, unique=True),
    st.dictionaries(st.sampled_from(["income", "age", "purpose"]),
                    st.lists(st.sampled_from(SENTINELS), max_size=3, unique=True),
                    max_size=2))


def _nulled(v: Any, name: str, mv: MissingValues, kind: str) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if kind == "numeric":
        return None if float(v) in mv.numbers(name).tolist() else v
    from driftwatch.schema import level_text

    return None if level_text(v) in mv.texts(name) else v


def _yaml(mv: MissingValues) -> str:
    out = f"        missing_values: {orjson.dumps(list(mv.default)).decode()}\n"
    if mv.by_feature:
        out += "        missing_values_by_feature: " + orjson.dumps(
            {k: list(v) for k, v in mv.by_feature.items()}).decode() + "\n"
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(nums, nums, cats), min_size=1, max_size=40), d=declared)
def test_declaring_them_is_replacing_them_by_null(rows: list[tuple[Any, Any, Any]],
                                                  d: Any) -> None:
    mv = MissingValues(tuple(d[0]), {k: tuple(v) for k, v in d[1].items()})
    kinds = {"income": "numeric", "age": "numeric", "purpose": "categorical"}
    records = [rec(i, a, b, c) for i, (a, b, c) in enumerate(rows)]
    nulled = [{k: _nulled(v, k, mv, kinds[k]) if k in kinds else v for k, v in r.items()}
              for r in records]
    a = decode(_yaml(mv), records)
    b = decode("", nulled)
    assert np.array_equal(a.numeric, b.numeric, equal_nan=True)
    assert np.array_equal(a.categorical, b.categorical)
    # the reference: the same table, declared or nulled, gives the same profile
    df = pd.DataFrame([{k: r[k] for k in kinds} for r in records]).astype(
        {"income": "float64", "age": "float64", "purpose": object})
    dn = pd.DataFrame([{k: r[k] for k in kinds} for r in nulled]).astype(
        {"income": "float64", "age": "float64", "purpose": object})
    pa_ = build_profile(df, kinds=kinds, missing=mv, bins=4, fine_bins=16)
    pb = build_profile(dn, kinds=kinds, bins=4, fine_bins=16)
    assert pa_.schema == pb.schema
    assert pa_.layout.to_dict() == pb.layout.to_dict()
    assert pa_.sketch.to_dict() == pb.sketch.to_dict()
