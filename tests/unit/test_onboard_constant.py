"""A feature the reference holds one value of, where the stream has others (a field filled
later): init typed it categorical by its one value and warned about it as a column that
names the file, period or batch, with renamed categories to fix upstream."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .test_onboard_epoch_names import _init


def test_a_feature_constant_in_the_reference_is_said_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A count 0 throughout the training data, 1 to 4 live."""
    rng = np.random.default_rng(7)
    n = 300
    ref = pd.DataFrame({"income": rng.gamma(3, 15000, n).round(0), "promo_count": 0,
                        "target": rng.integers(0, 2, n)})
    ref.to_csv(tmp_path / "ref.csv", index=False)
    live = ref.drop(columns=["target"]).assign(id=np.arange(n),
                                               promo_count=rng.integers(1, 5, n))
    live.to_json(tmp_path / "live.jsonl", orient="records", lines=True)
    ref.assign(id=np.arange(n))[["id", "target"]].to_csv(tmp_path / "out.csv", index=False)
    code, out, err = _init(tmp_path, capsys)
    assert code == 0, err
    line = next(ln for ln in out.splitlines() if ln.startswith("  warning: promo_count"))
    assert "the reference holds one value, 0: a column constant in the training data" in line
    assert "--ignore promo_count" in line and "names the file" not in line, line
