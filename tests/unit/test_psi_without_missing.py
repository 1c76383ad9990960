"""``measure: psi_without_missing``: a PSI rule that leaves a feed's missingness to the
data-quality gate, from the policy file to the decision."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftwatch import Monitor
from driftwatch.detectors.base import Assessment, SignalResult
from driftwatch.detectors.divergence import psi
from driftwatch.errors import PolicyError
from driftwatch.policy import EngineState, Tier, evaluate, load_policy_text
from driftwatch.policy.commands import detector_table

HEAD = """apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {name: nomiss}
model: {name: credit, reference: ref.parquet}
window: {kind: count, pane: 1000}
signals:
  - detector: DETECTOR
    features: all
    measure: psi_without_missing
    thresholds: {mild: MILD, moderate: 0.25, severe: 0.50}
actions: {mild: none, moderate: alert, severe: alert}
"""


def policy(detector: str = "psi", mild: str = "0.10"):
    return load_policy_text(HEAD.replace("DETECTOR", detector).replace("MILD", mild),
                            file="nomiss.yaml")


def _psi(value: float, without: float) -> SignalResult:
    return SignalResult("psi", "drift", value, "income", 0.1, 1000, 1000,
                        details={"psi_without_missing": without})


def _tier(pol, sig: SignalResult) -> Tier:
    a = Assessment("credit", 1, 0.0, 1.0, 1000, (sig,))
    decision, _ = evaluate(pol, a, EngineState(), now=1.0)
    return decision.raw_tier


def test_the_rule_compares_psi_without_the_missing_bin() -> None:
    pol = policy()
    assert _tier(pol, _psi(0.30, 0.02)) == Tier.NONE  # all of it was new missingness
    assert _tier(pol, _psi(0.02, 0.30)) == Tier.MODERATE
    a = Assessment("credit", 1, 0.0, 1.0, 1000, (_psi(0.9, 0.6),))
    decision, _ = evaluate(pol, a, EngineState(), now=1.0)
    (reason,) = decision.reasons
    assert (reason.measure, reason.value, reason.tier) == ("psi_without_missing", 0.6,
                                                           Tier.SEVERE)


def test_a_window_without_present_values_has_no_such_number() -> None:
    # NaN (every value missing): nothing to compare, the engine says so and stays calm
    a = Assessment("credit", 1, 0.0, 1.0, 1000, (_psi(2.0, math.nan),))
    decision, _ = evaluate(policy(), a, EngineState(), now=1.0)
    assert decision.raw_tier == Tier.NONE
    assert any("no psi_without_missing" in n for n in decision.notes)


def test_other_detectors_calibrated_levels_and_ranges_are_refused_at_their_line() -> None:
    with pytest.raises(PolicyError) as exc:
        policy(detector="ks")
    assert "nomiss.yaml:9:14" in str(exc.value)
    assert "'ks' does not report psi_without_missing" in str(exc.value)
    with pytest.raises(PolicyError) as exc:
        policy(mild="{calibrated: {false_alarm_rate: 0.01}}")
    assert "a calibrated psi level is of its value, not its psi_without_missing" in str(
        exc.value)
    with pytest.raises(PolicyError) as exc:
        policy(mild="-0.5")
    assert "psi_without_missing is at least 0" in str(exc.value)


def test_the_detector_table_lists_it_for_psi_alone() -> None:
    rows = {r.split("|")[1].strip(" `"): r for r in detector_table().splitlines()[2:]}
    assert rows["psi"].rstrip(" |").endswith("psi_without_missing")
    assert all("psi_without_missing" not in r for n, r in rows.items() if n != "psi")


def _frame(rng: np.random.Generator, n: int, missing: float, shift: float = 0.0
           ) -> pd.DataFrame:
    income = rng.lognormal(10 + shift, 0.5, n)
    income[rng.random(n) < missing] = np.nan
    return pd.DataFrame({"income": income, "score": rng.uniform(0, 1, n)})


def test_new_missingness_trips_psi_but_not_psi_without_missing(tmp_path) -> None:
    rng = np.random.default_rng(7)
    ref = _frame(rng, 20_000, 0.0)
    path = tmp_path / "p.yaml"
    path.write_text(HEAD.replace("DETECTOR", "psi").replace("MILD", "0.10")
                    .replace("{mild: none", "{mild: alert").replace("window: {kind: count, "
                    "pane: 1000}", "window: {kind: count, pane: 1000}\npersistence: 1"))
    mon = Monitor.from_reference(ref, policy=path)
    # 4% of incomes missing, never missing in the reference: PSI alone reads ~0.2
    quiet = mon.assess(_frame(rng, 2000, 0.04))
    row = quiet.signals.query("signal == 'psi' and feature == 'income'").iloc[0]
    assert row["value"] > 0.10
    assert quiet.raw_tier == "none"
    moved = mon.assess(_frame(rng, 2000, 0.04, shift=0.6))
    assert moved.raw_tier == "severe"
    assert {(r.signal, r.measure) for r in moved.reasons} == {("psi", "psi_without_missing")}


@settings(max_examples=150, deadline=None)
@given(ref=st.lists(st.integers(0, 500), min_size=3, max_size=12),
       cur=st.lists(st.integers(0, 500), min_size=3, max_size=12),
       eps=st.sampled_from([1e-4, 1e-6]))
def test_the_number_is_psi_of_the_present_values_alone(ref: list[int], cur: list[int],
                                                       eps: float) -> None:
    # the last bin is the missing one; the number is PSI of the other bins' own shares,
    # written out here from its definition
    w = min(len(ref), len(cur))
    r, c = np.array(ref[:w], float), np.array(cur[:w], float)
    valid = np.ones((1, w), bool)
    valid[0, -1] = False
    got = float(psi(r[None], c[None], valid, eps)[0])
    rp, cp = r[:-1], c[:-1]
    if rp.sum() == 0 or cp.sum() == 0:
        assert math.isnan(got)
        return
    e, a = np.maximum(rp / rp.sum(), eps), np.maximum(cp / cp.sum(), eps)
    e, a = e / e.sum(), a / a.sum()
    want = float(((a - e) * np.log(a / e)).sum())
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_the_report_names_what_a_reason_compared() -> None:
    from driftwatch.report.features import _reason_rows

    rec = {"decision": {"reasons": [
        {"signal": "psi", "feature": "income", "value": 0.3, "threshold": 0.25,
         "tier": "moderate", "kind": "trigger", "measure": "psi_without_missing",
         "source": "p.yaml:9"},
        {"signal": "psi", "feature": "income", "value": 0.6, "threshold": 0.5,
         "tier": "severe", "kind": "trigger", "source": "p.yaml:20"}]}}
    assert [row[0] for row in _reason_rows(rec, "income")] == ["psi_without_missing", "psi"]
