"""The HTML report, built from hand-made run folders that follow ``driftwatch/replay/timeline.py``.

Each test reads the report the way a reviewer (or a browser) would: which sections are
there, what the plots' bars say, that odd feature names print as text, that the same run
gives the same bytes and that the size bound holds.
"""

from __future__ import annotations

import argparse
import re
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest

from driftwatch.batch import Batch
from driftwatch.detectors.bins import BinGeometry
from driftwatch.errors import SourceError
from driftwatch.replay.timeline import sketch_summary
from driftwatch.report import ReportSizeError, build_report, load_run, write_report
from driftwatch.report.commands import add_commands
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch

ODD_NUM = "<script>alert('x')</script> income"
ODD_CAT = 'purpose "quoted" & <b>bold</b>'
LEVELS = ("car", "home", "<i>boat</i>")
SOURCE = "policies/p.yaml"


# -- fixtures ---------------------------------------------------------------------------------
def _frame(rng: np.random.Generator, n: int, shift: float, missing: float) -> pd.DataFrame:
    income = rng.lognormal(10 + shift, 0.5, n)
    income[rng.random(n) < missing] = np.nan
    return pd.DataFrame({
        ODD_NUM: income,
        "age": rng.normal(40, 10, n).round(),
        ODD_CAT: rng.choice([*LEVELS, "plane"], n, p=[0.5, 0.3, 0.15, 0.05]),
        "score": rng.uniform(0, 0.6, n),
        "label": (rng.random(n) < 0.1).astype(int),
        "decision": np.where(rng.random(n) < 0.8, "approve", "decline"),
    })


@pytest.fixture(scope="module")
def profile() -> ReferenceProfile:
    df = _frame(np.random.default_rng(0), 3000, 0.0, 0.0)
    return ReferenceProfile.build(df, numeric=[ODD_NUM, "age"], categorical=[ODD_CAT], top_k=3)


def _sketch(prof: ReferenceProfile, df: pd.DataFrame) -> Sketch:
    n = len(df)
    cat = prof.schema.encode_categorical(0, df[ODD_CAT].to_numpy())[:, None]
    b = Batch.build("predictions", n=n, n_numeric=2, n_categorical=1,
                    numeric=df[[ODD_NUM, "age"]].to_numpy(), categorical=cat,
                    score=df["score"].to_numpy(), decision=np.ones(n, dtype=np.int8))
    sk = Sketch.empty(prof.layout)
    sk.add_batch(b)
    return sk


def _signals(prof: ReferenceProfile, feats: dict[str, Any], k: int) -> list[dict[str, Any]]:
    labels = BinGeometry.of(prof.layout.numeric).coarse_labels[0]
    psi = 0.02 + 0.12 * k
    top = [{"bin": labels[0], "ref": 0.1, "cur": 0.2, "psi": psi / 2},
           {"bin": labels[-1], "ref": 0.0, "cur": feats[ODD_NUM]["missing_share"] or 0.0,
            "psi": psi / 4}]

    def sig(signal: str, group: str, value: float, feature: str | None = None,
            threshold: float | None = None, **details: Any) -> dict[str, Any]:
        return {"signal": signal, "group": group, "value": value, "feature": feature,
                "threshold": threshold, "n_ref": 3000, "n_cur": 1000, "p_value": None,
                "details": details}

    return [
        sig("psi", "drift", psi, ODD_NUM, 0.1, top_bins=top, eps=1e-4),
        sig("ks", "drift", psi / 2, ODD_NUM, 0.1),
        sig("psi", "drift", 0.01, "age", 0.1),
        sig("psi", "drift", 0.03 * k, ODD_CAT, 0.1),
        sig("psi_aggregate", "drift", psi, feature=None),
        sig("score_psi", "confidence", 0.05 * k, threshold=0.1),
        sig("variance_ratio", "confidence", 1 + 0.2 * k, threshold=1.5, ci_low=0.9 + 0.2 * k,
            ci_high=1.1 + 0.2 * k),
        sig("calibration_ratio", "performance", 1 + 0.1 * k, threshold=1.3,
            ci_low=0.8 + 0.1 * k, ci_high=1.2 + 0.1 * k),
        sig("gini", "performance", 0.5 - 0.02 * k, threshold=0.4),
        sig("missing_rate", "data_quality", feats[ODD_NUM]["missing_share"] or 0.0, ODD_NUM,
            0.05),
    ]


