"""How a reference table's columns are read: which is the score, the label, the decision.

A policy's ``reference:`` block (:mod:`driftwatch.policy.reference`) becomes a
:class:`TableConventions`; the defaults are the historic ones (columns named ``score``,
``label`` and ``decision``; every other column is a feature). :meth:`TableConventions.prepare`
turns a table into the canonical form :meth:`ReferenceProfile.build` reads: the score as
P(bad) (a score written as the connector's log-odds, points or percentage read as the
stream's is, :class:`~driftwatch.scorescale.ScoreScale`; ``score_is: p_good`` becomes
``1 - score``), the label as 1.0 bad / 0.0 good / NaN,
the decision as ``approve`` / ``decline`` / missing; ignored columns are dropped.

>>> import pandas as pd
>>> df = pd.DataFrame({"p": [0.9, 0.2], "y": ["good", "bad"], "d": ["A", "D"],
...                    "x": [1.0, 2.0], "cust": ["c1", "c2"]})
>>> tc = TableConventions(score="p", score_is="p_good", label="y", decision="d",
...                       approve=("A",), ignore=("cust",))
>>> tc.feature_columns(df.columns)
['x']
>>> out = tc.prepare(df)
>>> out["p"].round(2).tolist(), out["y"].tolist(), out["d"].tolist()
([0.1, 0.8], [0.0, 1.0], ['approve', 'decline'])
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from driftwatch.csvdecimal import frame_decimal
from driftwatch.errors import SourceError
from driftwatch.schema import level_text as schema_level_text
from driftwatch.schema import map_distinct
from driftwatch.scorescale import PROBABILITY, ScoreScale
from driftwatch.sentinels import MissingValues
from driftwatch.textnumbers import help_for, number_in

__all__ = ["DEFAULT_APPROVE", "DEFAULT_BAD", "DEFAULT_GOOD", "SCORE_IS", "TableConventions",
           "build_profile", "level_text", "norm_value", "text_number_column"]

SCORE_IS = ("p_bad", "p_good")
DEFAULT_BAD: tuple[Any, ...] = (1, True, "bad", "default")
DEFAULT_GOOD: tuple[Any, ...] = (0, False, "good")
DEFAULT_APPROVE: tuple[Any, ...] = ("approve", "approved", 1, True, "accept")
_DEFAULT_DECLINE = ("decline", "declined", 0, False, "reject")


def norm_value(v: Any) -> str:
    """The key label and decision values are matched by (as the connector does).

    >>> [norm_value(v) for v in ("Bad ", True, 1.0, 0)]
    ['bad', 'true', '1', '0']
    """
    if isinstance(v, bool | np.bool_):
        return "true" if v else "false"
    if isinstance(v, float | np.floating) and float(v).is_integer():
        return str(int(v))
    return str(v).strip().lower()


def level_text(v: Any) -> Any:
    """A categorical value as the decoder writes it (:func:`driftwatch.schema.level_text`),
    with a pandas-written ``True``/``FALSE`` read as the boolean; None stays None.

    >>> [level_text(v) for v in (True, 3.0, "a", None, 2.5, "False")]
    ['true', '3', 'a', None, '2.5', 'false']
    """
    if v is None or (not isinstance(v, list | dict | tuple) and pd.isna(v)):
        return None
    if isinstance(v, str) and v in ("True", "TRUE", "False", "FALSE"):
        return v.lower()
    return schema_level_text(v)


def _keys(values: Iterable[Any]) -> frozenset[str]:
    return frozenset(norm_value(v) for v in values)


def _mapped(col: pd.Series, table: Mapping[str, Any]) -> pd.Series:
    """``table[norm_value(v)]`` of each value (None where null or not in the table)."""
    return pd.Series(map_distinct(col, lambda v: table.get(norm_value(v))), index=col.index,
                     dtype=object)


@dataclass(frozen=True)
class TableConventions:
    """Which reference columns are not features, and how to read them."""

    score: str | None = "score"
    score_is: str = "p_bad"
    label: str | None = "label"
    bad: tuple[Any, ...] = DEFAULT_BAD
    good: tuple[Any, ...] = DEFAULT_GOOD
    #: label values with no outcome yet (a loan still running): read as no label (NaN)
    pending: tuple[Any, ...] = ()
    decision: str | None = "decision"
    approve: tuple[Any, ...] = DEFAULT_APPROVE
    decline: tuple[Any, ...] | None = None
    exposure: str | None = None
    ignore: tuple[str, ...] = ()
    #: The column holding each row's segment (the connector's ``segment`` field live).
    segment: str | None = None
    #: The scale the stream writes the score in (the connector's ``score:``): a score
    #: column written in it is read as the stream's is (:meth:`ScoreScale.written_in`).
    score_scale: ScoreScale = PROBABILITY
    #: The columns of a CSV table written without a header line (the policy's
    #: ``reference: {csv: {names:}}``); None: its first line names them.
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.score_is not in SCORE_IS:
            raise ValueError(f"score_is must be one of {', '.join(SCORE_IS)}: {self.score_is!r}")
        if self.score_scale.kind == "points" and self.score_is == "p_good":
            raise ValueError("scorecard points are read as P(bad): score_is must be p_bad")

    @property
    def named(self) -> dict[str, str]:
        """Role -> column for the roles that name a column (score, label, ...)."""
        roles = {"score": self.score, "label": self.label, "decision": self.decision,
                 "exposure": self.exposure, "segment": self.segment}
        return {r: c for r, c in roles.items() if c}

    def special(self) -> set[str]:
        """Columns that are never features: score, label, decision and ``ignore``. The
        exposure column stays a feature (a loan amount usually is one) unless ignored."""
        return {c for r, c in self.named.items() if r != "exposure"} | set(self.ignore)

    def feature_columns(self, columns: Iterable[Any]) -> list[str]:
        """Every column that is not special, in table order."""
        special = self.special()
        return [str(c) for c in columns if str(c) not in special]

    def missing_columns(self, columns: Iterable[Any]) -> list[tuple[str, str]]:
        """``(role, column)`` for each named column the table lacks. A role left at its
        default name may be absent (the table simply has none)."""
        have = {str(c) for c in columns}
        base = TableConventions()
        out = [(role, col) for role, col in self.named.items()
               if col not in have and getattr(base, role) != col]
        return out + [("ignore", col) for col in self.ignore if col not in have]

    def prepare(self, df: pd.DataFrame) -> pd.DataFrame:
        """The table in canonical form (see the module docstring); ``df`` is not changed."""
        keep = set(self.named.values())  # an ignored exposure is still the exposure
        out = df.drop(columns=[c for c in self.ignore if c in df.columns and c not in keep])
        if self.score and self.score in out.columns:
            s = self._score_numbers(out)
            if self.score_scale.written_in(s.to_numpy()):
                s = pd.Series(self.score_scale.to_probability(s.to_numpy()), index=s.index)
            out[self.score] = 1.0 - s if self.score_is == "p_good" else s
        if self.label and self.label in out.columns:
            # a pending value is in neither: NaN, an unlabelled row, as a missing label
            table = {k: 0.0 for k in _keys(self.good)} | {k: 1.0 for k in _keys(self.bad)}
            out[self.label] = _mapped(out[self.label], table).astype(np.float64)
        if self.decision and self.decision in out.columns:
            decline = _keys(self.decline) if self.decline is not None else None
            if decline is None and self.approve == DEFAULT_APPROVE:
                decline = _keys(_DEFAULT_DECLINE)
            approve = _keys(self.approve)

            def word(v: Any) -> str | None:
                k = norm_value(v)
                return "approve" if k in approve else (
                    "decline" if decline is None or k in decline else None)

            out[self.decision] = pd.Series(map_distinct(out[self.decision], word),
                                           index=out.index, dtype=object)
        return out

    def _score_numbers(self, df: pd.DataFrame) -> pd.Series:
        return pd.to_numeric(df[self.score], errors="coerce").astype(np.float64)

    def score_scaled(self, df: pd.DataFrame) -> bool:
        """Whether ``df``'s score column is written in :attr:`score_scale` (and so is read
        as the stream's score is) rather than as probabilities."""
        return bool(self.score and self.score in df.columns
                    and self.score_scale.written_in(self._score_numbers(df).to_numpy()))

    def canonical(self, df: pd.DataFrame) -> pd.DataFrame:
        """:meth:`prepare`, then the score, label and decision columns renamed ``score``,
        ``label`` and ``decision`` (for code that reads those names: the bootstrap
        champion); a rename that would collide with a feature is left out.

        >>> t = TableConventions(score="p", score_is="p_good", label="y")
        >>> t.canonical(pd.DataFrame({"p": [0.8], "y": [1], "x": [2.0]})).columns.tolist()
        ['score', 'label', 'x']
        """
        out = self.prepare(df)
        names = {"score": self.score, "label": self.label, "decision": self.decision}
        rename = {c: r for r, c in names.items()
                  if c and c != r and c in out.columns and r not in out.columns}
        return out.rename(columns=rename)

    def label_values(self, col: pd.Series) -> list[str]:
        """Values of a label column that are neither bad, good nor pending (at most 5)."""
        known = _keys(self.bad) | _keys(self.good) | _keys(self.pending)
        seen = sorted({norm_value(v) for v in col.dropna().unique()} - known)
        return seen[:5]


