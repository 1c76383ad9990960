"""Random but plausible user tables for the onboarding fuzz: what people bring to ``init``.

A :class:`UserData` is drawn by hypothesis (its shape: rows, columns, kinds, names, id, time,
score and label formats, file formats) and filled from a seeded numpy generator (its values),
so a failure shrinks on shape and replays from one seed. :func:`write_user_data` writes a
reference table (features, score, label), a prediction sample (id, time, features, score; the
features drifted), its outcomes (id, time, label), and a later, more drifted stream with its
outcomes for replay, in the drawn formats.
"""

from __future__ import annotations

import csv
import gzip
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
from hypothesis import strategies as st

__all__ = ["UserData", "user_data", "write_user_data"]

KINDS = ("float_nan", "int", "int_sentinel", "bool", "low_card", "high_card", "odd_text",
         "date_text", "all_missing", "constant", "mixed")
NAMES = ("income", "age", "x", "Feature 1", "amount.usd", "näive", "日本語", " pad ", "pad",
         "1", "2.5", "_", "Unnamed: 0", "a,b", 'quote"d', "tab\there", "CamelCase",
         "camel_case", "-", "0", "emoji \U0001F600", "x.y.z")
#: the names the stream's own fields have: a feature named so is a clash the user made
ROLE_NAMES = ("id", "score", "label", "ts", "application_id")
ID_FORMATS = ("int", "zero_padded", "uuid", "hex64")
TIME_FORMATS = ("epoch_s", "epoch_ms", "iso_z", "iso_naive", "iso_offset", "date_only")
SCORE_FORMATS = ("prob", "percent", "prob_missing")
LABELS = (("0", "1"), ("no", "yes"), ("N", "Y"), ("good", "bad"), ("False", "True"),
          ("0", "0"), ("good", "good"))
FILE_FORMATS = ("csv,", "csv;", "csv\t", "jsonl", "parquet")
REF_FORMATS = ("csv,", "csv;", "csv\t", "parquet")
DATE_STYLES = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%Y%m%d", "%d.%m.%Y", "%b %d %Y")
ODD = ("a b", "naïve", "ü,x", 'say "hi"', "tab\tin", "日本", " lead", "trail ", "'", "")


@dataclass(frozen=True)
class UserData:
    """The shape of one user's data; the values come from ``seed``."""

    seed: int
    n_ref: int
    n_live: int
    one_value: bool
    kinds: tuple[str, ...]
    names: tuple[str, ...]
    id_format: str
    time_format: str
    score_format: str
    labels: tuple[str, str]
    ref_format: str
    live_format: str
    outcomes_format: str
    drift: float
    gzip_live: bool = False
    ref_has_roles: bool = False  # the reference carries the id and time columns too
    stream_score_format: str = "prob"  # the stream's score, as the reference's or not
    dup_ids: bool = False
    stream_change: str = "none"  # the later stream: none | drop_col | extra_col
    label_gaps: bool = False  # outcomes with no label on some rows
    flags: tuple[str, ...] = ()


_flags = st.lists(st.sampled_from([("--pane", "1"), ("--pane", "7"), ("--rows", "1"),
                                   ("--rows", "25"), ("--score-is", "p_good"),
                                   ("--exposure-field", "none")]),
                  max_size=2, unique=True)


def _rarely(draw: st.DrawFn, one_in: int) -> bool:
    """True one time in ``one_in``; False is the simple case hypothesis shrinks (and, in a
    derandomised run, starts) towards."""
    return draw(st.integers(1, one_in)) == one_in


def _rows(draw: st.DrawFn) -> int:
    """A few hundred rows, or now and then an edge: none, one, two, three."""
    return draw(st.sampled_from([0, 1, 2, 3])) if _rarely(draw, 6) else draw(
        st.integers(30, 400))


@st.composite
def user_data(draw: st.DrawFn) -> UserData:
    """Draw a :class:`UserData`."""
    k = draw(st.integers(1, 30))
    kinds = tuple(draw(st.lists(st.sampled_from(KINDS), min_size=k, max_size=k)))
    # mostly plain names, so that most examples get past init; an odd one now and then
    odd = st.one_of(st.sampled_from(NAMES), st.text(max_size=8))
    names = [draw(odd) if _rarely(draw, 5) else f"feature_{i}" for i in range(k)]
    if _rarely(draw, 10):
        names[draw(st.integers(0, k - 1))] = draw(st.sampled_from(ROLE_NAMES))
    live_format = draw(st.sampled_from(FILE_FORMATS))
    score = "none" if _rarely(draw, 8) else draw(st.sampled_from(SCORE_FORMATS))
    return UserData(
        seed=draw(st.integers(0, 2**16)), n_ref=_rows(draw), n_live=_rows(draw),
        one_value=_rarely(draw, 10),
        kinds=kinds, names=tuple(names), id_format=draw(st.sampled_from(ID_FORMATS)),
        time_format="none" if _rarely(draw, 8) else draw(st.sampled_from(TIME_FORMATS)),
        score_format=score,
        labels=draw(st.sampled_from(LABELS)),
        ref_format=draw(st.sampled_from(REF_FORMATS)),
        live_format=live_format,
        outcomes_format=draw(st.sampled_from(FILE_FORMATS)),
        drift=draw(st.sampled_from([0.0, 0.5, 2.0])),
        gzip_live=_rarely(draw, 5) and live_format != "parquet",
        label_gaps=draw(st.booleans()),
        ref_has_roles=_rarely(draw, 4),
        stream_score_format=score if not _rarely(draw, 4) else draw(
            st.sampled_from(SCORE_FORMATS)),
        dup_ids=_rarely(draw, 6),
        stream_change=draw(st.sampled_from(["none", "none", "drop_col", "extra_col"])),
        flags=tuple(x for f in draw(_flags) for x in f))


