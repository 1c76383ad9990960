"""Connector definitions: what loads, and what a user is told when it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftwatch.connectors.config import load_connector, load_connectors, parse_connector
from driftwatch.errors import ConnectorError
from driftwatch.schema import FeatureSchema
from driftwatch.testing.credit import credit_connector_yaml, credit_schema

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: credit-demo}
source:
  kind: file
  streams:
    predictions:
      paths: [data/demo/predictions.jsonl.gz]
      fields:
        event_id: application_id
        event_time: {path: ts, unit: auto}
        features:
          income: {path: applicant.income, type: numeric}
          purpose: loan.purpose
        score: model.score
        proba: model.proba
        model_version: model.version
        decision: {path: decision, approve: [approve, approved, 1, true]}
        segment: channel
        exposure: loan.amount
        metrics: {revenue: loan.fee}
    outcomes:
      paths: [data/demo/outcomes.jsonl.gz]
      fields:
        event_id: application_id
        event_time: {path: outcome_ts}
        label: {path: defaulted, bad: [1, true, bad, default]}
dead_letter: {path: dead_letter.jsonl}
"""

REFERENCE = FeatureSchema(
    numeric=("income", "age"), categorical=("purpose",), levels=(("car", "home"),)
)


def where(text: str, snippet: str) -> tuple[int, int]:
    """1-based line and column of ``snippet`` in ``text``."""
    for n, line in enumerate(text.splitlines(), 1):
        if snippet in line:
            return n, line.index(snippet) + 1
    raise AssertionError(snippet)


def error_of(text: str) -> ConnectorError:
    with pytest.raises(ConnectorError) as info:
        parse_connector(text, file="c.yaml")
    return info.value


def test_valid_connector_maps_every_field() -> None:
    c = parse_connector(GOOD, file="c.yaml")
    assert c.name == "credit-demo" and c.kind == "file"
    pred, out = c.streams
    assert (pred.name, pred.role, out.role) == ("predictions", "predictions", "outcomes")
    assert pred.paths == ("data/demo/predictions.jsonl.gz",)
    assert [(f.name, f.path.text, f.kind) for f in pred.features or ()] == [
        ("income", "applicant.income", "numeric"),
        ("purpose", "loan.purpose", None),
    ]
    assert pred.event_time.unit == "auto" and out.event_time.path.text == "outcome_ts"
    assert pred.decision is not None and pred.decision.approve == {"approve", "approved", "1",
                                                                   "true"}
    assert out.label is not None and out.label.bad == {"1", "true", "bad", "default"}
    assert out.label.required and out.features == ()
    assert pred.metrics[0][0] == "revenue" and pred.metrics[0][1].text == "loan.fee"
    assert c.dead_letter_path("/state") == Path("/state/dead_letter.jsonl")


def test_shipped_demo_connector_loads_and_matches_the_generated_features() -> None:
    c = load_connector(REPO / "connectors" / "demo-file.yaml")
    schema = c.schema_for(credit_schema())
    assert schema.names == credit_schema().names


def test_unknown_key_names_file_line_col_and_suggests_the_nearest() -> None:
    text = GOOD.replace("        score: model.score", "        scroe: model.score")
    err = error_of(text)
    line, col = where(text, "scroe")
    assert (err.file, err.line, err.col) == ("c.yaml", line, col)
    assert "unknown key 'scroe'" in err.message
    assert err.hint == "did you mean 'score'?"
    assert err.path == "source.streams.predictions.fields.scroe"
    assert str(err).startswith(f"c.yaml:{line}:{col}: unknown key 'scroe'")
    assert f"{line} |         scroe: model.score" in str(err)


def test_misspelt_choice_lists_valid_ones_and_what_was_found() -> None:
    text = GOOD.replace("unit: auto", "unit: msec")
    err = error_of(text)
    assert (err.line, err.col) == where(text, "msec")
    assert "expected one of 'auto', 's', 'ms', 'us', 'ns', 'min', 'h', 'd', 'iso'" in err.message
    assert err.found == "'msec'"


