"""Reference profiles: the bins and sketch of what the live model was trained on.

A profile belongs to a model version. It is built once from the development sample
(training data), saved as JSON (it travels with the model as an MLflow artifact), and
every window is measured against it.

Conventions (see DOMAIN.md): bins are fixed on the reference only — deciles for numeric
features by default, one bin per categorical level (top-K, then *other*), and a missing
bin; label statistics (bad rate) are taken on **approved** rows when a decision column
exists, so they compare like with like with live outcomes (only approved applicants get one).

>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"income": rng.lognormal(10, 0.5, 1000),
...                    "purpose": rng.choice(["car", "home", "boat"], 1000, p=[.6, .39, .01]),
...                    "score": rng.uniform(0, 1, 1000)})
>>> prof = ReferenceProfile.build(df, numeric=["income"], categorical=["purpose"], top_k=2)
>>> prof.schema.levels, sorted(prof.schema.other[0])
((('car', 'home'),), ['boat'])
>>> prof.sketch.n, int(prof.layout.numeric.n_coarse[0])
(1000, 10)
>>> ReferenceProfile.from_json(prof.to_json()).to_json() == prof.to_json()
True
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from driftwatch.arrowdecimal import decimals_as_doubles
from driftwatch.batch import DECISION_APPROVE, DECISION_DECLINE, Batch
from driftwatch.csvdecimal import DECIMAL_ATTR, csv_notes, file_decimal
from driftwatch.csvheader import REFERENCE_FIX, refuse_data_header
from driftwatch.csvnames import REFERENCE_NAMES, named_header
from driftwatch.csvpad import read_csv_trimmed
from driftwatch.csvrows import refuse_ragged
from driftwatch.csvsep import file_separator
from driftwatch.errors import SourceError
from driftwatch.numbergroups import grouped_columns
from driftwatch.schema import FeatureSchema, level_texts
from driftwatch.windows.segments import DEFAULT_TOP_K, SegmentProfile
from driftwatch.windows.sketch import Sketch, SketchLayout
from driftwatch.workbook import SAVE_AS, file_head, json_head, workbook_kind

__all__ = [
    "FORMAT_VERSION",
    "ReferenceProfile",
    "add_frame_labels",
    "frame_batch",
    "is_numeric_column",
    "is_parquet",
    "read_reference_table",
    "reference_notes",
    "reference_separator",
    "refuse_parquet_names",
]

FORMAT_VERSION = 1
log = logging.getLogger(__name__)


def is_parquet(path: str | Path) -> bool:
    """Whether a reference dataset is Parquet: named ``.parquet``, ``.pq`` or ``.parq``, or
    starting with Parquet's magic bytes whatever its name."""
    p = Path(path)
    if p.name.lower().endswith((".parquet", ".pq", ".parq")):
        return True
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


def reference_separator(path: str | Path) -> str | None:
    """The separator a CSV reference is read with: the comma, or the one its header shows
    (:mod:`driftwatch.csvsep`); None for Parquet or a saved profile (``.json[.gz]``)."""
    p = Path(path)
    if p.name.endswith((".json", ".json.gz")):
        return None
    with contextlib.suppress(OSError):  # the separator's read says why it cannot be read
        _refuse_other_files(p)
    if is_parquet(p):
        return None
    return file_separator(p, f"reference dataset {p}")


def _refuse_other_files(p: Path) -> None:
    """Refuse a workbook, an Arrow file or JSON given as the reference, gzipped or not, with
    the fix (before a CSV reader fails on its bytes with a codec error, or reads JSON lines
    as ragged rows)."""
    head = file_head(p, 64)
    if kind := workbook_kind(head):
        raise SourceError(f"reference dataset {p} is {kind}: {SAVE_AS}")
    if json_head(head):  # read as CSV, its first line would be a header of JSON fragments
        raise SourceError(f"reference dataset {p} holds JSON (JSON lines?), not a table: "
                          f"{SAVE_AS}")


def reference_notes(path: str | Path, what: str, names: Sequence[str] | None = None
                    ) -> list[str]:
    """The lines that say how a CSV reference is read, when its head decided something
    other than the comma and the decimal point (``what`` names it; the decimal mark is
    :mod:`driftwatch.csvdecimal`'s; ``names``: its columns when it has no header line, as
    :func:`read_reference_table` takes them)."""
    sep = reference_separator(path)
    if sep is None:
        return []
    header = names is None or named_header(path, sep, names, what)
    return csv_notes(what, sep, file_decimal(path, sep), header=header)