_PLAN = [  # tier, action, extra decision fields
    ("none", None, {}),
    ("none", None, {}),
    ("mild", "online_update", {"action_settings": {"learner": "StandardScaler|LogisticRegression",
                                                   "min_labelled": 500}}),
    ("moderate", "shadow", {"requires_approval": True,
                            "action_settings": {"metric": "gini", "margin": 0.01,
                                                "min_labelled": 2000, "max_duration": 1814400.0}}),
    ("severe", "retrain", {"action_settings": {"argv": ["python", "train.py", "--fast"],
                                               "gpus": 1, "time_limit": 7200.0, "retries": 2}}),
    ("none", "alert", {"data_quality_fault": True, "suppressed_by": ["data_quality_gate"]}),
]


def _decision(wid: int, end: float, tier: str, action: str | None, extra: dict[str, Any],
              sigs: list[dict[str, Any]]) -> dict[str, Any]:
    reasons = []
    if tier != "none":
        s = sigs[0]
        reasons.append({"signal": "psi", "group": "drift", "feature": ODD_NUM,
                        "value": s["value"], "threshold": 0.1, "tier": tier,
                        "direction": "above", "source": f"{SOURCE}:12", "kind": "trigger",
                        "measure": "value"})
    if extra.get("data_quality_fault"):
        reasons.append({"signal": "missing_rate", "group": "data_quality", "feature": ODD_NUM,
                        "value": sigs[-1]["value"], "threshold": 0.05, "tier": "none",
                        "direction": "above", "source": f"{SOURCE}:40", "kind": "data_quality"})
    d = {"model": "credit", "window_id": wid, "time": end, "tier": tier, "raw_tier": tier,
         "action": action, "action_settings": {}, "suppressed_by": [],
         "data_quality_fault": False, "requires_approval": False, "reasons": reasons,
         "escalated_from": None, "policy": "demo-policy", "policy_digest": "abc123",
         "notes": []}
    d.update(extra)
    return d


