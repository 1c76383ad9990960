"""Home Credit's ``XNA`` / ``XAP`` levels (no value) are kept as categories, but ``init``
says so with the connector key that reads them as missing: before, nothing told a user
that a feed filling a field with ``XNA`` would read as drift rather than as missing
values; the key it names does read them as missing on both sides."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from driftwatch.connectors.config import parse_connector

from ._cli import run_cli


def _tables(tmp: Path) -> None:
    rng = np.random.default_rng(5)
    n = 400
    ref = pd.DataFrame({"SK_ID_CURR": np.arange(n), "TARGET": (rng.random(n) < 0.1).astype(int),
                        "CODE_GENDER": rng.choice(["M", "F"], n),
                        "ORGANIZATION_TYPE": rng.choice(["School", "Bank", "XNA"], n),
                        "NAME_CONTRACT_TYPE": rng.choice(["Cash loans", "Revolving loans"], n),
                        "AMT_CREDIT": rng.lognormal(12, 0.4, n).round()})
    ref.loc[3, "CODE_GENDER"] = "XNA"
    ref.to_csv(tmp / "train.csv", index=False)
    ref.drop(columns="TARGET").to_csv(tmp / "scored.csv", index=False)


def test_placeholder_levels_are_named_with_the_key_that_reads_them_missing(tmp_path,
                                                                          capsys) -> None:
    _tables(tmp_path)
    code, out, err = run_cli(["init", "--reference", str(tmp_path / "train.csv"), "--sample",
                              str(tmp_path / "scored.csv"), "--model", "hc",
                              "--connector-out", str(tmp_path / "c.yaml"), "--policy-out",
                              str(tmp_path / "p.yaml")], capsys)
    assert code == 0, err
    said = [ln for ln in out.splitlines() if "placeholder:" in ln]
    n_xna = (pd.read_csv(tmp_path / "train.csv")["ORGANIZATION_TYPE"] == "XNA").sum()
    assert len(said) == 2  # CODE_GENDER and ORGANIZATION_TYPE, not NAME_CONTRACT_TYPE
    assert "'XNA' in 1 of 400 rows" in said[0]
    assert f"'XNA' in {n_xna} of 400 rows" in said[1]
    assert all("missing_values_by_feature" in ln for ln in said)
    # kept as a level: the connector reads no placeholder as missing ...
    conn = yaml.safe_load((tmp_path / "c.yaml").read_text())
    fields = conn["source"]["streams"]["predictions"]["fields"]
    assert "ORGANIZATION_TYPE" not in (fields.get("missing_values_by_feature") or {})
    # ... and the key the line names is one the connector accepts for a category
    fields["missing_values_by_feature"] = {"ORGANIZATION_TYPE": ["XNA"]}
    (tmp_path / "c2.yaml").write_text(yaml.safe_dump(conn))
    assert parse_connector(tmp_path / "c2.yaml") is not None  # refused with an error else
