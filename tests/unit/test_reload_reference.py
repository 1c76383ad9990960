"""A hot-reloaded policy that reads the reference otherwise rebuilds the reference profile.

The reference file does not change; the policy's ``reference:`` block does (the names of a
headerless CSV's columns, ``score_is``, the label's coding). The daemon used to rebuild
the profile only when the file changed, so such an edit had no effect on the bins and
per-class histograms until then, and a restart refused the checkpoint taken on the old
profile. Now the reload brings the profile a restart with the edited policy would build.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from driftwatch.clock import ManualClock
from driftwatch.connectors.config import load_connector
from driftwatch.policy.loader import load_policy_text
from driftwatch.replay import build_monitor
from driftwatch.service.config import parse_service_config
from driftwatch.service.daemon import Service
from driftwatch.service.model import ModelRuntime

NAMES = "[income, age, purpose, score, label]"

CONNECTOR = """\
apiVersion: driftwatch/v1
kind: Connector
metadata: {name: t}
source:
  kind: file
  streams:
    predictions:
      paths: ["PRED"]
      fields:
        event_id: id
        event_time: {path: ts, unit: s}
        features: {income: income, age: age, purpose: purpose}
        score: score
"""

POLICY = """\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: t}
model: {name: credit, reference: ref.csv}
window: {kind: count, pane: 200}
signals:
  - detector: psi
    thresholds: {mild: 0.1}
reference:
  csv: {names: NAMES}