def test_wrong_type_says_expected_and_found() -> None:
    text = GOOD.replace("score: model.score", "score: 5")
    err = error_of(text)
    assert (err.line, err.col) == where(text, "5")
    assert "expected a dotted path or a mapping" in err.message and err.found == "5"
    text = GOOD.replace("{path: applicant.income, type: numeric}", "{path: 12, type: numeric}")
    err = error_of(text)
    assert (err.line, err.col) == where(text, "12")
    assert err.message == "expected text" and err.found == "12"


def test_missing_required_key_points_at_its_parent_mapping() -> None:
    text = GOOD.replace("        event_id: application_id\n        event_time: {path: ts, "
                        "unit: auto}\n", "        event_time: {path: ts, unit: auto}\n")
    err = error_of(text)
    assert "missing required key 'event_id'" in err.message
    assert (err.line, err.col) == where(text, "event_time: {path: ts")  # the `fields` mapping
    assert err.path == "source.streams.predictions.fields.event_id"


def test_several_problems_are_all_listed_first_in_document_order() -> None:
    text = GOOD.replace("kind: file", "kind: fil").replace("segment: channel", "segmnt: channel")
    err = error_of(text)
    line, col = where(text, "segmnt")
    assert err.line == 5 and f"also c.yaml:{line}:{col}: unknown key 'segmnt'" in str(err)


def test_features_must_be_infer_or_a_mapping() -> None:
    err = error_of(GOOD.replace(
        "        features:\n          income: {path: applicant.income, type: numeric}\n"
        "          purpose: loan.purpose\n", "        features: infr\n"))
    assert "expected 'infer' or a mapping" in err.message and err.hint == "did you mean 'infer'?"


def test_yaml_syntax_error_is_a_located_connector_error() -> None:
    err = error_of("apiVersion: driftwatch/v1\nsource: [1,\n")
    assert err.file == "c.yaml" and err.line is not None and "YAML syntax error" in err.message


def test_kafka_source_passes_connection_and_topics_through() -> None:
    text = GOOD.replace("kind: file", "kind: kafka\n  connection: {bootstrap_servers: "
                        "['k:9092'], group_id: dw}")
    text = text.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                        "      topic: {name: credit.predictions}\n")
    text = text.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                        "      topic: credit.outcomes\n")
    c = parse_connector(text)
    assert c.connection == {"bootstrap_servers": ["k:9092"], "group_id": "dw"}
    assert c.streams[0].topic == {"name": "credit.predictions"}
    assert [s.topic_name for s in c.streams] == ["credit.predictions", "credit.outcomes"]


def test_a_dead_letter_topic_on_a_file_source_is_a_located_error() -> None:
    # a file source writes dead letters to a file only: the topic was dropped, and with
    # no path no dead letter was kept at all
    text = GOOD.replace("dead_letter: {path: dead_letter.jsonl}",
                        "dead_letter: {topic: credit.dead}")
    err = error_of(text)
    assert err.message == "dead_letter.topic is only for kind: kafka"
    assert err.hint == "write dead_letter: {path: dead_letter.jsonl}"
    assert (err.line, err.col) == where(text, "topic: credit.dead")
    kafka = GOOD.replace("kind: file", "kind: kafka\n  connection: {bootstrap_servers: k:9092}")
    kafka = kafka.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                          "      topic: credit.predictions\n")
    kafka = kafka.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                          "      topic: credit.outcomes\n")
    kafka = kafka.replace("dead_letter: {path: dead_letter.jsonl}",
                          "dead_letter: {topic: credit.dead}")
    assert parse_connector(kafka).dead_letter_topic == "credit.dead"


def test_connector_metadata_labels_are_an_unknown_key() -> None:
    # they were accepted and dropped: nothing (metrics, logs, reports) ever showed them
    text = GOOD.replace("metadata: {name: credit-demo}",
                        "metadata: {name: credit-demo, labels: {team: risk}}")
    err = error_of(text)
    assert err.message == "unknown key 'labels'"
    assert (err.line, err.col) == where(text, "labels:")


