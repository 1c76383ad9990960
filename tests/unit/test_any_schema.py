"""Acceptance: any schema goes through replay and the report, and the invariants hold.

Hypothesis draws a schema (numeric, few-valued integers, booleans, categoricals with 1 to
2,000 levels, constants, all-missing columns; missing values; levels the reference never
saw), a drift, and a stream with an empty stretch where only outcomes arrive (empty panes,
labels-only windows). It writes a reference table, a recording, a connector and a policy
to a temporary folder and runs :func:`driftwatch.replay.replay` (what ``driftwatch replay``
runs) with the report. Then: no exception; every window's sketch rows add up to its events;
PSI is non-negative and equals KL(cur||ref) + KL(ref||cur); every column with counts and
every ``top_bins`` entry has a label; the report draws a label for every bin it shows;
sketches and the profile survive a checkpoint round trip; metrics take every window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from driftwatch.metrics import Metrics
from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.report.features import feature_bins
from driftwatch.report.inputs import load_run
from driftwatch.windows.layout import PAD
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

KINDS = ("numeric", "integer", "boolean", "categorical", "constant", "all_missing")
HOUR = 3600.0
T0 = 1_700_000_000.0


@dataclass(frozen=True)
class Feature:
    kind: str
    levels: int  # categorical only
    missing: float
    drift: bool
    unseen: bool


features = st.builds(
    Feature,
    kind=st.sampled_from(KINDS),
    levels=st.one_of(st.integers(1, 6), st.sampled_from([30, 300, 2000])),
    missing=st.sampled_from([0.0, 0.1, 0.5]),
    drift=st.booleans(),
    unseen=st.booleans(),
)


def _column(f: Feature, rng: np.random.Generator, n: int, live: bool) -> list[Any]:
    shift = live and f.drift
    if f.kind == "numeric":
        vals: list[Any] = (rng.lognormal(3 + shift, 1, n)).tolist()
    elif f.kind == "integer":
        vals = rng.integers(0, 3 + 2 * shift, n).tolist()
    elif f.kind == "boolean":
        vals = (rng.random(n) < (0.7 if shift else 0.3)).tolist()
    elif f.kind == "constant":
        vals = [5.0 + shift] * n
    elif f.kind == "all_missing":
        vals = [None] * n if not live else rng.normal(size=n).tolist()
    else:
        p = 1.0 / np.arange(1, f.levels + 1) ** (0.5 if shift else 1.1)
        vals = [f"v{i}" for i in rng.choice(f.levels, n, p=p / p.sum())]
        if live and f.unseen:
            vals = [f"new{i % 3}" if i % 4 == 0 else v for i, v in enumerate(vals)]
    if f.missing and f.kind != "all_missing":
        for i in np.flatnonzero(rng.random(n) < f.missing):
            # the feeds say "missing" in three ways; a CSV reference only in one
            vals[i] = (None, "", "__absent__")[i % 3] if live and f.kind == "categorical" \
                else None
    return vals


def _write(tmp: Path, feats: list[Feature], seed: int, n_ref: int, n_live: int) -> dict[str, Path]:
    rng = np.random.default_rng(seed)
    names = [f"{f.kind}_{i}" for i, f in enumerate(feats)]
    ref = pd.DataFrame({n: _column(f, rng, n_ref, False) for n, f in zip(names, feats,
                                                                          strict=True)})
    ref["score"] = rng.uniform(size=n_ref)
    ref["label"] = (rng.random(n_ref) < ref["score"]).astype(int)
    ref.to_csv(tmp / "reference.csv", index=False)
    # predictions over 6 hours with a 3-hour hole in the middle; outcomes keep arriving
    t = np.sort(np.r_[rng.uniform(0, 2 * HOUR, n_live // 2),
                      rng.uniform(5 * HOUR, 6 * HOUR, n_live - n_live // 2)]) + T0
    cols = {n: _column(f, rng, n_live, True) for n, f in zip(names, feats, strict=True)}
    score = rng.uniform(size=n_live)
    with (tmp / "predictions.jsonl").open("wb") as fh:
        for i in range(n_live):
            rec: dict[str, Any] = {"id": f"a{i}", "ts": float(t[i]), "score": float(score[i])}
            for n in names:
                v = cols[n][i]
                if v != "__absent__":
                    rec[n] = v
            fh.write(orjson.dumps(rec) + b"\n")
    lag = rng.uniform(0.5 * HOUR, 3 * HOUR, n_live)
    order = np.argsort(t + lag)
    with (tmp / "outcomes.jsonl").open("wb") as fh:
        for i in order:
            fh.write(orjson.dumps({"id": f"a{i}", "ts": float(t[i] + lag[i]),
                                   "bad": int(rng.random() < score[i])}) + b"\n")
    (tmp / "connector.yaml").write_text(f"""\
