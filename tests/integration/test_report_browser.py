"""The demo replay's report, opened in headless Chromium the way a reviewer opens it.

Checks what a person would notice: the page renders with no console errors and fetches
nothing, every section is there for the decisions that have one, and the plots show the
data (each bar's ``data-count`` is the count in the timeline's sketch summary or in the
reference profile). Screenshots land in ``test-artifacts/`` for a human to look at.

Needs the Debian ``chromium`` package (``make system-deps``) and Playwright for Python
(the ``dev`` extra); Playwright drives the system browser, it downloads none (the
``browser`` fixture: ``driftwatch.testing.chromium``, session-scoped in ``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from driftwatch.replay import replay
from driftwatch.replay.timeline import read_timeline
from driftwatch.report import MAX_BYTES, write_report
from driftwatch.testing.chromium import open_page
from driftwatch.windows.profile import ReferenceProfile

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
ALWAYS = [
    "run-summary",
    "timeline",
    "features",
    "data-quality",
    "confidence",
    "performance",
    "cohorts",  # every window's predictions form a cohort: expected vs realised bad rate
    "reasons",
]

# Reads every chart's data back out of the DOM the browser built.
_READ_PLOTS = """() => {
  const counts = (svg, s) => [...svg.querySelectorAll(`rect[data-series="${s}"]`)]
      .map(r => Number(r.dataset.count));
  return {
    hist: [...document.querySelectorAll('svg.hist')].map(svg => ({
      feature: svg.dataset.feature, window: Number(svg.dataset.window),
      ref: counts(svg, 'ref'), cur: counts(svg, 'cur'),
      visible: svg.getBoundingClientRect().width > 0})),
    tiers: [...document.querySelectorAll('svg.tiers rect[data-tier]')].map(r => ({
      tier: r.dataset.tier, first: Number(r.dataset.first), last: Number(r.dataset.last)})),
    signals: Object.fromEntries([...document.querySelectorAll('svg.signal')]
      .filter(s => s.closest('#timeline'))
      .map(s => [s.dataset.series, s.dataset.values])),
  };
}"""


def _demo_inputs(tmp: Path) -> tuple[list[Path], Path]:
    """The bundled demo recording, or the same scenario generated (seeded) when absent."""
    demo = ROOT / "data" / "demo"
    files = [demo / "predictions.jsonl.gz", demo / "outcomes.jsonl.gz"]
    if all(f.exists() for f in files) and (demo / "reference.parquet").exists():
        return files, demo / "reference.parquet"
    from driftwatch.testing.generator import write_scenario

    paths = write_scenario("demo", tmp / "demo", seed=0)
    return [paths["predictions"], paths["outcomes"]], paths["reference"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("report-demo")
    inputs, ref_path = _demo_inputs(tmp)
    out = tmp / "out"
    res = replay(
        ROOT / "connectors" / "demo-file.yaml",
        inputs,
        out,
        policy=ROOT / "policies" / "credit-risk-demo.yaml",
        reference=ref_path,
        progress=False,
    )
    profile = ReferenceProfile.from_file(ref_path)
    assert profile.fingerprint == res.summary["reference"]  # the bins the run was measured on
    path = write_report(out, reference=profile)
    records = read_timeline(out / "timeline.jsonl")
    return {"out": out, "profile": profile, "records": records, "path": path}


def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str]]:
    return open_page(browser, path.as_uri())


def _expected_sections(decisions: list[dict[str, Any]]) -> list[str]:
    actions = {d.get("action") for d in decisions}
    ids = list(ALWAYS)
    if "shadow" in actions:
        ids.insert(ids.index("reasons"), "shadow")
    if "retrain" in actions:
        ids.insert(ids.index("reasons"), "retraining")
    if actions - {None}:  # what each decided action came to (a dry run says none ran)
        ids.insert(ids.index("reasons"), "actions")
    return ids


def _ref_counts(profile: ReferenceProfile, feature: str) -> list[int]:
    lay = profile.layout
    if feature in lay.numeric.names:
        j = lay.numeric.names.index(feature)
        row = profile.sketch.num_coarse()[j]
        nc = int(lay.numeric.n_coarse[j])
        return [*row[:nc].tolist(), int(row[-1])]
    cl = lay.categorical
    j = cl.names.index(feature)
    row = profile.sketch.cat[j]
    k = len(cl.levels[j])
    return [
        *row[:k].tolist(),
        int(row[cl.other_col]),
        int(row[cl.unseen_col]),
        int(row[cl.missing_col]),
    ]


def _cur_counts(profile: ReferenceProfile, rec: dict[str, Any], feature: str) -> list[int]:
    f = rec["features"][feature]
    if f["type"] == "numeric":
        return [*f["bins"], f["missing"]]
    levels = profile.layout.categorical.levels[profile.layout.categorical.names.index(feature)]
    return [f["levels"][lv] for lv in levels] + [f["other"], f["unseen"], f["missing"]]


def _check_plots(plots: dict[str, Any], demo: dict[str, Any]) -> None:
    by_id = {r["window_id"]: r for r in demo["records"]}
    hists = [h for h in plots["hist"] if h["feature"] != "score"]
    assert hists, "no feature histogram in the report"
    for h in hists:
        rec = by_id[h["window"]]
        assert h["visible"]
        assert h["cur"] == _cur_counts(demo["profile"], rec, h["feature"]), h["feature"]
        assert h["ref"] == _ref_counts(demo["profile"], h["feature"]), h["feature"]


def test_run_report_renders_with_all_its_data(browser: Any, demo: dict[str, Any]) -> None:
    size = demo["path"].stat().st_size
    assert size <= MAX_BYTES
    again = write_report(demo["out"], reference=demo["profile"], path=demo["out"] / "again.html")
    assert again.read_bytes() == demo["path"].read_bytes()  # same replay, same bytes
    page, problems, fetched = _open(browser, demo["path"])
    assert problems == []
    assert fetched == [demo["path"].as_uri()]  # one file: nothing else is fetched
    decisions = [r["decision"] for r in demo["records"] if r.get("decision")]
    ids = page.eval_on_selector_all("main > section", "els => els.map(e => e.id)")
    assert ids == _expected_sections(decisions)
    plots = page.evaluate(_READ_PLOTS)
    _check_plots(plots, demo)
    tiers = [t["tier"] for t in plots["tiers"] for _ in range(t["first"], t["last"] + 1)]
    assert tiers == [r["tier"] for r in demo["records"]]
    psi = [float(v) for v in plots["signals"]["max PSI"].split()]
    want = [
        next(s["value"] for s in r["signals"] if s["signal"] == "psi_aggregate")
        for r in demo["records"]
    ]
    assert psi == pytest.approx(want, rel=1e-5)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "report-demo.png"), full_page=True)
    page.close()


def test_each_kind_of_decision_has_its_sections(browser: Any, demo: dict[str, Any]) -> None:
    firsts: dict[str, dict[str, Any]] = {}
    for r in demo["records"]:
        d = r.get("decision") or {}
        if d.get("action"):
            firsts.setdefault(d["action"], r)
    assert firsts, "the demo run decided nothing"
    ARTIFACTS.mkdir(exist_ok=True)
    for action, rec in sorted(firsts.items()):
        wid = rec["window_id"]
        path = write_report(demo["out"], reference=demo["profile"], decision=wid)
        page, problems, _ = _open(browser, path)
        assert problems == [], action
        ids = page.eval_on_selector_all("main > section", "els => els.map(e => e.id)")
        assert ids == _expected_sections([rec["decision"]]), action
        blocks = page.eval_on_selector_all(
            "#reasons .decision", "els => els.map(e => [e.dataset.window, e.dataset.reasons])"
        )
        assert blocks == [[str(wid), str(len(rec["decision"]["reasons"]))]]
        sources = page.eval_on_selector_all(
            "#reasons tr.reason", "els => els.map(e => e.dataset.source)"
        )
        assert sources == [x["source"] for x in rec["decision"]["reasons"]]
        if rec["decision"].get("data_quality_fault"):
            assert page.query_selector("#data-quality table.dq-faults") is not None
        _check_plots(page.evaluate(_READ_PLOTS), demo)
        page.screenshot(path=str(ARTIFACTS / f"report-window-{wid}-{action}.png"), full_page=True)
        page.close()


def _ranking(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#features table.ranking tbody tr", "rows => rows.map(r => [...r.cells].map("
        "c => c.textContent.trim()))")


def test_severe_episode_ranks_the_features_the_generator_moved(
    browser: Any, demo: dict[str, Any]
) -> None:
    """What a reviewer checks first: the report blames the features that really moved, on
    windows that saw predictions, and calls data quality data quality."""
    from driftwatch.testing.scenarios import scenario_plan

    (severe,) = [e for e in scenario_plan("demo").episodes if e.tier == "severe"]
    rec = next(r for r in demo["records"] if (r.get("decision") or {}).get("action") == "retrain")
    path = write_report(demo["out"], reference=demo["profile"], decision=rec["window_id"])
    page, problems, _ = _open(browser, path)
    assert problems == []
    rows = _ranking(page)
    assert len(rows) == len(demo["profile"].schema.numeric) + len(
        demo["profile"].schema.categorical)
    top = [r[0] for r in rows[:3]]
    assert set(top) <= set(severe.features), (top, severe.features)
    page.close()

    page, problems, _ = _open(browser, demo["path"])
    with_events = {str(r["window_id"]) for r in demo["records"] if r["n_events"] > 0}
    assert {r[2] for r in _ranking(page)} <= with_events
    dq = page.inner_text("#data-quality")
    assert "tier" not in dq.lower()
    rows = page.eval_on_selector_all("#reasons tr.reason", """els => els.map(e => [
        e.dataset.group, [...e.querySelectorAll('.tier, .tag.dq')].map(b => b.textContent)])""")
    assert rows and any(g == "data_quality" for g, _ in rows)
    for group, badges in rows:
        assert badges == (["data-quality check"] if group == "data_quality" else badges[:1])
        assert len(badges) == 1 and (group == "data_quality") == (badges[0] == "data-quality check")
    header = page.inner_text("header.top h1")
    assert f"now {demo['records'][-1]['tier']}" in header and "worst in this run" in header
    page.close()
