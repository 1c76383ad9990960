"""The daemon's ``/status``: each model's record counts and bad records by reason.

A model fed three polls (predictions, outcomes and bad records of several reasons), read
back over HTTP, against counts this test keeps of what it fed.
"""

from __future__ import annotations

import http.client
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.clock import ManualClock
from driftwatch.connectors.base import BadRecord, Polled
from driftwatch.policy.loader import load_policy
from driftwatch.replay import monitor_for
from driftwatch.service.config import parse_service_config
from driftwatch.service.daemon import Service
from driftwatch.service.model import ModelRuntime, open_timeline
from driftwatch.windows.panes import WindowSpec
from driftwatch.windows.profile import ReferenceProfile

ROOT = Path(__file__).resolve().parents[2]


def _predictions(first: int, n: int) -> Batch:
    rng = np.random.default_rng(first)
    return Batch.build("predictions", n=n, n_numeric=1,
                       ids=[f"a{i}" for i in range(first, first + n)],
                       event_time=np.arange(first, first + n, dtype=float),
                       numeric=rng.normal(size=(n, 1)), score=rng.uniform(size=n))


def _outcomes(ids: list[int], t: float) -> Batch:
    return Batch.build("outcomes", n=len(ids), ids=[f"a{i}" for i in ids],
                       event_time=np.full(len(ids), t), label=[i % 2 for i in ids])


def _bad(reasons: list[str]) -> list[BadRecord]:
    return [BadRecord(r, "detail", "in.jsonl", i, b"{", stream="predictions")
            for i, r in enumerate(reasons)]


#: (predictions, outcomes, bad records) of each poll
POLLS = [
    (_predictions(0, 30), None, ["missing_id", "missing_id", "bad_time"]),
    (_predictions(30, 20), _outcomes(list(range(10)), 60.0), ["invalid_json"] * 4),
    (None, _outcomes([12, 14, 31, 33, 35], 70.0), ["missing_id", "score_out_of_range"]),
]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    cfg = parse_service_config(
        f"models:\n  - connector: connectors/demo-file.yaml\n"
        f"    policy: policies/credit-risk-demo.yaml\n"
        f"state_dir: {tmp_path / 'state'}\nhttp: {{port: 0}}\n", base_dir=ROOT)
    svc = Service(cfg, clock=ManualClock(0.0))
    profile = ReferenceProfile.build(
        pd.DataFrame({"x": np.random.default_rng(0).normal(size=400)}), numeric=["x"])
    monitor = monitor_for(None, profile, model="credit",
                          window=WindowSpec(kind="count", pane_size=1000))
    rt = ModelRuntime(
        name="credit", config=cfg.models[0], connector=SimpleNamespace(name="c", kind="file"),
        watcher=SimpleNamespace(), monitor=monitor, source=SimpleNamespace(),
        out_dir=tmp_path, timeline=open_timeline(tmp_path), clock=svc.clock)
    svc.runtimes.append(rt)
    for preds, outs, bad in POLLS:
        batches = [b for b in (preds, outs) if b is not None]
        rt.process(Polled(batches=batches, bad=_bad(bad)))
    svc.http = svc._make_http()
    svc.http.start()
    try:
        yield svc
    finally:
        svc.http.stop()


def _status(svc: Service) -> dict:
    assert svc.http is not None
    conn = http.client.HTTPConnection("127.0.0.1", svc.http.port, timeout=5)
    try:
        conn.request("GET", "/status")
        resp = conn.getresponse()
        assert resp.status == 200
        return orjson.loads(resp.read())
    finally:
        conn.close()


def test_status_counts_the_records_fed_and_the_bad_ones_by_reason(service: Service) -> None:
    (model,) = _status(service)["models"]
    events = sum(len(p) for p, _, _ in POLLS if p is not None)
    outcomes = sum(len(o) for _, o, _ in POLLS if o is not None)
    reasons = Counter(r for _, _, bad in POLLS for r in bad)
    assert (events, outcomes, sum(reasons.values())) == (50, 15, 9)  # what was fed
    assert model["bad_by_reason"] == {"bad_time": 1, "invalid_json": 4, "missing_id": 3,
                                      "score_out_of_range": 1} == dict(reasons)
    assert {k: model[k] for k in ("events", "outcomes", "outcome_records", "bad_records",
                                  "records_read")} == {
        "events": events, "outcomes": outcomes, "outcome_records": outcomes,
        "bad_records": sum(reasons.values()), "records_read": events + outcomes + 9}
    assert model["bad_records"] == sum(model["bad_by_reason"].values())
    assert (model["policy_name"], model["policy_owner"]) == (None, None)  # no policy


def test_status_names_the_policys_owner(service: Service) -> None:
    # who to call about this model's drift, as its policy's metadata says
    service.runtimes[0].monitor.policy = load_policy(ROOT / "policies/credit-risk-demo.yaml")
    model = _status(service)["models"][0]
    assert (model["policy_name"], model["policy_owner"]) == ("credit-risk-demo",
                                                             "model-risk@example.com")
