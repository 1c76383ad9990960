"""Actions recorded before a policy setting was refused still read back as they ran."""

from __future__ import annotations

from driftwatch.actions.context import parse_settings


def test_a_retraining_recorded_with_zero_gpus_reads_back_as_the_one_it_leased():
    s = parse_settings("retrain", {"argv": ["python", "job.py"], "gpus": 0})
    assert s.gpus == 1


def test_an_alert_recorded_with_require_approval_reads_back_without_it():
    s = parse_settings("alert", {"channels": ["ops"], "require_approval": True})
    assert (s.require_approval, s.channels) == (False, ["ops"])
    assert parse_settings("none", {"require_approval": True}).require_approval is False


def test_a_shadow_keeps_its_approval():
    assert parse_settings("shadow", {"require_approval": False}).require_approval is False
    assert parse_settings("shadow", {}).require_approval is True