"""

#: (what the edit changes, the edited reference: block's tail)
EDITS = [
    ("csv names", "  csv: {names: [age, income, purpose, score, label]}\n"),
    ("score_is", f"  csv: {{names: {NAMES}}}\n  score_is: p_good\n"),
    ("label coding", f"  csv: {{names: {NAMES}}}\n"
                     "  label: {column: label, bad: [0], good: [1]}\n"),
]


def _policy(tail: str) -> str:
    return POLICY.replace("  csv: {names: NAMES}\n", tail)


@pytest.fixture
def service(tmp_path: Path) -> Service:
    rng = np.random.default_rng(3)
    n = 800
    pd.DataFrame({"income": rng.lognormal(10, 0.5, n), "age": rng.integers(18, 80, n),
                  "purpose": rng.choice(["car", "home", "edu"], n),
                  "score": rng.uniform(0.01, 0.6, n).round(4),
                  "label": rng.integers(0, 2, n)}).to_csv(
        tmp_path / "ref.csv", index=False, header=False)
    (tmp_path / "pred.jsonl").write_text("".join(
        f'{{"id": "a{i}", "ts": {i}, "income": 30000, "age": 40, "purpose": "car", '
        f'"score": 0.2}}\n' for i in range(20)))
    (tmp_path / "conn.yaml").write_text(CONNECTOR.replace("PRED", str(tmp_path / "pred.jsonl")))
    (tmp_path / "pol.yaml").write_text(_policy(f"  csv: {{names: {NAMES}}}\n"))
    cfg = parse_service_config("models:\n  - {connector: conn.yaml, policy: pol.yaml}\n"
                               f"state_dir: {tmp_path / 'state'}\n", base_dir=tmp_path)
    svc = Service(cfg, clock=ManualClock(0.0))
    rt = ModelRuntime.open(cfg.models[0], state_dir=cfg.state_dir, base_dir=tmp_path,
                           clock=svc.clock)
    svc.runtimes.append(rt)
    svc.metrics.register_model(rt.name, rt.monitor.profile.schema.names)
    return svc


def _edit(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()  # a new mtime even on a coarse clock
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def _restarted_fingerprint(tmp_path: Path, text: str) -> str:
    """What a start with the edited policy builds: the profile the reload must bring."""
    policy = load_policy_text(text, file=str(tmp_path / "pol.yaml"))
    monitor = build_monitor(policy, reference=tmp_path / "ref.csv", base_dir=tmp_path,
                            connector=load_connector(tmp_path / "conn.yaml"))
    return monitor.profile.fingerprint


def _reload(svc: Service) -> None:
    svc._reload_policies()  # the scheduler's job
    svc.inbox.drain()  # the loop applies what it posted


@pytest.mark.parametrize("what, tail", EDITS, ids=[e[0] for e in EDITS])
def test_a_reload_that_reads_the_reference_otherwise_rebuilds_the_profile(
        service: Service, tmp_path: Path, what: str, tail: str):
    rt = service.runtimes[0]
    before = rt.monitor.profile.fingerprint
    text = _policy(tail)
    want = _restarted_fingerprint(tmp_path, text)
    assert want != before, f"the {what} edit must make another profile"
    _edit(tmp_path / "pol.yaml", text)
    _reload(service)
    assert rt.monitor.profile.fingerprint == want
    assert rt.monitor.policy is rt.watcher.policy and rt.watcher.reloads == 1
    refreshed = service.metrics["reference_refreshes_total"].labels(model=rt.name)
    assert refreshed._value.get() == 1
    _reload(service)  # nothing changed since: nothing rebuilt again
    assert refreshed._value.get() == 1 and rt.monitor.profile.fingerprint == want


def test_a_reload_that_leaves_the_reference_alone_keeps_the_profile(
        service: Service, tmp_path: Path):
    rt = service.runtimes[0]
    profile = rt.monitor.profile
    _edit(tmp_path / "pol.yaml", _policy(f"  csv: {{names: {NAMES}}}\n").replace(
        "mild: 0.1", "mild: 0.12"))
    _reload(service)
    assert rt.monitor.profile is profile and rt.watcher.reloads == 1
    assert rt.monitor.policy.signals[0].thresholds.mild == 0.12


def test_an_edit_the_reference_cannot_be_read_with_is_refused_and_the_policy_kept(
        service: Service, tmp_path: Path, caplog: pytest.LogCaptureFixture):
    rt = service.runtimes[0]
    running, profile = rt.monitor.policy, rt.monitor.profile
    _edit(tmp_path / "pol.yaml", _policy("  csv: {names: [income, age, purpose]}\n"))
    with caplog.at_level(logging.ERROR, logger="driftwatch.service"):
        _reload(service)
        _reload(service)  # the same content: refused once, not on every tick
    assert rt.monitor.policy is running and rt.watcher.policy is running
    assert rt.monitor.profile is profile
    errors = service.metrics["policy_reload_errors_total"].labels(model=rt.name)
    assert errors._value.get() == 1
    [line] = [r.getMessage() for r in caplog.records if "policy edit refused" in r.getMessage()]
    assert "cannot read the reference" in line and "pol.yaml" in line


def test_a_champion_adopted_from_the_registry_overrides_a_changed_reference_file(
        service: Service, tmp_path: Path):
    rt = service.runtimes[0]
    profile = rt.monitor.profile
    rt.adopt_reference(profile, champion="2")  # as a promotion hands it over
    ref = pd.read_csv(tmp_path / "ref.csv", header=None)
    ref[0] = ref[0] * 1.5  # incomes half as high again: another profile
    ref.to_csv(tmp_path / "ref.csv", index=False, header=False)
    _edit(tmp_path / "ref.csv", (tmp_path / "ref.csv").read_text())
    service._refresh_references()  # the scheduler's job
    service.inbox.drain()
    assert rt.monitor.profile is profile
    rt.champion = None  # judged on the file: the same change is adopted
    rt._ref_stamp = None
    service._refresh_references()
    service.inbox.drain()
    assert rt.monitor.profile.fingerprint != profile.fingerprint


def _second_reference(tmp_path: Path) -> str:
    """``ref2.csv``: another sample of the same columns; the edited policy text naming it."""
    rng = np.random.default_rng(11)
    n = 800
    pd.DataFrame({"income": rng.lognormal(10.4, 0.6, n), "age": rng.integers(18, 80, n),
                  "purpose": rng.choice(["car", "home", "edu"], n),
                  "score": rng.uniform(0.01, 0.6, n).round(4),
                  "label": rng.integers(0, 2, n)}).to_csv(
        tmp_path / "ref2.csv", index=False, header=False)
    return _policy(f"  csv: {{names: {NAMES}}}\n").replace("reference: ref.csv",
                                                           "reference: ref2.csv")


def test_a_reload_that_names_another_reference_file_reads_it(
        service: Service, tmp_path: Path):
    rt = service.runtimes[0]
    text = _second_reference(tmp_path)
    policy = load_policy_text(text, file=str(tmp_path / "pol.yaml"))
    want = build_monitor(policy, reference=tmp_path / "ref2.csv", base_dir=tmp_path,
                         connector=load_connector(tmp_path / "conn.yaml")).profile.fingerprint
    assert want != rt.monitor.profile.fingerprint
    _edit(tmp_path / "pol.yaml", text)
    _reload(service)
    assert rt.monitor.profile.fingerprint == want
    assert rt.reference_path == tmp_path / "ref2.csv"  # the file watched for changes now


def test_a_champion_adopted_from_the_registry_overrides_a_reloaded_reference_file(
        service: Service, tmp_path: Path):
    rt = service.runtimes[0]
    profile = rt.monitor.profile
    rt.adopt_reference(profile, champion="2")  # as a promotion hands it over
    _edit(tmp_path / "pol.yaml", _second_reference(tmp_path))
    _reload(service)
    assert rt.monitor.profile is profile and rt.watcher.reloads == 1
    assert rt.reference_path == tmp_path / "ref2.csv"  # what actions and a restart read


def test_a_reload_naming_a_reference_file_that_is_not_there_is_refused(
        service: Service, tmp_path: Path):
    rt = service.runtimes[0]
    running, profile = rt.monitor.policy, rt.monitor.profile
    _edit(tmp_path / "pol.yaml", _policy(f"  csv: {{names: {NAMES}}}\n").replace(
        "reference: ref.csv", "reference: missing.csv"))
    _reload(service)
    assert rt.monitor.policy is running and rt.monitor.profile is profile
    assert rt.reference_path == tmp_path / "ref.csv"