def make_run(tmp: Path, prof: ReferenceProfile, *, executed: bool = True) -> Path:
    rng = np.random.default_rng(1)
    out = tmp / "run"
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for k, (tier, action, extra) in enumerate(_PLAN):
        start = 1_704_067_200.0 + k * 86400
        end = start + 86399
        df = _frame(rng, 1000, 0.15 * k, 0.3 if k == 5 else 0.0)
        sk = _sketch(prof, df)
        feats = sketch_summary(sk)
        sigs = _signals(prof, feats, k)
        rec = {"model": "credit", "window_id": k, "first_index": k * 1000,
               "last_index": k * 1000 + 999, "start_time": start, "end_time": end,
               "start": pd.Timestamp(start, unit="s").strftime("%Y-%m-%dT%H:%M:%SZ"),
               "end": pd.Timestamp(end, unit="s").strftime("%Y-%m-%dT%H:%M:%SZ"),
               "n_events": 1000, "n_bad": 0, "n_late": 0, "n_labelled": 200 * k,
               "n_labelled_bad": 20 * k, "partial": False,
               "score": {"mean": float(sk.score_mean), "var": float(sk.score_var),
                         "approval_rate": 0.8},
               "features": feats, "signals": sigs, "tier": tier,
               "decision": _decision(k, end, tier, action, extra, sigs)}
        lines.append(orjson.dumps(rec, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
                                  | orjson.OPT_SERIALIZE_NUMPY))
    (out / "timeline.jsonl").write_bytes(b"".join(lines))
    summary = {"model": "credit", "reference": prof.fingerprint, "windows": len(_PLAN),
               "events": 6000, "outcomes": 3000, "bad_records": 7,
               "bad_by_reason": {"bad_json": 5, "<missing> event_time": 2},
               "labels": {"joined": 3000, "backlog": 120},
               "label_delay": {"count": 3000, "p50": 30 * 86400.0, "p90": 42 * 86400.0,
                               "max": 45 * 86400.0},
               "label_cohorts": [{"start": 1_704_067_200.0 + d * 86400, "predicted": 1000,
                                  "labelled": 800 - 100 * d, "completeness": 0.8 - 0.1 * d}
                                 for d in range(6)]}
    (out / "summary.json").write_bytes(orjson.dumps(summary, option=orjson.OPT_SORT_KEYS))
    if executed:
        # an audit-trail entry as replay and the daemon export it (actions.jsonl)
        shadow = {"id": 7, "key": "credit:moderate:3", "window_id": 3, "action": "shadow",
                  "state": "succeeded", "approver": "risk-owner",
                  "steps": [{"step": "recorded"}, {"step": "challenger"}, {"step": "promote"}],
                  "mlflow": {"version": "4", "parent_version": "2"},
                  "outcome": {"verdict": "promoted", "version": "4",
                              "reason": "challenger wins by 0.04 >= 0.01"},
                  "shadow": {"champion_version": "2", "challenger_version": "4",
                             "cutoff": 0.25, "score_psi": 0.031, "first_live": 1704300000.0,
                             "last_live": 1704900000.0,
                             "metrics": {"champion": {"gini": 0.41, "labelled": 2400.0,
                                                      "live": 9000.0, "approval_rate": 0.81},
                                         "challenger": {"gini": 0.45, "labelled": 2400.0,
                                                        "live": 9000.0,
                                                        "approval_rate": 0.78}}}}
        (out / "actions.jsonl").write_bytes(orjson.dumps(shadow) + b"\n")
    return out


@pytest.fixture()
def run_dir(tmp_path: Path, profile: ReferenceProfile) -> Path:
    return make_run(tmp_path, profile)


# -- reading the HTML like a browser -----------------------------------------------------------
class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of the document."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def find(self, tag: str, **want: str) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag
                and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in want.items())]


def _histogram_bars(html: str, feature: str, window: int) -> dict[str, list[int]]:
    """``ref``/``cur`` counts of the histogram of ``feature`` in ``window``."""
    start = html.index(f'data-feature="{_attr(feature)}" data-window="{window}"')
    end = html.index("</svg>", start)
    part = Elements(html[html.rindex("<svg", 0, start):end])
    return {s: [int(a["data-count"]) for a in part.find("rect", data_series=s)]
            for s in ("ref", "cur")}


def _attr(s: str) -> str:
    import html as h

    return h.escape(s, quote=True)


# -- tests ----------------------------------------------------------------------------------
def test_run_report_has_every_section_in_order(run_dir: Path, profile: ReferenceProfile) -> None:
    html = write_report(run_dir, reference=profile).read_text()
    ids = [a["id"] for a in Elements(html).find("section")]
    assert ids == ["run-summary", "timeline", "features", "data-quality", "confidence",
                   "performance", "shadow", "retraining", "actions", "versions", "reasons"]