def _column(kind: str, rng: np.random.Generator, n: int, shift: float, slot: int) -> list[Any]:
    """``n`` values of a column of ``kind``, drifted by ``shift``; ``slot`` (its position)
    keeps a column's date style the same in every file."""
    if kind == "float_nan":
        v: list[Any] = (rng.lognormal(3 + shift, 1, n)).tolist()
        return [None if rng.random() < 0.1 else x for x in v]
    if kind == "int":
        return rng.integers(0, 50 + int(10 * shift), n).tolist()
    if kind == "int_sentinel":
        v = rng.integers(18, 80, n).tolist()
        codes = (-1, 999, 9999)
        return [codes[i % 3] if rng.random() < 0.15 + 0.1 * shift else x
                for i, x in enumerate(v)]
    if kind == "bool":
        return (rng.random(n) < 0.3 + 0.2 * min(shift, 1)).tolist()
    if kind == "low_card":
        return [f"c{i}" for i in rng.integers(0, 4 + int(shift), n)]
    if kind == "high_card":
        return [f"user_{i}" for i in rng.integers(0, 10**6, n)]
    if kind == "odd_text":
        return [ODD[i] for i in rng.integers(0, len(ODD), n)]
    if kind == "date_text":
        style = DATE_STYLES[slot % len(DATE_STYLES)]
        days = rng.integers(0, 3650 + int(365 * shift), n)
        base = pd.Timestamp("2015-01-01")
        return [(base + pd.Timedelta(days=int(d))).strftime(style) for d in days]
    if kind == "all_missing":
        return [None] * n
    if kind == "constant":
        return [7] * n
    # mixed: numbers, text and missing in one column
    pool: list[Any] = [1, 2.5, "abc", None, "3", True, "n/a"]
    return [pool[i] for i in rng.integers(0, len(pool), n)]


def _ids(fmt: str, rng: np.random.Generator, n: int) -> list[Any]:
    base = rng.permutation(10 * n + 10)[:n] + 1
    if fmt == "int":
        return [int(i) for i in base]
    if fmt == "zero_padded":
        return [f"{int(i):08d}" for i in base]
    if fmt == "uuid":
        return [str(uuid.UUID(int=int(rng.integers(0, 2**62)) << 64 | int(i))) for i in base]
    return [f"{int(rng.integers(0, 2**62)):016x}{int(i):048x}" for i in base]


def _times(fmt: str, n: int, start: float) -> list[Any] | None:
    t = start + np.arange(n) * 600.0  # one event every 10 minutes
    if fmt == "none":
        return None
    if fmt == "epoch_s":
        return [int(x) for x in t]
    if fmt == "epoch_ms":
        return [int(x * 1000) for x in t]
    stamps = pd.to_datetime(t, unit="s")
    if fmt == "iso_z":
        return [s.strftime("%Y-%m-%dT%H:%M:%SZ") for s in stamps]
    if fmt == "iso_naive":
        return [s.strftime("%Y-%m-%d %H:%M:%S") for s in stamps]
    if fmt == "iso_offset":
        return [s.tz_localize("UTC").tz_convert("Asia/Kolkata").isoformat() for s in stamps]
    return [s.strftime("%Y-%m-%d") for s in stamps]


def _score(fmt: str, rng: np.random.Generator, n: int) -> list[Any] | None:
    if fmt == "none":
        return None
    p = rng.beta(2, 5, n)
    if fmt == "percent":
        return [round(float(x) * 100, 2) for x in p]
    return [None if fmt == "prob_missing" and rng.random() < 0.02 else round(float(x), 6)
            for x in p]