def test_a_topic_key_nothing_reads_is_a_located_error() -> None:
    # `partitions:` was accepted and dropped: the source consumed every partition anyway
    text = GOOD.replace("kind: file", "kind: kafka\n  connection: {bootstrap_servers: k:9092}")
    text = text.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                        "      topic: {name: credit.predictions, partitions: [0, 1]}\n")
    text = text.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                        "      topic: credit.outcomes\n")
    err = error_of(text)
    assert err.message.startswith("unknown key 'partitions' in topic: only 'name' is read")
    assert (err.line, err.col) == where(text, "partitions:")
    assert err.hint == "write topic: <name>"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("kind: file", "kind: kafka", "missing required key 'topic'"),
        ("kind: file", "kind: file\n  connection: {a: 1}", "connection is only for kind: kafka"),
        ("    outcomes:\n", "    labels:\n", "cannot tell whether stream 'labels'"),
        ("        label: {path: defaulted, bad: [1, true, bad, default]}\n", "",
         "an outcomes stream needs a label"),
        ("{path: outcome_ts}", "{path: outcome_ts, source: kafka_timestamp}",
         "event_time needs a path, or source: kafka_timestamp, arrival or order (not both)"),
        ("revenue: loan.fee", "Revenue: loan.fee", "must be snake_case"),
        ("event_id: application_id\n        event_time: {path: ts",
         "event_id: a..b\n        event_time: {path: ts", "expected a dotted path"),
        ("bad: [1, true, bad, default]", "bad: [1], good: [1]", "both bad and good"),
        ("bad: [1, true, bad, default]", "bad: [1], pending: [current, 1]",
         "a pending label value cannot also be bad or good"),
        ("apiVersion: driftwatch/v1", "apiVersion: driftwatch/v2", "expected one of"),
    ],
)
def test_semantic_errors_are_located(old: str, new: str, message: str) -> None:
    assert old in GOOD
    err = error_of(GOOD.replace(old, new, 1))
    assert message in str(err)
    assert err.file == "c.yaml" and err.line is not None and err.col is not None


def test_schema_for_checks_explicit_features_against_the_reference() -> None:
    c = parse_connector(GOOD.replace("          purpose: loan.purpose\n",
                                     "          purpose: loan.purpose\n          age: a.age\n"))
    schema = c.schema_for(REFERENCE)
    assert schema is REFERENCE  # names, kinds and levels come from the reference
    with pytest.raises(ConnectorError, match="feature 'incme' is not in the reference") as info:
        parse_connector(GOOD.replace("income: {path", "incme: {path")).schema_for(REFERENCE)
    assert info.value.hint == "did you mean 'income'?"
    assert info.value.line == where(GOOD, "income: {path")[0]
    with pytest.raises(ConnectorError, match="is categorical in the reference"):
        parse_connector(GOOD.replace("purpose: loan.purpose",
                                     "purpose: {path: loan.purpose, type: numeric}")
                        ).schema_for(REFERENCE)


def test_a_reference_column_the_connector_does_not_map_is_a_located_error() -> None:
    # it used to pass here and end in an IndexError when the first batch was sketched
    with pytest.raises(ConnectorError) as info:
        parse_connector(GOOD, file="c.yaml").schema_for(REFERENCE)
    err = info.value
    assert err.message == "the reference has feature columns this connector does not map: age"
    assert err.hint == ("map each under features (or write features: infer), or drop those "
                        "columns from the reference table")
    assert (err.file, err.line) == ("c.yaml", where(GOOD, "features:")[0])


def test_infer_takes_every_reference_feature_and_needs_a_reference() -> None:
    c = parse_connector(GOOD.replace(
        "        features:\n          income: {path: applicant.income, type: numeric}\n"
        "          purpose: loan.purpose\n", "        features: infer\n"))
    assert c.schema_for(REFERENCE) is REFERENCE
    resolved = c.resolved(REFERENCE).streams[0].features or ()
    assert [(f.name, f.path.text, f.kind) for f in resolved] == [
        ("income", "income", "numeric"), ("age", "age", "numeric"),
        ("purpose", "purpose", "categorical")]
    with pytest.raises(ConnectorError, match="features: infer needs a reference profile"):
        c.schema_for(None)