def test_report_is_offline_and_scriptless(run_dir: Path, profile: ReferenceProfile) -> None:
    html = write_report(run_dir, reference=profile).read_text()
    doc = Elements(html)
    assert not doc.find("script") and not doc.find("img")
    # the one link says "no favicon", so a page served over HTTP asks for nothing else
    assert [(a["rel"], a["href"]) for a in doc.find("link")] == [("icon", "data:,")]
    hrefs = [a["href"] for t, a in doc.tags if "href" in a and t != "link"]
    assert hrefs and all(h.startswith("#") for h in hrefs)
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_odd_feature_names_print_as_text(run_dir: Path, profile: ReferenceProfile) -> None:
    html = write_report(run_dir, reference=profile).read_text()
    assert "<script>" not in html and "<b>bold</b>" not in html and "<i>boat</i>" not in html
    doc = Elements(html)
    text = "".join(doc.text)
    assert ODD_NUM in text and ODD_CAT in text
    panels = {a["data-feature"] for a in doc.find("div", class_="feature")}
    assert ODD_NUM in panels  # attribute values round-trip to the exact name
    labels = {a.get("data-label") for a in doc.find("rect", data_series="ref")}
    assert "<i>boat</i>" in labels


def test_histogram_bars_are_the_sketch_counts(run_dir: Path, profile: ReferenceProfile) -> None:
    html = write_report(run_dir, reference=profile).read_text()
    rec = load_run(run_dir).records[5]  # the income feature peaks in the last window
    f = rec["features"][ODD_NUM]
    bars = _histogram_bars(html, ODD_NUM, 5)
    assert bars["cur"] == [*f["bins"], f["missing"]]
    coarse = profile.sketch.num_coarse()[0]
    nc = int(profile.layout.numeric.n_coarse[0])
    assert bars["ref"] == [*coarse[:nc].tolist(), int(coarse[-1])]


def test_categorical_bars_follow_reference_levels(
    tmp_path: Path, profile: ReferenceProfile
) -> None:
    run = make_run(tmp_path, profile)
    html = build_report(load_run(run, reference=profile), decision=4)
    rec = load_run(run).records[4]
    f = rec["features"][ODD_CAT]
    bars = _histogram_bars(html, ODD_CAT, 4)
    levels = list(profile.layout.categorical.levels[0])
    assert bars["cur"] == [f["levels"][lv] for lv in levels] + [f["other"], f["unseen"],
                                                                 f["missing"]]
    assert sum(bars["ref"]) == profile.sketch.n


def test_same_run_same_bytes(run_dir: Path, profile: ReferenceProfile) -> None:
    a = write_report(run_dir, reference=profile).read_bytes()
    b = write_report(run_dir, reference=profile).read_bytes()
    assert a == b
    stamped = build_report(load_run(run_dir, reference=profile), generated_at="2024-05-01T00:00Z")
    assert stamped.replace(" · generated 2024-05-01T00:00Z", "").encode() == a


def test_size_bound_degrades_then_fails(run_dir: Path, profile: ReferenceProfile) -> None:
    run = load_run(run_dir, reference=profile)
    full = build_report(run)
    smaller = build_report(run, max_bytes=len(full.encode()) - 1)
    assert len(smaller.encode()) < len(full.encode())
    assert "Detail reduced to stay under the size bound" in smaller
    with pytest.raises(ReportSizeError, match="over the bound of 1,000"):
        build_report(run, max_bytes=1000)


def test_decision_report_focuses_on_one_window(run_dir: Path, profile: ReferenceProfile) -> None:
    path = write_report(run_dir, reference=profile, decision=3)
    assert path.name == "report-window-3.html"
    html = path.read_text()
    doc = Elements(html)
    ids = [a["id"] for a in doc.find("section")]
    assert "shadow" in ids and "retraining" not in ids
    assert [a["data-window"] for a in doc.find("div", class_="decision")] == ["3"]
    text = " ".join(doc.text)
    assert "promote the challenger if its gini beats the champion by 0.01 or more" in text
    assert "needs human approval" in text
    # the executed shadow: champion and challenger side by side, and the verdict as recorded
    assert doc.find("table", class_="champion-challenger")
    assert "challenger wins by 0.04 >= 0.01" in text
    assert "executed · promoted" in text and "not executed" not in text
    assert "champion v2" in text and "challenger v4" in text
    assert "approval rate at the cut-off" in text and "−0.03" in text.replace("-0.03", "−0.03")
    shadow_html = html[html.index('<section id="shadow"'):]
    shadow_html = shadow_html[: shadow_html.index("</section>")]
    assert "{" not in shadow_html and "None" not in shadow_html  # no Python dicts or Nones