def read_reference_table(path: str | Path, names: Sequence[str] | None = None, *,
                         given: str = REFERENCE_NAMES, fix: str = REFERENCE_FIX
                         ) -> pd.DataFrame:
    """Read a reference dataset (Parquet, CSV, CSV.gz; a CSV with the separator its header
    shows and the decimal mark its first rows show, a column of numbers whose thousands
    are grouped as numbers: :mod:`driftwatch.numbergroups`) into a DataFrame. ``names``:
    the columns of a CSV written without a header line (the policy's ``reference: {csv:
    {names:}}``), a first line equal to them skipped (:mod:`driftwatch.csvnames`);
    ``given``: where they were given, for a refusal; ``fix``: how to give them, for the
    refusal of a first line that is data."""
    p = Path(path)
    try:
        _refuse_other_files(p)
        if is_parquet(p):
            refuse_parquet_names(p, names, given)
            # ParquetFile, not read_table: read_table goes through pyarrow.dataset, whose
            # import alone costs every command that reads a reference 0.3-0.8 s
            from driftwatch.parquetread import read_parquet

            return decimals_as_doubles(read_parquet(p)).to_pandas()
        sep = reference_separator(p) or ","
        how = _names_read(p, sep, names, given, fix)
        # pandas pads a short row and reads on: its values would land in other columns
        refuse_ragged(p, sep, f"reference dataset {p}", ": fix or drop that line of the "
                      "reference", names=names, skip=how.get("skiprows", 0), given=given,
                      limit=None)
        found = file_decimal(p, sep)
        for note in csv_notes(f"reference dataset {p}", sep, found,
                              header=how.get("skiprows", 1) == 1):
            log.info(note)  # the commands that read it print the same lines
        # "1,234" in a column of numbers is a number, as the stream reads it
        df = grouped_columns(read_csv_trimmed(p, sep=sep, decimal=found.mark, **how),
                             found.mark)
        df.attrs[DECIMAL_ATTR] = found.mark  # money text is read with it (format: money)
        return df
    except (OSError, ValueError) as exc:
        raise SourceError(f"cannot read reference dataset {p}: {exc}") from exc


def refuse_parquet_names(path: Path, names: Sequence[str] | None,
                         given: str = REFERENCE_NAMES) -> None:
    """Refuse column names given (``given`` says where) for a file that names its own
    columns (Parquet): read by its own names, the names given would silently mean
    nothing."""
    if names is not None:
        raise SourceError(f"reference dataset {path} is Parquet, which names its columns, "
                          f"but column names are given for a CSV without a header line "
                          f"({given}): remove them")


def _names_read(path: Path, sep: str, names: Sequence[str] | None, given: str,
                fix: str = REFERENCE_FIX) -> dict[str, Any]:
    """How pandas reads the CSV reference ``path``: by its header line, refused when it
    is data (without ``names``); or by ``names``, its first line skipped when it equals
    them (:func:`~driftwatch.csvnames.named_header`)."""
    what = f"reference dataset {path}"
    if names is None:
        refuse_data_header(path, sep, what, fix=fix)
        return {}
    skip = named_header(path, sep, names, what, given=given)
    return {"header": None, "names": list(names), "skiprows": int(skip), "index_col": False}


def is_numeric_column(col: pd.Series) -> bool:
    """Whether a reference column is a numeric feature when nobody said: numbers are,
    booleans are not (a yes/no flag is two levels, not a 0/1 measurement).

    >>> is_numeric_column(pd.Series([1.5, 2.0])), is_numeric_column(pd.Series([True, False]))
    (True, False)
    >>> is_numeric_column(pd.Series([True, None, False], dtype="boolean"))
    False
    """
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def _numbers(df: pd.DataFrame, names: Sequence[str]) -> np.ndarray:
    """``float64[n, C]`` of numeric features, booleans as 0/1, NaN where missing (and
    throughout for a column the table lacks)."""
    out = np.full((len(df), len(names)), np.nan)
    for j, c in enumerate(names):
        if c not in df.columns:
            continue
        col = df[c]
        try:
            if col.dtype == object:  # booleans with nulls, or numbers stored as text
                col = pd.to_numeric(col.map(lambda v: float(v) if isinstance(v, bool) else v,
                                            na_action="ignore"))
            out[:, j] = col.to_numpy(dtype=np.float64, na_value=np.nan)
        except (TypeError, ValueError) as exc:
            raise SourceError(f"reference column {c!r} is a numeric feature but holds values "
                              f"that are not numbers ({exc})") from exc
    return out


def _decisions(col: pd.Series | None, n: int) -> np.ndarray:
    if col is None:
        return np.full(n, -1, dtype=np.int8)
    s = col.astype(str).str.lower()
    out = np.full(n, -1, dtype=np.int8)
    out[s.isin(["approve", "approved", "1", "true", "accept"]).to_numpy()] = DECISION_APPROVE
    out[s.isin(["decline", "declined", "0", "false", "reject"]).to_numpy()] = DECISION_DECLINE
    return out


