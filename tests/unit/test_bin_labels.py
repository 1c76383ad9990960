"""Bin labels come from the layout that owns the counts, so they never disagree."""

from __future__ import annotations

import numpy as np
import pandas as pd

from driftwatch.batch import Batch
from driftwatch.detectors.assess import assess
from driftwatch.detectors.prepared import prepare
from driftwatch.windows.layout import PAD, CategoricalLayout, NumericLayout
from driftwatch.windows.profile import ReferenceProfile
from driftwatch.windows.sketch import Sketch


def _frame(rng: np.random.Generator, n: int, shift: float = 0.0) -> pd.DataFrame:
    flag = rng.choice(["Y", "N"], n).astype(object)
    flag[rng.random(n) < 0.1] = None  # a 2-level flag with missing values
    return pd.DataFrame({
        "x": rng.normal(shift, 1, n),
        "flag": flag,
        "purpose": rng.choice(list("abcde"), n),  # the widest categorical: 5 levels
        "score": rng.uniform(size=n),
    })


def test_two_level_flag_with_missing_next_to_five_levels_does_not_crash() -> None:
    # the reported crash: IndexError in the PSI top_bins labels of `flag`
    rng = np.random.default_rng(0)
    prof = ReferenceProfile.build(_frame(rng, 3000))
    cur_df = _frame(rng, 3000, shift=0.5)
    cur_df.loc[: 1500, "flag"] = None  # the missing bin moves most
    cats = np.stack([prof.schema.encode_categorical(j, cur_df[c].to_numpy())
                     for j, c in enumerate(prof.schema.categorical)], axis=1)
    cur = Sketch.empty(prof.layout)
    cur.add_batch(Batch.build("predictions", n=3000, n_numeric=1, n_categorical=2,
                              numeric=cur_df[["x"]].to_numpy(), categorical=cats,
                              score=cur_df["score"].to_numpy()))
    a = assess(prof, cur, model="m", window_id=1, start_time=0.0, end_time=1.0)
    psi = next(a.select(signal="psi", feature="flag"))
    tops = psi.details["top_bins"]
    assert tops[0]["bin"] == "missing"
    assert {t["bin"] for t in tops} <= {"Y", "N", "other", "unseen", "missing"}
    assert psi.value > 0.25


def test_categorical_labels_cover_every_padded_column() -> None:
    lay = CategoricalLayout(("flag", "p", "one"), (("Y", "N"), tuple("abcde"), ("z",)))
    labels = lay.column_labels()
    assert [len(lab) for lab in labels] == [lay.width] * 3
    for lab, valid in zip(labels, lay.valid(), strict=True):
        assert all((x == PAD) != v for x, v in zip(lab, valid, strict=True))
        assert lab[lay.other_col] == "other"
        assert lab[lay.unseen_col] == "unseen"
        assert lab[lay.missing_col] == "missing"
    assert labels[0] == ("Y", "N", PAD, PAD, PAD, "other", "unseen", "missing")


def test_numeric_labels_cover_every_padded_column() -> None:
    rng = np.random.default_rng(1)
    data = np.c_[rng.normal(size=500), rng.integers(0, 3, 500), np.full(500, 7.0)]
    lay = NumericLayout.fit(("x", "k", "c"), data)
    labels = lay.coarse_labels()
    valid = lay.coarse_valid()
    assert [len(lab) for lab in labels] == [lay.coarse_width] * 3
    for lab, v in zip(labels, valid, strict=True):
        assert all((x == PAD) != ok for x, ok in zip(lab, v, strict=True))
        assert lab[-1] == "missing"
    assert labels[2][: int(lay.n_coarse[2])] == ("(-inf, 7]", "(7, inf)")


def test_prepared_labels_have_one_entry_per_count_column() -> None:
    rng = np.random.default_rng(2)
    prof = ReferenceProfile.build(_frame(rng, 500))
    prep = prepare(prof)
    assert [len(lab) for lab in prep.cat_labels] == [prep.cat.shape[1]] * 2
    assert [len(lab) for lab in prep.num_geo.coarse_labels] == [prep.num_coarse.shape[1]]
