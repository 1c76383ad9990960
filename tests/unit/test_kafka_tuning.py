"""The Kafka source's tuning keys: refused where the connector is read, at the value.

Before, only kafka-python looked at them, when the daemon built its consumer, and the source
took its TypeError for an unreachable cluster (``Kafka not reachable (TypeError);
retrying``) for ever; ``policy check --connector`` passed them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch.connectors.config import parse_connector
from driftwatch.connectors.kafka_settings import KafkaSourceSettings
from driftwatch.connectors.kafka_tuning import INT32_MAX, TUNING_KEYS
from driftwatch.errors import ConnectorError

HEAD = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: k}
source:
  kind: kafka
  connection:
    bootstrap_servers: ['k:9092']
"""
TAIL = """\
  streams:
    predictions:
      topic: credit.predictions
      fields:
        event_id: id
        event_time: ts
        score: p
"""


def connector_text(**values: Any) -> str:
    lines = "".join(f"    {k}: {yaml.safe_dump(v, default_flow_style=True).split(chr(10))[0]}\n"
                    for k, v in values.items())
    return HEAD + lines + TAIL


def settings_of(text: str) -> KafkaSourceSettings:
    return KafkaSourceSettings.from_connector(parse_connector(text, file="c.yaml"))


def located(text: str, key: str) -> ConnectorError:
    """The error reading ``text``, checked to point at ``key``'s value."""
    with pytest.raises(ConnectorError) as info:
        parse_connector(text, file="c.yaml")
    err = info.value
    line_no = next(n for n, ln in enumerate(text.splitlines(), 1)
                   if ln.startswith(f"    {key}:"))
    assert (err.file, err.line, err.col) == ("c.yaml", line_no, len(f"    {key}: ") + 1)
    assert err.path == f"source.connection.{key}"
    return err


BAD = [  # key, value, expected message, found
    ("session_timeout_ms", "45s", "session_timeout_ms must be a whole number of milliseconds "
                                  "from 3001 to 2147483647", "'45s'"),
    ("session_timeout_ms", 3000, "from 3001", "3000"),
    ("session_timeout_ms", 45000.0, "whole number", "45000.0"),
    ("session_timeout_ms", True, "whole number", "true"),
    ("fetch_max_wait_ms", -1, "fetch_max_wait_ms must be a whole number of milliseconds from 0 "
                              "to 29999", "-1"),
    ("fetch_max_wait_ms", 30000, "to 29999", "30000"),
    ("fetch_max_wait_ms", "500", "whole number", "'500'"),
    ("max_partition_fetch_bytes", 0, "max_partition_fetch_bytes must be a whole number of bytes "
                                     "from 1 to 2147483647", "0"),
    ("max_partition_fetch_bytes", INT32_MAX + 1, "bytes from 1", str(INT32_MAX + 1)),
    ("max_partition_fetch_bytes", "1MB", "bytes from 1", "'1MB'"),
    ("reconnect_backoff_max_ms", 0, "reconnect_backoff_max_ms must be a whole number", "0"),
    ("reconnect_backoff_max_ms", False, "whole number", "false"),
    ("retry_backoff_s", 0, "retry_backoff_s must be a number of seconds above 0", "0"),
    ("retry_backoff_s", "1s", "seconds above 0", "'1s'"),
    ("retry_backoff_max_s", -5, "retry_backoff_max_s must be a number of seconds above 0", "-5"),
    ("retry_backoff_max_s", 0.1, "retry_backoff_max_s must be at least retry_backoff_s",
     "0.1 < 0.5"),
    ("give_up_after_s", "never", "give_up_after_s must be a number of seconds above 0 (or null",
     "'never'"),
    ("give_up_after_s", float("inf"), "seconds above 0", "inf"),
    ("commit_timeout_s", True, "commit_timeout_s must be a number of seconds above 0", "true"),
    ("commit_timeout_s", [30], "seconds above 0", "a list"),
    ("dead_letter_timeout_s", float("nan"), "dead_letter_timeout_s must be a number of seconds",
     "nan"),
    ("dead_letter_timeout_s", 0.0, "seconds above 0", "0.0"),
    ("auto_offset_reset", "smallest", "auto_offset_reset must be earliest or latest",
     "'smallest'"),
    ("auto_offset_reset", None, "earliest or latest", "nothing (null)"),
]