def build_profile(
    source: str | Path | pd.DataFrame,
    conventions: TableConventions | None = None,
    *,
    kinds: Mapping[str, str] | None = None,
    missing: MissingValues | None = None,
    formats: Mapping[str, str] | None = None,
    score_scale: ScoreScale | None = None,
    meta: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Any:
    """A :class:`~driftwatch.windows.profile.ReferenceProfile` from a table read with
    ``conventions`` (a headerless CSV by its ``names``). ``kinds`` (feature -> numeric |
    categorical) fixes the type of the features it names (a connector's ``type:``); the
    others are inferred from dtypes.
    ``missing`` (a connector's ``missing_values``) are read as null, as the decoder reads
    them, and recorded in the profile's ``meta["missing_values"]``. The columns ``formats``
    names (a connector's ``format: percent`` or ``money``) are read as the decoder reads
    them (:mod:`driftwatch.textnumbers`: ``"13.56%"`` is 13.56, ``"$60,000.00 "`` 60000),
    so they are numeric features. ``score_scale`` (a connector's ``score:`` scale) reads
    a score column written in that scale as the decoder reads the stream's, recorded in the
    profile's ``meta["score_scale"]``.

    A saved profile (``.json`` / ``.json.gz``) is loaded as it is.
    """
    from driftwatch.windows.profile import ReferenceProfile, read_reference_table

    tc = conventions or TableConventions()
    if not isinstance(source, pd.DataFrame):
        p = Path(source)
        if p.name.endswith((".json", ".json.gz")):
            return ReferenceProfile.load(p)
        df = read_reference_table(p, tc.names)
        meta = {"source": p.name, **(meta or {})}
    else:
        df = source
    if score_scale is not None:
        tc = replace(tc, score_scale=score_scale)
    bad = tc.label_values(df[tc.label]) if tc.label and tc.label in df.columns else []
    if bad:
        raise SourceError(f"reference label column {tc.label!r} has values that are neither "
                          f"bad nor good: {', '.join(bad)} (set reference.label bad/good, "
                          "or pending for no outcome yet, in the policy)")
    decimal = frame_decimal(df)  # the reference CSV's mark: its money text is read with it
    table = tc.prepare(df)
    if tc.score_scaled(df):
        # absent otherwise: profiles of probabilities keep their fingerprint
        meta = {**(meta or {}), "score_scale": tc.score_scale.describe()}
    feats = tc.feature_columns(table.columns)
    for c in feats:
        if fmt := (formats or {}).get(c):
            table[c] = text_number_column(table[c], c, fmt, decimal)
    kinds = dict(kinds or {})
    numeric: list[str] = []
    categorical: list[str] = []
    for c in feats:
        kind = kinds.get(c) or (
            "numeric" if pd.api.types.is_numeric_dtype(table[c])
            and not pd.api.types.is_bool_dtype(table[c]) else "categorical")
        (numeric if kind == "numeric" else categorical).append(c)
    if numeric:
        if missing is not None:
            for c in numeric:  # "?" among numbers: missing, before they read as numbers
                if (texts := missing.number_texts(c)) and not pd.api.types.is_numeric_dtype(
                        table[c]):
                    hit = table[c].map(lambda v, t=texts: isinstance(v, str) and v.strip() in t)
                    table[c] = table[c].where(~hit.astype(bool), None)
        bad_num = [c for c in numeric if not pd.api.types.is_numeric_dtype(table[c])]
        for c in bad_num:
            conv = pd.to_numeric(table[c], errors="coerce")
            if conv.notna().sum() < table[c].notna().sum():
                raise SourceError(f"reference column {c!r} is declared numeric but holds text")
            table[c] = conv
        for c in numeric:
            if pd.api.types.is_bool_dtype(table[c]):
                table[c] = table[c].astype(np.float64)
    for c in categorical:
        col = table[c].astype(object)
        table[c] = pd.Series(map_distinct(col, level_text), index=col.index, dtype=object)
    if missing is not None and not missing.is_empty:
        for c in numeric:
            if len(missing.numbers(c)):
                vals = table[c].to_numpy(dtype=np.float64, na_value=np.nan)
                table[c] = missing.mask_numbers(vals, c)
        for c in categorical:
            if missing.texts(c):
                table[c] = table[c].where(~table[c].isin(missing.texts(c)), None)
        declared = missing.to_dict(numeric + categorical)
        if declared:  # absent otherwise: profiles without sentinels keep their fingerprint
            meta = {**(meta or {}), "missing_values": declared}
    return ReferenceProfile.build(
        table, numeric=numeric, categorical=categorical, score=tc.score, label=tc.label,
        decision=tc.decision, exposure=tc.exposure, meta=meta, segment=tc.segment, **kwargs)


def text_number_column(col: pd.Series, name: str, fmt: str, decimal: str = ".") -> pd.Series:
    """A reference column of numbers written as text in ``fmt`` (percent or money) as
    numbers, read with ``decimal``, the decimal mark of the file it came from; one value
    that is none is an error naming it (a numeric column is left as it is)."""
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        return col

    def read(v: Any) -> float | None:
        try:
            return number_in(fmt, v, decimal)
        except ValueError:
            raise SourceError(f"reference column {name!r} is read as {fmt} text (format: "
                              f"{fmt} in the connector) but holds {v!r}: expected "
                              f"{help_for(fmt)}") from None

    return pd.Series(map_distinct(col, read), index=col.index, dtype=np.float64)