def _unique(names: list[str]) -> list[str]:
    """Repeated names as pandas reads them from a CSV header: ``x``, ``x.1``, ..."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        n = seen.get(name, 0)
        seen[name] = n + 1
        out.append(name if n == 0 else f"{name}.{n}")
    return out


def _write(path: Path, fmt: str, cols: list[tuple[str, list[Any]]]) -> None:
    n = len(cols[0][1]) if cols else 0
    if fmt.startswith("csv"):
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, delimiter=fmt[3:])
            w.writerow([c for c, _ in cols])
            for i in range(n):
                w.writerow(["" if v[i] is None else v[i] for _, v in cols])
    elif fmt == "jsonl":
        keys = _unique([c for c, _ in cols])
        with path.open("wb") as fh:
            for i in range(n):
                fh.write(orjson.dumps({k: v[i] for k, (_, v) in zip(keys, cols,
                                                                      strict=True)}) + b"\n")
    else:
        data = {}
        for key, (_, v) in zip(_unique([c for c, _ in cols]), cols, strict=True):
            types = {type(x) for x in v if x is not None}
            # a Parquet column holds one type: a mixed column is text there
            data[key] = [None if x is None else str(x) for x in v] if len(types) > 1 else v
        pd.DataFrame(data).to_parquet(path)


def _suffix(fmt: str) -> str:
    return {"jsonl": ".jsonl", "parquet": ".parquet"}.get(fmt, ".csv")


def write_user_data(u: UserData, tmp: Path) -> dict[str, Path]:
    """Write the reference, the samples init reads (predictions, outcomes) and the stream
    replay reads (later, more drifted) of ``u`` under ``tmp``; their paths."""
    rng = np.random.default_rng(u.seed)
    feats = [(name, kind) for name, kind in zip(u.names, u.kinds, strict=True)]

    def table(n: int, shift: float) -> list[tuple[str, list[Any]]]:
        return [(name, _column("constant" if u.one_value else kind, rng, n, shift, i))
                for i, (name, kind) in enumerate(feats)]

    bad_word, good_word = u.labels[1], u.labels[0]

    def labels(n: int, gaps: bool = False) -> list[str | None]:
        out: list[str | None] = [bad_word if x else good_word for x in rng.random(n) < 0.3]
        return [None if gaps and i % 7 == 3 else v for i, v in enumerate(out)]

    def stream(n: int, shift: float, start: float) -> tuple[list[Any], list[Any]]:
        ids = _ids(u.id_format, rng, n)
        if u.dup_ids and n > 2:
            ids[1] = ids[0]  # a resent record
        head: list[tuple[str, list[Any]]] = [("application_id", ids)]
        if (times := _times(u.time_format, n, start)) is not None:
            head.append(("ts", times))
        score = _score(u.stream_score_format, rng, n)
        tail = [("score", score)] if score is not None else []
        outcomes: list[tuple[str, list[Any]]] = [("application_id", ids)]
        if (out_times := _times(u.time_format, n, start + 7 * 86400)) is not None:
            outcomes.append(("outcome_ts", out_times))
        outcomes.append(("label", labels(n, u.label_gaps)))
        return head + table(n, shift) + tail, outcomes

    ref = table(u.n_ref, 0.0)
    if u.ref_has_roles:  # a training extract that kept its keys
        ref[:0] = [("application_id", _ids(u.id_format, rng, u.n_ref)),
                   ("ts", _times(u.time_format, u.n_ref, 1_600_000_000.0) or [None] * u.n_ref)]
    if (score := _score(u.score_format, rng, u.n_ref)) is not None:
        ref.append(("score", score))
    ref.append(("label", labels(u.n_ref)))
    gz = ".gz" * u.gzip_live
    paths = {"reference": tmp / f"reference{_suffix(u.ref_format)}",
             "sample": tmp / f"predictions{_suffix(u.live_format)}{gz}",
             "outcomes": tmp / f"outcomes{_suffix(u.outcomes_format)}",
             "stream": tmp / f"stream{_suffix(u.live_format)}{gz}",
             "stream_outcomes": tmp / f"stream_outcomes{_suffix(u.outcomes_format)}"}
    _write(paths["reference"], u.ref_format, ref)
    sample, outcomes = stream(u.n_live, u.drift, 1_700_000_000.0)
    _write(paths["sample"], u.live_format, sample)
    _write(paths["outcomes"], u.outcomes_format, outcomes)
    # the stream replay reads: later, longer, drifted further
    later, later_outcomes = stream(max(2 * u.n_live, 50), u.drift + 1.0, 1_701_000_000.0)
    if u.stream_change == "drop_col":  # a join upstream lost a feature
        gone = feats[-1][0]
        later = [c for c in later if c[0] != gone]
    elif u.stream_change == "extra_col":  # a field the reference never had
        later.append(("brand_new", [f"n{i % 3}" for i in range(len(later[0][1]))]))
    _write(paths["stream"], u.live_format, later)
    _write(paths["stream_outcomes"], u.outcomes_format, later_outcomes)
    for key in ("sample", "stream"):
        if u.gzip_live:
            paths[key].write_bytes(gzip.compress(paths[key].read_bytes(), mtime=0))
    return paths