@pytest.mark.parametrize(("key", "value", "message", "found"), BAD)
def test_a_bad_tuning_value_is_refused_at_its_place_in_the_file(
        key: str, value: Any, message: str, found: str) -> None:
    err = located(connector_text(**{key: value}), key)
    assert message in err.message
    assert err.found == found


def test_every_tuning_key_is_in_the_table() -> None:
    assert {k for k, *_ in BAD} == set(TUNING_KEYS)


def test_a_backoff_above_the_default_maximum_points_at_the_backoff() -> None:
    err = located(connector_text(retry_backoff_s=60), "retry_backoff_s")
    assert err.message == "retry_backoff_max_s must be at least retry_backoff_s"


def test_good_values_reach_the_settings() -> None:
    s = settings_of(connector_text(
        session_timeout_ms=6000, fetch_max_wait_ms=0, max_partition_fetch_bytes=INT32_MAX,
        reconnect_backoff_max_ms=1, retry_backoff_s=1, retry_backoff_max_s=1,
        give_up_after_s=None, commit_timeout_s=0.25, dead_letter_timeout_s=5,
        auto_offset_reset="latest"))
    assert (s.session_timeout_ms, s.fetch_max_wait_ms, s.retry_backoff_s,
            s.give_up_after_s, s.auto_offset_reset) == (6000, 0, 1, None, "latest")


def test_settings_built_in_code_are_checked_too() -> None:
    with pytest.raises(ConnectorError, match="session_timeout_ms") as info:
        replace(settings_of(connector_text()), session_timeout_ms="45s")
    assert (info.value.path, info.value.found) == ("session_timeout_ms", "'45s'")


def _millis(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


_seconds = st.floats(1e-3, 1e6, allow_nan=False) | st.integers(1, 10**6)
VALID: dict[str, st.SearchStrategy[Any]] = {
    "auto_offset_reset": st.sampled_from(["earliest", "latest"]),
    "fetch_max_wait_ms": _millis(0, 29_999),
    "max_partition_fetch_bytes": _millis(1, INT32_MAX),
    "session_timeout_ms": _millis(3001, INT32_MAX),
    "reconnect_backoff_max_ms": _millis(1, INT32_MAX),
    "retry_backoff_s": st.floats(1e-3, 30, allow_nan=False) | st.integers(1, 30),
    "retry_backoff_max_s": st.floats(30, 1e6, allow_nan=False) | st.integers(30, 10**6),
    "give_up_after_s": st.none() | _seconds,
    "commit_timeout_s": _seconds,
    "dead_letter_timeout_s": _seconds,
}
_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=8)
_NOT_A_NUMBER = (_TEXT | st.booleans() | st.lists(st.integers(), max_size=2)
                 | st.dictionaries(st.text("abc", max_size=3), st.integers(), max_size=1))


def _wrong_type(key: str) -> st.SearchStrategy[Any]:
    if key == "auto_offset_reset":
        return (st.integers() | st.booleans() | st.none()
                | _TEXT.filter(lambda t: t not in ("earliest", "latest")))
    wrong = _NOT_A_NUMBER
    if key.endswith(("_ms", "_bytes")):  # a whole number: a float is the wrong type too
        wrong = wrong | st.floats(allow_nan=False, allow_infinity=False)
    if key != "give_up_after_s":
        wrong = wrong | st.none()
    return wrong


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_valid_value_passes(data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(VALID)))
    value = data.draw(VALID[key])
    got = getattr(settings_of(connector_text(**{key: value})), key)
    assert got == value


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_any_value_of_the_wrong_type_is_a_located_error(data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(VALID)))
    value = data.draw(_wrong_type(key))
    err = located(connector_text(**{key: value}), key)
    assert err.message.startswith(f"{key} must be")
