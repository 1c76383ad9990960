"""The shipped policies pass ``policy check``; ``explain`` and hot reload behave."""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

import pytest
import yaml

from driftwatch.policy import PolicyWatcher, add_commands, check_files, load_policy
from driftwatch.policy.loader import load_policy_text

ROOT = Path(__file__).resolve().parents[2]
POLICIES = sorted((ROOT / "policies").glob("*.yaml"))


def test_the_policies_folder_has_the_demo_and_the_template():
    assert {p.name for p in POLICIES} >= {"credit-risk-demo.yaml", "template.yaml"}


@pytest.mark.parametrize("path", POLICIES, ids=[p.name for p in POLICIES])
def test_every_shipped_policy_passes_check(path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert check_files([path], out=out, err=err) == 0, err.getvalue()
    assert out.getvalue() == f"ok {path}\n"


@pytest.mark.parametrize("path", POLICIES, ids=[p.name for p in POLICIES])
def test_explain_prints_an_effective_policy_that_checks_and_a_line_per_tier(path: Path) -> None:
    out = io.StringIO()
    assert _cli(["policy", "explain", str(path)], out=out) == 0
    text = out.getvalue()
    effective = load_policy_text(text, file="explained.yaml")  # comments are YAML comments
    assert effective.model_dump() == load_policy(path).model_dump()
    data = yaml.safe_load(text)
    assert data["persistence"].keys() == {"mild", "moderate", "severe"}  # defaults filled in
    english = text.split("# What happens, tier by tier:\n")[1].splitlines()
    assert [line.split(":")[0].strip("# ") for line in english[:4]] == [
        "mild", "moderate", "severe", "data quality"]


def test_the_demo_policy_uses_every_tier_and_safeguard():
    p = load_policy(ROOT / "policies" / "credit-risk-demo.yaml")
    assert (p.actions.mild.type, p.actions.moderate.type, p.actions.severe.type) == (
        "online_update", "shadow", "retrain")
    assert p.actions.severe.argv[:2] == ["python", "examples/retrain_job.py"]
    assert p.model.reference == "data/demo/reference.parquet"
    assert p.data_quality.signals and p.escalation and p.hysteresis.factor < 1
    assert p.persistence.mild > 1 and p.cooldown.severe > 0
    assert p.limits.max_actions_per_day.severe == 1


def test_explain_describes_what_each_tier_does():
    out = io.StringIO()
    _cli(["policy", "explain", str(ROOT / "policies" / "credit-risk-demo.yaml")], out=out)
    text = out.getvalue()
    assert "#   mild: when at least 2 features or model signals reach it among: psi >= 0.1 " \
           "(any feature; income: 0.15); ks >= its calibrated level" in text
    assert "for 2 windows in a row; then update the model online" in text
    assert "|approval_rate abs_change| >= 0.1 (model); acts at once; then retrain" in text
    assert "then no action at severe or below for 14d of event time" in text
    assert "after a person approves" in text


def test_explain_says_a_learner_update_is_for_river_champions_only(tmp_path: Path):
    text = (ROOT / "policies" / "credit-risk-demo.yaml").read_text()
    path = tmp_path / "learner.yaml"
    path.write_text(text.replace("    type: online_update",
                                 "    type: online_update\n    method: learner"))
    out = io.StringIO()
    _cli(["policy", "explain", str(path)], out=out)
    assert ("then update the model online with StandardScaler|LogisticRegression (river "
            "champions only: for any other model the update fails rather than replace it; "
            "method recalibrate updates those) and promote it as a challenger") in out.getvalue()


def test_check_reports_every_bad_file_and_fails(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    bad = tmp_path / "bad.yaml"
    good.write_text((ROOT / "policies" / "template.yaml").read_text())
    bad.write_text((ROOT / "policies" / "template.yaml").read_text()
                   .replace("pane: 1000", "pane: lots").replace("detector: psi", "detector: pis"))
    out, err = io.StringIO(), io.StringIO()
    assert check_files([good, bad], out=out, err=err) == 1
    assert out.getvalue() == f"ok {good}\n"
    lines = err.getvalue().splitlines()
    assert lines[0] == f"{bad}: 2 errors"
    assert sum(line.startswith(f"{bad}:") and ": " in line for line in lines) == 3


def test_explain_of_a_bad_file_fails_with_its_errors(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: driftwatch/v1\nkind: DriftPolicy\n")
    assert _cli(["policy", "explain", str(bad)]) == 1
    assert f"{bad}:1:1: missing required key 'metadata'" in capsys.readouterr().err


def test_watcher_reloads_valid_edits_and_keeps_the_policy_on_bad_ones(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    text = (ROOT / "policies" / "template.yaml").read_text()
    path.write_text(text)
    w = PolicyWatcher(path)
    assert w.check() is None

    _write(path, text.replace("pane: 1000", "pane: -3"))
    assert w.check() is None
    assert (w.errors, w.policy.window.pane) == (1, 1000)
    assert w.last_error is not None and "pane" in str(w.last_error)

    _write(path, text.replace("pane: 1000", "pane: 2000"))
    new = w.check()
    assert new is not None and new.window.pane == 2000 and w.policy is new
    assert (w.errors, w.reloads, w.last_error) == (1, 1, None)

    _write(path, text.replace("pane: 1000", "pane: 2000"))  # same content, new mtime
    assert w.check() is None and w.reloads == 1


def test_watcher_refuses_to_start_on_a_bad_policy(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("kind: nothing\n")
    with pytest.raises(Exception, match="missing required key"):
        PolicyWatcher(path)


def _write(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def _cli(argv: list[str], out: io.StringIO | None = None) -> int:
    parser = argparse.ArgumentParser(prog="driftwatch")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    if out is not None and args.func.__name__ == "run_explain":
        return args.func(args, out=out)
    return args.func(args)


def test_the_demo_policy_decides_with_reasons_that_cite_its_lines():
    from driftwatch.detectors.base import Assessment, SignalResult
    from driftwatch.policy import EngineState, Tier, evaluate

    path = ROOT / "policies" / "credit-risk-demo.yaml"
    policy = load_policy(path)
    lines = path.read_text().splitlines()
    psi_line = next(i for i, s in enumerate(lines, 1)
                    if "thresholds: {mild: 0.10, moderate: 0.25, severe: 0.50}" in s)
    signals = (SignalResult("psi", "drift", 0.62, "debt_to_income"),
               SignalResult("psi", "drift", 0.55, "utilization"),
               SignalResult("gini", "performance", 0.52, details={"change": -0.04}))
    a = Assessment("credit-risk", 1, 0.0, 600.0, 10_000, signals)
    d, _ = evaluate(policy, a, EngineState(), now=600.0)
    assert (d.tier, d.action) == (Tier.SEVERE, "retrain")
    assert d.action_settings["argv"][:2] == ["python", "examples/retrain_job.py"]
    assert d.reasons[0].source == f"{path}:{psi_line}"
    assert [(r.signal, r.feature, str(r.tier)) for r in d.reasons] == [
        ("psi", "debt_to_income", "severe"), ("psi", "utilization", "severe"),
        ("gini", None, "mild")]
    assert policy.calibrated_rates() == {"ks": (0.001,)}
    assert policy.window.pane_size == 1000