def test_unexecuted_actions_say_dry_run(tmp_path: Path, profile: ReferenceProfile) -> None:
    run = make_run(tmp_path, profile, executed=False)
    doc = Elements(build_report(load_run(run, reference=profile)))
    statuses = {a["class"]: a["data-status"] for a in doc.find("div") if "data-status" in a}
    assert statuses == {"shadow": "dry-run", "retrain": "dry-run"}
    assert "not executed (dry run)" in "".join(doc.text)


def test_reasons_are_exact_with_policy_lines(run_dir: Path, profile: ReferenceProfile) -> None:
    run = load_run(run_dir, reference=profile)
    html = build_report(run, decision=4)
    doc = Elements(html)
    d = run.window(4)["decision"]
    rows = doc.find("tr", class_="reason")
    assert [(r["data-signal"], r["data-source"]) for r in rows] == [
        (x["signal"], x["source"]) for x in d["reasons"]]
    assert repr(d["reasons"][0]["value"]) in html  # printed as recorded, not rounded


def test_data_quality_panel(run_dir: Path, profile: ReferenceProfile) -> None:
    doc = Elements(build_report(load_run(run_dir, reference=profile)))
    bars = {a["data-label"]: int(a["data-count"]) for a in doc.find("rect")
            if a.get("data-label") in ("bad_json", "<missing> event_time")}
    assert bars == {"bad_json": 5, "<missing> event_time": 2}
    assert doc.find("table", class_="dq-faults")
    cells = [a for a in doc.find("rect") if a.get("data-feature") == ODD_NUM
             and a.get("data-max") not in (None, "nan", "0")]
    assert cells and cells[-1]["data-last"] == "5"  # the feed fault, in the last window


def test_timeline_strip_and_signal_values(run_dir: Path, profile: ReferenceProfile) -> None:
    run = load_run(run_dir, reference=profile)
    doc = Elements(build_report(run))
    tiers: list[str] = []
    for a in doc.find("rect"):
        if "data-tier" in a and "data-first" in a:
            tiers += [a["data-tier"]] * (int(a["data-last"]) - int(a["data-first"]) + 1)
    assert tiers == [r["tier"] for r in run.records]
    psi = next(a for a in doc.find("svg") if a.get("data-series") == "max PSI")
    want = [next(s["value"] for s in r["signals"] if s["signal"] == "psi_aggregate")
            for r in run.records]
    assert [float(v) for v in psi["data-values"].split()] == pytest.approx(want, rel=1e-5)
    acts = [(a["data-window"], a["data-action"]) for a in doc.find("g", class_="action")]
    assert acts == [("2", "online_update"), ("3", "shadow"), ("4", "retrain"), ("5", "alert")]


def test_without_reference_shows_current_only(run_dir: Path) -> None:
    doc = Elements(build_report(load_run(run_dir)))
    assert not doc.find("rect", data_series="ref") and doc.find("rect", data_series="cur")
    assert "no reference profile" in "".join(doc.text)


