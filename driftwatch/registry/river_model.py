"""The model an action trains and the registry stores: a feature encoder plus a river pipeline.

River learners want numbers without gaps, the monitored stream has skewed amounts, missing
values and categorical levels. :class:`FeatureEncoder` maps a DataFrame of raw features
to numbers, column-wise: skewed non-negative features on a log scale, missing values filled
with the reference median plus a missing flag, categoricals one-hot on the reference
levels (an unknown level is all zeros). :class:`RiverModel` is the encoder, the river
pipeline and the learner's name; it pickles whole, so a champion can be copied and learn on.

>>> import numpy as np, pandas as pd
>>> df = pd.DataFrame({"income": [20e3, 40e3, np.nan, 90e3],
...                    "purpose": ["car", "home", "car", None]})
>>> enc = FeatureEncoder.fit(df, numeric=["income"], categorical=["purpose"], log=["income"])
>>> list(enc.transform(df).columns)
['income', 'income__missing', 'purpose=car', 'purpose=home']
>>> enc.transform(df)["income__missing"].tolist()
[0.0, 0.0, 1.0, 0.0]
>>> m = RiverModel.fresh(enc, "StandardScaler|LogisticRegression")
>>> m.learn(df, np.array([0, 0, 1, 1]))
>>> p = m.predict_proba(df)
>>> p.shape, bool(((p > 0) & (p < 1)).all())
((4,), True)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.errors import ActionError
from driftwatch.registry.learners import build_learner, normalise_learner, supports_many

__all__ = ["FeatureEncoder", "RiverModel"]

_SKEW_FOR_LOG = 1.2


def _skew(x: np.ndarray) -> float:
    x = x[np.isfinite(x)]
    if len(x) < 3 or x.std() == 0:
        return 0.0
    return float(((x - x.mean()) ** 3).mean() / x.std() ** 3)


@dataclass(frozen=True)
class FeatureEncoder:
    """Raw features → numeric columns, fitted once on reference (training) data."""

    numeric: tuple[str, ...]
    log: tuple[bool, ...]
    fill: tuple[float, ...]
    flag_missing: tuple[bool, ...]
    categorical: tuple[str, ...] = ()
    levels: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def fit(
        cls,
        df: pd.DataFrame,
        *,
        numeric: Sequence[str],
        categorical: Sequence[str] = (),
        log: Sequence[str] | None = None,
        max_levels: int = 30,
    ) -> FeatureEncoder:
        """Fit on ``df``. ``log=None`` puts non-negative features with skewness above 1.2
        on a log scale; pass names to choose."""
        logs, fills, flags = [], [], []
        for name in numeric:
            x = pd.to_numeric(df[name], errors="coerce").to_numpy(np.float64, na_value=np.nan)
            finite = x[np.isfinite(x)]
            use_log = (
                name in log
                if log is not None
                else bool(len(finite) and finite.min() >= 0 and _skew(finite) > _SKEW_FOR_LOG)
            )
            t = np.log1p(np.clip(finite, 0, None)) if use_log else finite
            logs.append(use_log)
            fills.append(float(np.median(t)) if len(t) else 0.0)
            flags.append(bool(len(finite) < len(x)))
        levels = []
        for name in categorical:
            counts = df[name].dropna().astype(str).value_counts(sort=False)
            ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            levels.append(tuple(k for k, _ in ordered[:max_levels]))
        return cls(
            tuple(numeric),
            tuple(logs),
            tuple(fills),
            tuple(flags),
            tuple(categorical),
            tuple(levels),
        )

    @property
    def columns(self) -> list[str]:
        out: list[str] = []
        for name, flag in zip(self.numeric, self.flag_missing, strict=True):
            out.append(name)
            if flag:
                out.append(f"{name}__missing")
        for name, lv in zip(self.categorical, self.levels, strict=True):
            out += [f"{name}={v}" for v in lv]
        return out

    @property
    def features(self) -> tuple[str, ...]:
        """The raw feature names this encoder reads."""
        return self.numeric + self.categorical

    def transform(self, df: pd.DataFrame) -> pd.DataFrame:
        """Encode ``df`` (absent columns count as missing)."""
        n = len(df)
        cols: dict[str, np.ndarray] = {}
        for name, use_log, fill, flag in zip(
            self.numeric, self.log, self.fill, self.flag_missing, strict=True
        ):
            if name in df.columns:
                x = pd.to_numeric(df[name], errors="coerce").to_numpy(np.float64, na_value=np.nan)
            else:
                x = np.full(n, np.nan)
            missing = ~np.isfinite(x)
            if use_log:
                x = np.log1p(np.clip(x, 0, None))
            cols[name] = np.where(missing, fill, x)
            if flag:
                cols[f"{name}__missing"] = missing.astype(np.float64)
        for name, lv in zip(self.categorical, self.levels, strict=True):
            s = df[name].astype(object) if name in df.columns else pd.Series([None] * n)
            values = np.asarray(s.where(s.notna(), None).map(str, na_action="ignore"), dtype=object)
            for v in lv:
                cols[f"{name}={v}"] = (values == v).astype(np.float64)
        return pd.DataFrame(cols, index=pd.RangeIndex(n))

    def to_dict(self) -> dict[str, Any]:
        return {
            "numeric": list(self.numeric),
            "log": list(self.log),
            "fill": list(self.fill),
            "flag_missing": list(self.flag_missing),
            "categorical": list(self.categorical),
            "levels": [list(lv) for lv in self.levels],
        }


@dataclass
class RiverModel:
    """An encoder, a river pipeline and the learner spec that built it."""

    encoder: FeatureEncoder
    pipeline: Any
    learner: str
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def fresh(cls, encoder: FeatureEncoder, learner: str) -> RiverModel:
        spec = normalise_learner(learner)
        return cls(encoder, build_learner(spec), spec)

    def copy(self) -> RiverModel:
        """An independent copy: learning on it leaves this model as it was."""
        return copy.deepcopy(self)

    @property
    def learns_many(self) -> bool:
        return supports_many(self.pipeline)

    def predict_proba(self, df: pd.DataFrame) -> np.ndarray:
        """Probability of the bad class (label 1) for each row of raw features."""
        return self.predict_encoded(self.encoder.transform(df))

    def predict_encoded(self, x: pd.DataFrame) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        if self.learns_many:
            proba = self.pipeline.predict_proba_many(x)
            col = True if True in proba.columns else proba.columns[-1]
            return np.clip(proba[col].to_numpy(np.float64), 0.0, 1.0)
        out = np.empty(len(x))
        for i, row in enumerate(x.to_dict("records")):
            out[i] = self.pipeline.predict_proba_one(row).get(True, 0.0)
        return np.clip(np.nan_to_num(out, nan=0.5), 0.0, 1.0)

    def learn(self, df: pd.DataFrame, y: np.ndarray) -> None:
        """Learn raw rows ``df`` with labels ``y`` (1 bad, 0 good) in one step."""
        self.learn_encoded(self.encoder.transform(df), y)

    def learn_encoded(self, x: pd.DataFrame, y: np.ndarray) -> None:
        labels = np.asarray(y).astype(bool)
        if len(x) != len(labels):
            raise ActionError(f"{len(x)} rows but {len(labels)} labels")
        if self.learns_many:
            self.pipeline.learn_many(x, pd.Series(labels, index=x.index))
            return
        for row, label in zip(x.to_dict("records"), labels.tolist(), strict=True):
            self.pipeline.learn_one(row, label)