apiVersion: driftwatch/v1
kind: Connector
metadata: {{name: any-schema}}
source:
  kind: file
  streams:
    predictions:
      paths: ["{tmp}/predictions.jsonl"]
      fields:
        event_id: id
        event_time: {{path: ts, unit: s}}
        features: infer
        score: score
    outcomes:
      paths: ["{tmp}/outcomes.jsonl"]
      fields:
        event_id: id
        event_time: {{path: ts, unit: s}}
        label: {{path: bad, bad: [1], good: [0]}}
""")
    (tmp / "policy.yaml").write_text(f"""\
apiVersion: driftwatch/v1
kind: DriftPolicy
metadata: {{name: any-schema}}
model: {{name: any-schema, reference: "{tmp}/reference.csv"}}
window: {{kind: time, pane: 30m, panes: 2, mode: sliding}}
signals:
  - detector: psi
    features: all
    thresholds: {{mild: 0.10, moderate: 0.25, severe: 0.50}}
  - detector: score_psi
    thresholds: {{mild: 0.10}}
persistence: 1
data_quality:
  signals:
    - detector: missing_rate
      threshold: 0.05
actions: {{mild: alert, moderate: alert, severe: alert}}
""")
    return {"predictions": tmp / "predictions.jsonl", "outcomes": tmp / "outcomes.jsonl"}


def _check_window(res: Any) -> None:
    sk = res.window.sketch
    lay = sk.layout
    num = sk.num_coarse()
    assert (num.sum(axis=1) == sk.n).all()
    assert (sk.cat.sum(axis=1) == sk.n).all()
    assert int(sk.score_fine.sum()) == sk.n
    for counts, labels in ((num, lay.numeric.coarse_labels()),
                           (sk.cat, lay.categorical.column_labels())):
        for row, lab in zip(counts, labels, strict=True):
            assert all(lab[b] != PAD for b in np.flatnonzero(row)), (row, lab)
    a = res.assessment
    by = {(s.signal, s.feature): s for s in a.signals}
    for (name, feat), s in by.items():
        if name not in ("psi", "score_psi"):
            continue
        d = s.details
        kl = (d["kl_cur_ref"], d["kl_ref_cur"]) if name == "score_psi" else (
            by[("kl_cur_ref", feat)].value, by[("kl_ref_cur", feat)].value)
        assert s.value >= 0
        assert math.isclose(s.value, kl[0] + kl[1], rel_tol=0, abs_tol=1e-9)
        for t in d["top_bins"]:
            assert isinstance(t["bin"], str) and t["bin"], t


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    feats=st.lists(features, min_size=1, max_size=5),
    seed=st.integers(0, 2**16),
    n_ref=st.integers(50, 800),
    n_live=st.integers(20, 1200),
)
def test_any_schema_replays_and_reports(
    tmp_path_factory: Any, feats: list[Feature], seed: int, n_ref: int, n_live: int
) -> None:
    tmp = tmp_path_factory.mktemp("any")
    inputs = _write(tmp, feats, seed, n_ref, n_live)
    out = tmp / "out"
    res = replay(tmp / "connector.yaml", [f"{k}={v}" for k, v in inputs.items()], out,
                 policy=tmp / "policy.yaml", progress=False, keep_results=True)
    assert res.summary["events"] == n_live
    assert res.summary["bad_records"] == 0, res.summary["bad_by_reason"]
    assert res.summary["outcomes"] == n_live
    metrics = Metrics(CollectorRegistry())
    prof = ReferenceProfile.load(out / "reference.json.gz")
    assert ReferenceProfile.from_json(prof.to_json()).to_json() == prof.to_json()
    metrics.register_model("any-schema", prof.schema.names)
    for r in res.results:
        _check_window(r)
        sk = r.window.sketch
        assert Sketch.from_dict(sk.layout, orjson.loads(orjson.dumps(
            sk.to_dict(), option=orjson.OPT_SERIALIZE_NUMPY))) == sk
        metrics.record_window("any-schema", r)
    for f in feats:
        event(f"kind {f.kind}")
    empty = [r.window.sketch for r in res.results if r.window.sketch.n == 0]
    event(f"windows without predictions: {bool(empty)}")
    event(f"... of which labels only: {any(sk.lab_n.sum() for sk in empty)}")
    assert (out / "report.html").stat().st_size > 0
    run = load_run(out)
    for rec in read_timeline(out / "timeline.jsonl"):
        for name in rec["features"]:
            b = feature_bins(run, rec, name)
            assert b is not None
            assert len(b.labels) == len(b.cur)
            assert all(lab for lab, c in zip(b.labels, b.cur, strict=True) if c), b
