"""The cohort figure calls cohorts immature only where some still await outcomes.

Before, its caption said "Recent cohorts are immature: their outcomes have not arrived yet"
under every completeness chart, also where each cohort had all its outcomes (100%).
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import orjson
import pytest

from driftwatch.report import build_report, load_run
from driftwatch.windows.profile import ReferenceProfile

from .test_report import make_run
from .test_report import profile as profile  # the fixture, shared

DAY0 = 1_704_067_200.0


def _caption(tmp: Path, prof: ReferenceProfile, cohorts: list[dict[str, Any]]) -> str:
    out = make_run(tmp, prof)
    summary = orjson.loads((out / "summary.json").read_bytes())
    summary["label_cohorts"] = [{"start": DAY0 + d * 86400, **c} for d, c in enumerate(cohorts)]
    (out / "summary.json").write_bytes(orjson.dumps(summary))
    html = build_report(load_run(out, reference=prof))
    (caption,) = re.findall(r"Label completeness per prediction cohort.*?<figcaption>(.*?)"
                            r"</figcaption>", html, flags=re.S)
    return unescape(caption)


def _cohort(predicted: int, labelled: int, expired: int = 0) -> dict[str, Any]:
    return {"predicted": predicted, "labelled": labelled, "bad": labelled // 10,
            "expired": expired, "evicted": 0, "pending": predicted - labelled - expired,
            "completeness": labelled / predicted}


def test_complete_cohorts_are_not_called_immature(tmp_path: Path,
                                                   profile: ReferenceProfile) -> None:
    caption = _caption(tmp_path, profile, [_cohort(300, 300), _cohort(290, 290)])
    assert "immature" not in caption and "provisional" not in caption
    assert caption == "Every cohort is complete: each of its predictions has its outcome."


def test_cohorts_awaiting_outcomes_are_counted_as_immature(
        tmp_path: Path, profile: ReferenceProfile) -> None:
    caption = _caption(tmp_path, profile, [_cohort(300, 300), _cohort(300, 240),
                                           _cohort(300, 0)])
    assert caption.startswith("2 of the 3 cohorts are immature: their outcomes have not all "
                              "arrived yet")


@pytest.mark.parametrize("expired", [10, 300])
def test_cohorts_short_only_of_expired_outcomes_await_nothing(
        tmp_path: Path, profile: ReferenceProfile, expired: int) -> None:
    caption = _caption(tmp_path, profile, [_cohort(300, 300), _cohort(300, 300 - expired,
                                                                      expired)])
    assert "immature" not in caption
    assert caption.startswith("No cohort awaits outcomes any more")


def test_a_summary_without_pending_counts_incomplete_cohorts(
        tmp_path: Path, profile: ReferenceProfile) -> None:
    cohorts = [{"predicted": 300, "labelled": n, "completeness": n / 300} for n in (300, 150)]
    assert _caption(tmp_path, profile, cohorts).startswith("1 of the 2 cohorts is immature")
    full = [{"predicted": 300, "labelled": 300, "completeness": 1.0}]
    assert _caption(tmp_path, profile, full).startswith("Every cohort is complete")