def frame_batch(
    df: pd.DataFrame,
    schema: FeatureSchema,
    *,
    score: str | None = "score",
    decision: str | None = "decision",
    exposure: str | None = None,
    stream: str = "predictions",
) -> Batch:
    """A table as a batch of predictions on ``schema``: the reference conventions.

    Feature columns by name (numeric as float, NaN missing; categorical coded on the
    schema's levels), the optional ``score``, ``decision`` (approve / decline words, 1 / 0)
    and ``exposure`` columns; a column that is absent is missing throughout.
    """
    n = len(df)
    num = _numbers(df, schema.numeric)
    cat = (
        np.stack(
            [schema.encode_categorical(j, df[c].to_numpy() if c in df.columns else [None] * n)
             for j, c in enumerate(schema.categorical)],
            axis=1,
        )
        if schema.categorical
        else np.zeros((n, 0), np.int32)
    )

    def column(name: str | None) -> np.ndarray:
        if name and name in df.columns:
            return df[name].to_numpy(dtype=np.float64, na_value=np.nan)
        return np.full(n, np.nan)

    return Batch.build(
        stream,
        n=n,
        n_numeric=len(schema.numeric),
        n_categorical=len(schema.categorical),
        ids=np.arange(n).astype(str),
        numeric=num,
        categorical=cat,
        score=column(score),
        decision=_decisions(df[decision] if decision and decision in df.columns else None, n),
        exposure=column(exposure),
    )


def add_frame_labels(sketch: Sketch, df: pd.DataFrame, batch: Batch, label: str | None) -> None:
    """Add the table's outcomes (``label``: 1 bad, 0 good) to ``sketch``, on approved rows
    when the table has decisions, so they compare with live outcomes (only approved
    applicants get one)."""
    if not label or label not in df.columns:
        return
    lab = pd.to_numeric(df[label], errors="coerce").to_numpy(dtype=np.float64)
    approved = batch.decision == DECISION_APPROVE
    rows = approved if approved.any() else np.ones(len(df), dtype=bool)
    sketch.add_labelled(batch.score[rows], lab[rows], batch.exposure[rows])