def test_unknown_window_and_missing_timeline(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no window 99"):
        write_report(run_dir, decision=99)
    with pytest.raises(SourceError, match=r"no timeline\.jsonl"):
        write_report(tmp_path / "empty")


def test_report_command(run_dir: Path, profile: ReferenceProfile, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    ref = profile.save(tmp_path / "reference.json.gz")
    parser = argparse.ArgumentParser(prog="driftwatch")
    add_commands(parser.add_subparsers(dest="command"))
    out = tmp_path / "r.html"
    args = parser.parse_args(["report", "--input", str(run_dir), "--decision", "4",
                              "--out", str(out), "--reference", str(ref)])
    assert args.func(args) == 0
    assert out.exists() and "wrote" in capsys.readouterr().out
    assert 'id="retraining"' in out.read_text()


def test_ranking_skips_windows_without_predictions(run_dir: Path, profile: ReferenceProfile):
    """A trailing labels-only window (0 predictions, PSI of emptiness) never ranks a feature."""
    from driftwatch.report.features import ranked_features
    from driftwatch.report.sections import Budget, Context

    path = run_dir / "timeline.jsonl"
    recs = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    last = dict(recs[-1], window_id=len(recs), n_events=0)
    last["signals"] = [dict(s, value=9.0) if s["signal"] == "psi" else s
                       for s in last["signals"]]
    path.write_bytes(path.read_bytes() + orjson.dumps(last) + b"\n")
    run = load_run(run_dir, reference=profile)
    ranked = ranked_features(Context(run, None, Budget()))
    assert ranked and all(run.records[pos]["n_events"] > 0 for _, pos, _, _ in ranked)
    assert all(v is None or v < 9.0 for _, _, v, _ in ranked)


def _retrain_and_its_shadow(out: Path) -> None:
    """A retraining that ran on the pool, and the shadow that judged its version, as the
    audit trail exports them (appended to the run's actions.jsonl)."""
    retrain = {"id": 8, "key": "credit:severe:4", "window_id": 4, "action": "retrain",
               "tier": "severe", "state": "succeeded", "steps": [{"step": "recorded"}],
               "mlflow": {"version": "5", "run_id": "abc123"},
               "outcome": {"alias": "challenger", "shadow_action_id": 9, "version": "5"},
               "job": {"job_id": "000001-retrain-credit-4", "state": "succeeded",
                       "gpus": None, "gpus_requested": 2, "attempts": 1,
                       "submitted_at": 1_704_400_000.0, "started_at": 1_704_400_090.0,
                       "ended_at": 1_704_407_590.0, "exit_code": 0, "time_limit_s": 7200.0}}
    follow = {"id": 9, "key": "credit:severe:4:shadow", "window_id": 4, "action": "shadow",
              "tier": "severe", "state": "succeeded", "parent_id": 8,
              "steps": [{"step": "recorded"}, {"step": "challenger", "status": "done",
                                                "detail": {"version": "5", "created": False}}],
              "mlflow": {"version": "5"},
              "outcome": {"verdict": "discarded", "reason": "no gain"},
              "shadow": {"champion_version": "4", "challenger_version": "5", "metric": "gini",
                         "margin": 0.02, "min_labelled": 1500, "max_duration": None,
                         "metrics": {"champion": {"gini": 0.3887306988672263, "live": 10.0},
                                     "challenger": {"gini": 0.3414695084431487,
                                                    "live": 10.0}}}}
    with (out / "actions.jsonl").open("ab") as fh:
        fh.write(orjson.dumps(retrain) + b"\n" + orjson.dumps(follow) + b"\n")


def test_versions_and_lineage_from_the_outbox(run_dir: Path, profile: ReferenceProfile) -> None:
    _retrain_and_its_shadow(run_dir)
    html = build_report(load_run(run_dir, reference=profile))
    start = html.index('<section id="versions"')
    part = Elements(html[start:html.index("</section>", start)])
    text = " ".join(part.text)
    assert [a["data-version"] for a in part.find("span") if "data-version" in a] == \
        ["2", "4", "5"]
    assert "retraining (action 8, window 4, severe)" in text
    assert "the exported training snapshot" in text and "abc123" in text
    assert "shadow 9 against v4: discarded" in text
    assert "shadow (action" not in text  # shadow 9 judged the retrained v5, made none
    assert "shadow 7 against v2: promoted, approved by risk-owner" in text
    assert "v2 champion before this run" in text
    assert "v4 registered before this run" in text  # the challenger shadow 7 promoted


def test_retraining_shows_its_lease_and_times_in_human_units(
        run_dir: Path, profile: ReferenceProfile) -> None:
    _retrain_and_its_shadow(run_dir)
    html = build_report(load_run(run_dir, reference=profile), decision=4)
    text = " ".join(Elements(html).text)
    assert "GPU lease 2 GPUs, released" in text
    assert "waited in the queue 1 min 30 s" in text
    assert "ran for (lease held) 2 h 5 min" in text and "time limit 2 h" in text
    assert "1704400090" not in html  # no epoch seconds


def test_a_retrainings_shadow_states_the_rule_it_was_judged_by(
        run_dir: Path, profile: ReferenceProfile) -> None:
    """The severe decision's settings are the retraining's; the rule is the shadow's own."""
    _retrain_and_its_shadow(run_dir)
    html = build_report(load_run(run_dir, reference=profile), decision=4)
    start = html.index('<section id="shadow"')
    part = Elements(html[start:html.index("</section>", start)])
    text = " ".join(part.text)
    assert ("after 1,500 labelled events, promote the challenger if its gini beats the "
            "champion by 0.02 or more") in text
    exact = [a["data-exact"] for a in part.find("span") if "data-exact" in a]
    assert exact == ["10.0", "10.0", "0.0", "0.3887306988672263", "0.3414695084431487",
                     repr(0.3414695084431487 - 0.3887306988672263)]


def test_a_features_quality_flags_name_the_gates_level_where_the_gate_held() -> None:
    """The table said 'out_of_range over 0.01' (the detector's own threshold) beside a
    gate whose policy level was 0.10: a reader took 0.01 for the level that held changes."""
    from driftwatch.report.quality import _flags

    def rec(w: int, value: float, reasons: list[dict]) -> dict:
        return {"window_id": w, "signals": [
            {"signal": "out_of_range", "feature": "income", "group": "data_quality",
             "threshold": 0.01, "value": value}], "decision": {"reasons": reasons}}

    gate = {"kind": "data_quality", "signal": "out_of_range", "feature": "income",
            "value": 0.3, "threshold": 0.1}
    recs = [rec(1, 0.0, []), rec(2, 0.05, []), rec(3, 0.3, [gate])]
    assert _flags(recs, "income") == [
        "gate: out_of_range 0.3 > 0.1 (the policy's level) in window 3"]
    assert _flags(recs[:2], "income") == [
        "out_of_range over 0.01 in window 2 (the detector's own threshold; no gate fault)"]
    assert _flags(recs[:1], "income") == []


def test_the_quality_table_lists_the_flagged_features_first(
        run_dir: Path, profile: ReferenceProfile, monkeypatch: pytest.MonkeyPatch) -> None:
    # a wide table (Home Credit's 120 features) put its one faulty feature wherever the
    # features' order put it; the flagged ones now lead, the rest keep their order
    from driftwatch.report.inputs import RunData

    names = RunData.feature_names
    monkeypatch.setattr(RunData, "feature_names", lambda self: names(self)[::-1])
    run = load_run(run_dir, reference=profile)
    html = build_report(run)
    table_html = html[html.index('class="dq-features"'):]
    table_html = table_html[:table_html.index("</table>")]
    rows = re.findall(r"<tr><td>(.*?)</td>.*?<td>([^<]*)</td></tr>", table_html)
    order = [names(run)[::-1].index(html_unescape(n)) for n, _ in rows]
    flagged = [bool(sig) for _, sig in rows]
    assert html_unescape(rows[0][0]) == ODD_NUM and names(run)[::-1][0] != ODD_NUM
    assert flagged == sorted(flagged, reverse=True) and any(flagged) and not all(flagged)
    rest = [o for o, f in zip(order, flagged, strict=True) if not f]
    assert rest == sorted(rest)