def test_without_reference_explicit_types_define_the_schema() -> None:
    c = parse_connector(GOOD.replace("purpose: loan.purpose",
                                     "purpose: {path: loan.purpose, type: categorical}"))
    s = c.schema_for(None)
    assert (s.numeric, s.categorical) == (("income",), ("purpose",))
    with pytest.raises(ConnectorError, match="needs a type"):
        parse_connector(GOOD).schema_for(None)


def test_load_connectors_reads_a_folder_and_rejects_duplicate_names(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(credit_connector_yaml("p.jsonl", "o.jsonl"))
    (tmp_path / "notes.txt").write_text("not a connector")
    assert list(load_connectors(tmp_path)) == ["credit-test"]
    (tmp_path / "b.yaml").write_text(credit_connector_yaml("p.jsonl", "o.jsonl"))
    with pytest.raises(ConnectorError, match="also used by"):
        load_connectors(tmp_path)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("isolation_level", "read_comitted", "isolation_level must be read_committed or "
                                         "read_uncommitted"),
    ("align_stall_s", "0", "align_stall_s must be a number of seconds above 0"),
])
def test_a_bad_kafka_tuning_value_is_located(key: str, value: str, message: str) -> None:
    from driftwatch.connectors.kafka_settings import KafkaSourceSettings

    text = GOOD.replace("kind: file", "kind: kafka\n  connection:\n    bootstrap_servers: "
                        f"['k:9092']\n    group_id: dw\n    {key}: {value}")
    text = text.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                        "      topic: credit.predictions\n")
    text = text.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                        "      topic: credit.outcomes\n")
    with pytest.raises(ConnectorError, match=message) as info:
        KafkaSourceSettings.from_connector(parse_connector(text, file="c.yaml"))
    assert info.value.file == "c.yaml"
    line, col = where(text, f"{key}: {value}")
    assert (info.value.line, info.value.col) == (line, col + len(key) + 2)  # at the value
    assert KafkaSourceSettings.from_connector(parse_connector(
        text.replace(f"{key}: {value}", "isolation_level: read_uncommitted"))
    ).isolation_level == "read_uncommitted"


def test_a_misspelt_connection_key_is_an_error_where_the_connector_is_read() -> None:
    # it was accepted at load (so `policy check --connector` and replay passed it) and
    # refused only when the daemon built the Kafka source
    text = GOOD.replace("kind: file", "kind: kafka\n  connection:\n    bootstrap_servers: "
                        "['k:9092']\n    group_idd: dw")
    text = text.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                        "      topic: credit.predictions\n")
    text = text.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                        "      topic: credit.outcomes\n")
    with pytest.raises(ConnectorError) as info:
        parse_connector(text, file="c.yaml")
    err = info.value
    assert err.message == "unknown key 'group_idd'"
    assert err.hint == "did you mean 'group_id'?"
    assert (err.file, err.line, err.col) == ("c.yaml", *where(text, "group_idd: dw"))
    assert parse_connector(text.replace("group_idd", "group_id")).connection == {
        "bootstrap_servers": ["k:9092"], "group_id": "dw"}


def test_a_bad_connection_value_is_an_error_where_the_connector_is_read() -> None:
    text = GOOD.replace("kind: file", "kind: kafka\n  connection:\n    bootstrap_servers: "
                        "['k:9092']\n    security_protocol: PLAIN")
    text = text.replace("      paths: [data/demo/predictions.jsonl.gz]\n",
                        "      topic: credit.predictions\n")
    text = text.replace("      paths: [data/demo/outcomes.jsonl.gz]\n",
                        "      topic: credit.outcomes\n")
    with pytest.raises(ConnectorError, match="security_protocol must be one of") as info:
        parse_connector(text, file="c.yaml")
    assert info.value.line == where(text, "security_protocol: PLAIN")[0]