@dataclass(eq=False)
class ReferenceProfile:
    """Schema (names, levels), bin layout and the reference sketch, plus provenance;
    ``segments``: the sketch of each segment when the reference names a segment column
    (:mod:`driftwatch.windows.segments`)."""

    schema: FeatureSchema
    layout: SketchLayout
    sketch: Sketch
    meta: dict[str, Any] = field(default_factory=dict)
    segments: SegmentProfile | None = None

    @classmethod
    def build(
        cls,
        df: pd.DataFrame,
        *,
        numeric: Sequence[str] | None = None,
        categorical: Sequence[str] | None = None,
        score: str | None = "score",
        label: str | None = "label",
        decision: str | None = "decision",
        exposure: str | None = None,
        bins: int = 10,
        fine_bins: int = 200,
        top_k: int = 20,
        meta: dict[str, Any] | None = None,
        segment: str | None = None,
        segment_top_k: int = DEFAULT_TOP_K,
    ) -> ReferenceProfile:
        """Fit bins on ``df`` and sketch it.

        Features not named are inferred from dtypes (numbers numeric; booleans, text and
        the rest categorical), excluding the score/label/decision/exposure columns (and
        ``segment``: its ``segment_top_k`` most frequent values get sketches of their own).
        """
        if segment is not None and segment not in df.columns:
            raise SourceError(f"reference dataset lacks the segment column {segment!r}")
        special = {c for c in (score, label, decision, exposure, segment) if c}
        if numeric is None and categorical is None:
            cols = [c for c in df.columns if c not in special]
            numeric = [c for c in cols if is_numeric_column(df[c])]
            categorical = [c for c in cols if c not in numeric]
        numeric, categorical = list(numeric or ()), list(categorical or ())
        missing = [c for c in numeric + categorical if c not in df.columns]
        if missing:
            raise SourceError(f"reference dataset lacks feature columns: {', '.join(missing)}")
        levels, other = [], []
        for c in categorical:
            vc = level_texts(df[c]).dropna().value_counts(sort=False)
            # most frequent first, ties by name: deterministic across pandas versions
            order = sorted(vc.items(), key=lambda kv: (-kv[1], kv[0]))
            levels.append(tuple(k for k, _ in order[:top_k]))
            other.append(frozenset(k for k, _ in order[top_k:]))
        schema = FeatureSchema(tuple(numeric), tuple(categorical), tuple(levels), tuple(other))
        num = _numbers(df, numeric) if numeric else None
        sc = (
            df[score].to_numpy(dtype=np.float64, na_value=np.nan)
            if score and score in df.columns
            else np.full(len(df), np.nan)
        )
        layout = SketchLayout.fit(
            numeric_names=tuple(numeric),
            numeric=num,
            categorical_names=tuple(categorical),
            levels=tuple(levels),
            score=sc,
            coarse_bins=bins,
            fine_bins=fine_bins,
        )
        n = len(df)
        batch = frame_batch(df, schema, score=score, decision=decision, exposure=exposure)
        sketch = Sketch.empty(layout)
        sketch.add_batch(batch)
        add_frame_labels(sketch, df, batch, label)
        info = {"rows": n, "bins": bins, "fine_bins": fine_bins, "top_k": top_k}
        segs = None
        if segment is not None:
            segs = SegmentProfile.build(layout, batch, segment, df[segment].to_numpy(),
                                        segment_top_k)
            info["segment_top_k"] = int(segment_top_k)
        info.update(meta or {})
        return cls(schema=schema, layout=layout, sketch=sketch, meta=info, segments=segs)

    def segment_references(self) -> tuple[ReferenceProfile, ...]:
        """One profile per segment (code order): this profile's bins, the segment's sketch.
        Built once; empty when the reference has no segments."""
        cached = self.__dict__.get("_segment_refs")
        if cached is None:
            segs = self.segments
            cached = () if segs is None else tuple(
                ReferenceProfile(self.schema, self.layout, sk,
                                 {**self.meta, "rows": sk.n, "segment": name})
                for name, sk in zip(segs.names, segs.sketches, strict=True))
            self.__dict__["_segment_refs"] = cached
        return cached  # type: ignore[no-any-return]

    def missing_shares(self) -> dict[str, float]:
        """Each feature's share of missing values in the reference."""
        n = max(int(self.sketch.n), 1)
        out = {f: float(row[-1]) / n
               for f, row in zip(self.layout.numeric.names, self.sketch.num_coarse(),
                                 strict=True)}
        cl = self.layout.categorical
        out.update((f, float(self.sketch.cat[j][cl.missing_col]) / n)
                   for j, f in enumerate(cl.names))
        return out

    @classmethod
    def from_file(cls, path: str | Path, names: Sequence[str] | None = None, *,
                  given: str = REFERENCE_NAMES, fix: str = REFERENCE_FIX,
                  **kwargs: Any) -> ReferenceProfile:
        """Load a saved profile (``.json`` / ``.json.gz``) or build one from a dataset
        (``names``, ``given``, ``fix``: :func:`read_reference_table`'s; names given for a
        saved profile, which has no columns to name, are refused)."""
        p = Path(path)
        if p.name.endswith((".json", ".json.gz")):
            if names is not None:
                raise SourceError(f"{p} is a saved profile, not a CSV dataset, but column "
                                  f"names are given ({given}): remove them")
            return cls.load(p)
        prof = cls.build(read_reference_table(p, names, given=given, fix=fix), **kwargs)
        prof.meta.setdefault("source", p.name)
        return prof

    # -- persistence -------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        out = {
            "format": FORMAT_VERSION,
            "schema": self.schema.to_dict(),
            "layout": self.layout.to_dict(),
            "sketch": self.sketch.to_dict(),
            "meta": self.meta,
        }
        if self.segments is not None:  # absent otherwise: older fingerprints stay as they were
            out["segments"] = self.segments.to_dict()
        return out

    def to_json(self) -> bytes:
        return orjson.dumps(self.to_dict(), option=orjson.OPT_SORT_KEYS)

    @property
    def fingerprint(self) -> str:
        """Content hash: which reference a window was measured against."""
        return hashlib.sha256(self.to_json()).hexdigest()[:16]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReferenceProfile:
        if d.get("format") != FORMAT_VERSION:
            raise SourceError(f"unsupported reference profile format {d.get('format')!r}")
        layout = SketchLayout.from_dict(d["layout"])
        return cls(
            schema=FeatureSchema.from_dict(d["schema"]),
            layout=layout,
            sketch=Sketch.from_dict(layout, d["sketch"]),
            meta=dict(d.get("meta", {})),
            segments=SegmentProfile.from_dict(layout, d["segments"]) if d.get("segments")
            else None,
        )

    @classmethod
    def from_json(cls, data: bytes | str) -> ReferenceProfile:
        return cls.from_dict(orjson.loads(data))

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        data = self.to_json()
        tmp = p.with_name(p.name + ".tmp")
        if p.name.endswith(".gz"):
            tmp.write_bytes(gzip.compress(data, mtime=0))
        else:
            tmp.write_bytes(data)
        tmp.replace(p)
        return p

    @classmethod
    def load(cls, path: str | Path) -> ReferenceProfile:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise SourceError(f"cannot read reference profile {p}: {exc.strerror}") from exc
        if p.name.endswith(".gz"):
            raw = gzip.decompress(raw)
        return cls.from_json(raw)
