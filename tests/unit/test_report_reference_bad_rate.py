"""The report calls the reference's bad rate "on approved applications" only where it is.

The reference's outcomes are taken on its approved rows where it records approvals, and on
every labelled row where it does not (``add_frame_labels``). Before, the report said "bad
rate on approved applications" and drew a "reference (approved)" line either way, so a
reference table without a decision column was read as a bad rate of the approved.
"""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import numpy as np
import pytest

from driftwatch.report import build_report, load_run
from driftwatch.windows.profile import ReferenceProfile

from .test_report import ODD_CAT, ODD_NUM, _frame, make_run


def _report(tmp: Path, with_decisions: bool) -> tuple[str, float]:
    """The report's text over a reference with or without its decision column, and the
    bad rate of the rows its outcomes are taken on, counted here from the table."""
    df = _frame(np.random.default_rng(5), 3000, 0.0, 0.0)
    approved = (df["decision"] == "approve").to_numpy()
    assert 0 < approved.sum() < len(df)  # both kinds of row: the two rates differ
    if not with_decisions:
        df = df.drop(columns="decision")
    prof = ReferenceProfile.build(df, numeric=[ODD_NUM, "age"], categorical=[ODD_CAT],
                                  top_k=3)
    rows = approved if with_decisions else np.ones(len(df), dtype=bool)
    html = build_report(load_run(make_run(tmp, prof), reference=prof))
    return unescape(re.sub(r"<[^>]+>", "", html)), float(df["label"].to_numpy()[rows].mean())


def test_without_decisions_the_reference_bad_rate_is_not_called_approved(
        tmp_path: Path) -> None:
    text, bad = _report(tmp_path, with_decisions=False)
    assert "bad rate on approved" not in text
    assert "reference (approved)" not in text
    said = re.search(r"Reference: bad rate ([\d.]+)% on its labelled rows \(it records no "
                     r"approval decisions", text)
    assert said is not None, re.findall(r"Reference:[^.]*\.", text)
    assert float(said.group(1)) == pytest.approx(100 * bad, abs=0.005)


def test_with_decisions_the_reference_bad_rate_is_of_the_approved(tmp_path: Path) -> None:
    text, bad = _report(tmp_path, with_decisions=True)
    said = re.search(r"Reference: approval rate [\d.]+%, bad rate on approved applications "
                     r"([\d.]+)%\.", text)
    assert said is not None, re.findall(r"Reference:[^.]*\.", text)
    assert float(said.group(1)) == pytest.approx(100 * bad, abs=0.005)
    assert "reference (approved)" in text
