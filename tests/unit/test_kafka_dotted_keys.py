"""A JSON key with dots on a Kafka stream (``"default.payment.next.month": 0``): files read
it whole (their decoders are built after the probe), a Kafka stream's decoders are built
before any record and read the path as nested, so the field reads as absent. ``init
--kafka-topic`` and the daemon's first-records probe say so, with the fix; no broker here:
the sample's reader is replaced by records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from driftwatch.connectors.config import Connector
from driftwatch.connectors.mapping import (
    FeatureField,
    FieldPath,
    LabelField,
    StreamMapping,
    TimeField,
)
from driftwatch.connectors.probe import flat_key_warnings, probe_records
from driftwatch.onboard.sample import dotted_keys

from ._cli import run_cli


def _records(n: int = 60) -> list[dict[str, Any]]:
    rng = np.random.default_rng(4)
    return [{"ID": 1000 + i, "ts": 1_700_000_000 + 60 * i,
             "PAY_0": int(rng.integers(-2, 8)), "BILL_AMT1": float(rng.normal(5e4, 2e4)),
             "default.payment.next.month": int(rng.integers(0, 2))} for i in range(n)]


def test_init_from_a_topic_warns_of_a_key_with_dots(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    recs = _records()
    pd.DataFrame(recs).drop(columns=["ID", "ts"]).to_csv(tmp_path / "ref.csv", index=False)
    monkeypatch.setattr("driftwatch.onboard.commands.kafka_sample",
                        lambda topic, bootstrap, limit: recs)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"),
                              "--kafka-topic", "taiwan", "--bootstrap", "b:9092",
                              "--label-field", "default.payment.next.month", "--model", "m",
                              "--connector-out", str(tmp_path / "c.yaml"),
                              "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    warning = next(ln for ln in out.splitlines() if ln.startswith("warning: topic taiwan"))
    assert ("its records write default.payment.next.month as one key with dots in it; a "
            "Kafka stream reads a dotted path as nested objects") in warning
    assert "default_payment_next_month" in warning


def test_init_from_a_topic_without_dotted_keys_says_nothing_of_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    recs = [{("default_payment" if k.startswith("default") else k): v for k, v in r.items()}
            for r in _records()]
    pd.DataFrame(recs).drop(columns=["ID", "ts"]).to_csv(tmp_path / "ref.csv", index=False)
    monkeypatch.setattr("driftwatch.onboard.commands.kafka_sample",
                        lambda topic, bootstrap, limit: recs)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "ref.csv"),
                              "--kafka-topic", "t", "--bootstrap", "b:9092",
                              "--label-field", "default_payment", "--model", "m",
                              "--connector-out", str(tmp_path / "c.yaml"),
                              "--policy-out", str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    assert "one key with dots" not in out


def test_dotted_keys_are_found_at_any_depth_but_nesting_is_not_one() -> None:
    recs = [{"a": {"b": 1, "c.d": 2}, "e": 3}, {"f.g": None, "a": {"b": 2}}]
    assert dotted_keys(recs) == ["a.c.d", "f.g"]
    assert dotted_keys([{"a": {"b": {"c": 1}}}]) == []


def _connector() -> Connector:
    s = StreamMapping("predictions", FieldPath.parse("ID"), TimeField(FieldPath.parse("ts")),
                      features=(FeatureField("PAY_0", FieldPath.parse("PAY_0")),
                                FeatureField("late", FieldPath.parse("pay.late.flag"))),
                      label=LabelField(FieldPath.parse("default.payment.next.month")))
    return Connector(name="c", kind="kafka", streams=(s,))


def test_the_kafka_probe_reads_the_path_as_the_decoder_does_and_says_why() -> None:
    recs = [{**r, "pay.late.flag": r["PAY_0"] > 0} for r in _records(20)]
    conn = _connector()
    texts = flat_key_warnings(conn, {"predictions": recs})
    assert [t[:60] for t in texts] == [
        "the predictions records write 'default.payment.next.month' a",
        "the predictions records write 'pay.late.flag' as one key wit"]
    probe = probe_records(conn, None, {"predictions": recs}, flat=False)
    assert probe.absent_features() == {"late": (20, 20, "pay.late.flag")}  # as decoded
    files = probe_records(conn, None, {"predictions": recs})  # a file's probe reads it whole
    assert files.absent_features() == {}
