"""A seeded synthetic credit-application stream, its delayed outcomes and a reference set.

The population has skewed income, discrete account counts, a bounded utilization with
missing values and three categoricals. The production ("champion", version ``"1"``) model
is a FIXED logistic function of the logged features; an application is approved when its
score is below the cutoff. Outcomes exist only for approved applications (selective labels),
arrive 7–45 days later, and are drawn from the TRUE default probability: the model's own
in quiet periods, shifted under concept drift. Everything is a function of ``seed``.

>>> s = generate(scenario_plan("quiet", n_events=500, days=5), seed=1)
>>> len(s), bool((s.score[s.approved] < CUTOFF).all())
(500, True)
>>> rec = next(prediction_records(s))
>>> sorted(rec)
['applicant', 'application_id', 'channel', 'decision', 'loan', 'model', 'ts']
>>> generate(scenario_plan("quiet", n_events=50, days=1), seed=1).score.tolist() == \\
...     generate(scenario_plan("quiet", n_events=50, days=1), seed=1).score.tolist()
True
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from driftwatch.testing.scenarios import (
    DAY,
    HISTORY_PIVOT,
    Effects,
    ScenarioPlan,
    scenario_plan,
)

__all__ = [
    "CATEGORICAL",
    "CUTOFF",
    "FEATURE_PATHS",
    "MODEL_VERSION",
    "NUMERIC",
    "CreditStream",
    "champion_logit",
    "generate",
    "outcome_records",
    "prediction_records",
    "reference_table",
    "sample_applicants",
    "write_jsonl",
    "write_scenario",
]

NUMERIC = ("income", "loan_amount", "debt_to_income", "credit_history_months", "age",
           "num_open_accounts", "utilization")  # fmt: skip
CATEGORICAL = ("purpose", "home_ownership", "employment_type")
PURPOSES = ("car", "home", "education", "business", "debt_consolidation", "medical", "other")
HOME = ("rent", "own", "mortgage")
EMPLOYMENT = ("salaried", "self_employed", "unemployed", "retired", "student")
CHANNELS = ("web", "mobile", "branch", "broker")
CUTOFF = 0.25
MODEL_VERSION = "1"
# where each feature sits in a prediction message (what a connector maps)
FEATURE_PATHS = {
    "income": "applicant.income",
    "loan_amount": "loan.amount",
    "debt_to_income": "applicant.debt_to_income",
    "credit_history_months": "applicant.credit_history_months",
    "age": "applicant.age",
    "num_open_accounts": "applicant.num_open_accounts",
    "utilization": "applicant.utilization",
    "purpose": "loan.purpose",
    "home_ownership": "applicant.home_ownership",
    "employment_type": "applicant.employment_type",
}

_PURPOSE_LOGIT = np.array([-0.10, -0.30, 0.10, 0.35, 0.20, 0.25, 0.10])
_PURPOSE_SIZE = np.array([0.10, 1.00, -0.10, 0.60, 0.00, -0.50, -0.40])
_EMP_LOGIT = np.array([0.0, 0.25, 0.80, 0.0, 0.40])
_EMP_INCOME = np.array([0.0, 0.05, -1.0, -0.35, -0.9])
_HOME_LOGIT = np.array([0.15, -0.15, -0.10])
_INTERCEPT = -2.35


def _effect_arrays(plan: ScenarioPlan, ts: np.ndarray) -> dict[str, np.ndarray]:
    out = {f.name: np.zeros(len(ts)) for f in fields(Effects)}
    for ep in plan.episodes:
        m = (ts >= ep.start) & (ts < ep.end)
        for f in fields(Effects):
            v = getattr(ep.effects, f.name)
            if v:
                out[f.name][m] = v
    for start, eff in plan.lasting:
        m = ts >= start
        for f in fields(Effects):
            v = getattr(eff, f.name)
            if v:
                out[f.name][m] += v
    return out


def _choice(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """Row-wise categorical draw from a ``(n, k)`` probability matrix."""
    cdf = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(probs))[:, None]
    return np.minimum((u > cdf).sum(axis=1), probs.shape[1] - 1)


def sample_applicants(
    n: int, rng: np.random.Generator, effects: dict[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """``n`` applicants: numeric features (float, NaN missing) and categorical codes."""
    eff = effects or {f.name: np.zeros(n) for f in fields(Effects)}
    thin = rng.random(n) < eff["thin_file"]
    age = np.where(thin, rng.uniform(18, 26, n), 18 + rng.gamma(4.0, 5.5, n))
    age = np.clip(np.floor(age), 18, 85)
    emp_p = np.tile([0.62, 0.14, 0.06, 0.10, 0.08], (n, 1))
    emp_p[:, 3] = np.where(age >= 62, 3.0, np.where(age < 50, 0.0, 0.1))
    emp_p[:, 4] = np.where(age < 25, 0.5, np.where(age < 35, 0.04, 0.0))
    emp = _choice(rng, emp_p)
    sd = np.where(emp == 1, 0.65, 0.5)
    log_inc = (np.log(48_000) + 0.012 * (age - 40) - 0.0002 * (age - 40) ** 2
               + _EMP_INCOME[emp] + rng.normal(0, 1, n) * sd + eff["income_shift"])
    income = np.round(np.exp(log_inc), -1)
    home_p = np.stack([np.full(n, 1.0), np.clip(0.05 + 0.02 * (age - 25), 0.02, 1.2),
                       np.clip(0.1 + 0.03 * (age - 22), 0.02, 1.0)], axis=1)
    home = _choice(rng, home_p)
    pur_p = np.tile([0.17, 0.10, 0.07, 0.07, 0.36, 0.07, 0.16], (n, 1))
    pur_p[:, 4] *= np.exp(0.6 * eff["purpose_tilt"])
    pur_p[:, 3] *= np.exp(0.8 * eff["purpose_tilt"])
    pur_p[:, 2] *= np.where(emp == 4, 6.0, 1.0)
    purpose = _choice(rng, pur_p)
    loan = np.exp(np.log(income * 0.22 + 500) + _PURPOSE_SIZE[purpose] + rng.normal(0, 0.45, n))
    loan = np.round(np.clip(loan, 500, 150_000), -2)
    dti = rng.beta(2.2, 5.5, n) + 0.08 * np.minimum(loan / income, 3) + eff["dti_shift"]
    dti = np.round(np.clip(dti, 0, 1.2), 3)
    hist_max = (age - 18) * 12 + 6
    hist = np.where(thin, rng.uniform(0, 24, n), hist_max * rng.beta(3.0, 1.6, n))
    hist = np.floor(np.minimum(hist, hist_max))
    accounts = np.minimum(rng.poisson(0.5 + hist / 40), 30).astype(np.float64)
    util = np.round(np.clip(rng.beta(2.0, 3.2, n) + eff["utilization_shift"], 0, 1), 3)
    util[(accounts == 0) | (rng.random(n) < 0.05)] = np.nan
    dti[rng.random(n) < eff["dti_missing"]] = np.nan
    return {
        "income": income, "loan_amount": loan, "debt_to_income": dti,
        "credit_history_months": hist, "age": age, "num_open_accounts": accounts,
        "utilization": util,
        "purpose": purpose, "home_ownership": home, "employment_type": emp,
    }  # fmt: skip


def champion_logit(f: dict[str, np.ndarray], dti_fill: np.ndarray | None = None) -> np.ndarray:
    """Log-odds of default under the fixed champion model (missing utilization -> 0.45)."""
    util = np.where(np.isnan(f["utilization"]), 0.45, f["utilization"])
    dti = f["debt_to_income"] if dti_fill is None else dti_fill
    return (_INTERCEPT
            - 0.9 * (np.log(f["income"]) - np.log(45_000))
            + 2.2 * (dti - 0.35) + 1.6 * (util - 0.4)
            - 0.45 * (np.log1p(f["credit_history_months"]) - 4.8)
            - 0.012 * (f["age"] - 40) + 0.05 * (f["num_open_accounts"] - 4)
            + 0.25 * (np.log(f["loan_amount"]) - np.log(10_000))
            + _PURPOSE_LOGIT[f["purpose"]] + _EMP_LOGIT[f["employment_type"]]
            + _HOME_LOGIT[f["home_ownership"]])  # fmt: skip


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


@dataclass(eq=False)
class CreditStream:
    """One generated stream, columnar: predictions and the outcomes of approved ones."""

    plan: ScenarioPlan
    ids: np.ndarray  # str
    ts: np.ndarray  # int64 epoch seconds, non-decreasing
    features: dict[str, np.ndarray]  # numeric as float (NaN missing), categoricals as codes
    score: np.ndarray
    true_pd: np.ndarray
    channel: np.ndarray  # codes into CHANNELS
    outcome_index: np.ndarray  # rows of predictions that have an outcome, by outcome time
    outcome_ts: np.ndarray  # int64
    label: np.ndarray  # int8, 1 = defaulted

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def approved(self) -> np.ndarray:
        return self.score < CUTOFF


def generate(
    plan: ScenarioPlan,
    *,
    seed: int = 0,
    delay_days: tuple[float, float] = (7.0, 45.0),
    outcomes_until_end: bool = True,
) -> CreditStream:
    """Draw the stream of ``plan`` (same seed, same stream)."""
    rng = np.random.default_rng(seed)
    n = plan.n_events
    step = (plan.end - plan.start) / n
    ts = (plan.start + (np.arange(n) + rng.random(n)) * step).astype(np.int64)
    eff = _effect_arrays(plan, ts.astype(np.float64))
    f = sample_applicants(n, rng, eff)
    # a feed fault loses values in the log only: the model scored the real value
    lost = np.isnan(f["debt_to_income"])
    dti_seen = np.where(lost, np.round(rng.beta(2.2, 5.5, n) + 0.1, 3), f["debt_to_income"])
    z = champion_logit(f, dti_seen)
    score = np.round(_sigmoid(z), 5)
    history = np.log1p(f["credit_history_months"]) - HISTORY_PIVOT
    true_pd = _sigmoid(z + eff["concept"] - eff["history_weight"] * history)
    channel = _choice(rng, np.tile([0.45, 0.25, 0.20, 0.10], (n, 1)))
    approved = score < CUTOFF
    delay = rng.uniform(delay_days[0] * DAY, delay_days[1] * DAY, n)
    label = (rng.random(n) < true_pd).astype(np.int8)
    idx = np.flatnonzero(approved)
    out_ts = (ts[idx] + delay[idx]).astype(np.int64)
    if outcomes_until_end:
        keep = out_ts < plan.end
        idx, out_ts = idx[keep], out_ts[keep]
    order = np.argsort(out_ts, kind="stable")
    ids = np.char.add("A", np.char.zfill(np.arange(n).astype(str), 8))
    return CreditStream(plan, ids, ts, f, score, true_pd, channel, idx[order], out_ts[order],
                        label[idx[order]])


def _num(a: np.ndarray, as_int: bool = False) -> list[Any]:
    if as_int:
        return [None if v != v else int(v) for v in a.tolist()]
    return [None if v != v else v for v in a.tolist()]


def prediction_records(s: CreditStream) -> Iterator[dict[str, Any]]:
    """The prediction messages, as the production service would log them."""
    f = s.features
    cols = [s.ids.tolist(), s.ts.tolist(), _num(f["age"], True), _num(f["income"], True),
            [EMPLOYMENT[i] for i in f["employment_type"]],
            [HOME[i] for i in f["home_ownership"]],
            _num(f["credit_history_months"], True), _num(f["num_open_accounts"], True),
            _num(f["debt_to_income"]), _num(f["utilization"]),
            _num(f["loan_amount"], True), [PURPOSES[i] for i in f["purpose"]],
            s.score.tolist(), [CHANNELS[i] for i in s.channel],
            np.round(f["loan_amount"] * 0.01 + 25, 2).tolist()]  # fmt: skip
    for i, (eid, t, age, inc, emp, home, hist, acc, dti, util, amt, pur, sc, ch, fee) in (
        enumerate(zip(*cols, strict=True))
    ):
        applicant: dict[str, Any] = {
            "age": age, "income": inc, "employment_type": emp, "home_ownership": home,
            "credit_history_months": hist, "num_open_accounts": acc, "debt_to_income": dti,
        }  # fmt: skip
        if util is not None or i % 2 == 0:  # missing as null or as an absent key
            applicant["utilization"] = util
        yield {
            "application_id": eid,
            "ts": t,
            "applicant": applicant,
            "loan": {"amount": amt, "purpose": pur, "fee": fee},
            "model": {"score": sc, "version": MODEL_VERSION},
            "decision": "approve" if sc < CUTOFF else "decline",
            "channel": ch,
        }


def outcome_records(s: CreditStream) -> Iterator[dict[str, Any]]:
    """The outcome messages (approved applications only), in outcome-time order."""
    ids = s.ids[s.outcome_index].tolist()
    for eid, t, lab in zip(ids, s.outcome_ts.tolist(), s.label.tolist(), strict=True):
        yield {"application_id": eid, "outcome_ts": t, "defaulted": lab}


def write_jsonl(path: Path, records: Iterable[dict[str, Any]], *, compress: bool) -> int:
    """Write JSON lines (gzip with a zero mtime when ``compress``: same input, same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with open(path, "wb") as raw:
        out = gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) \
            if compress else raw
        buf: list[bytes] = []
        for rec in records:
            buf.append(orjson.dumps(rec))
            n += 1
            if len(buf) >= 10_000:
                out.write(b"\n".join(buf) + b"\n")
                buf.clear()
        if buf:
            out.write(b"\n".join(buf) + b"\n")
        if compress:
            out.close()
    return n


def reference_table(n_rows: int = 30_000, *, seed: int = 0) -> pa.Table:
    """Training data from the quiet population: features, score, label, decision."""
    rng = np.random.default_rng([seed, 1])
    f = sample_applicants(n_rows, rng)
    score = np.round(_sigmoid(champion_logit(f)), 5)
    label = (rng.random(n_rows) < _sigmoid(champion_logit(f))).astype(np.int64)
    cols: dict[str, pa.Array] = {}
    for name in NUMERIC:
        ints = name in ("age", "credit_history_months", "num_open_accounts", "income",
                        "loan_amount")  # fmt: skip
        cols[name] = pa.array(f[name].astype(np.int64) if ints else f[name],
                              from_pandas=True)  # fmt: skip
    for name, levels in zip(CATEGORICAL, (PURPOSES, HOME, EMPLOYMENT), strict=True):
        cols[name] = pa.array(np.asarray(levels, dtype=object)[f[name]].tolist(), pa.string())
    cols["score"] = pa.array(score)
    cols["label"] = pa.array(label)
    cols["decision"] = pa.array(np.where(score < CUTOFF, "approve", "decline").tolist())
    return pa.table(cols)


def write_scenario(
    name: str,
    out_dir: str | Path,
    *,
    seed: int = 0,
    n_events: int | None = None,
    days: float | None = None,
    reference_rows: int = 30_000,
    compress: bool = True,
    delay_days: tuple[float, float] = (7.0, 45.0),
) -> dict[str, Path]:
    """Write ``predictions.jsonl[.gz]``, ``outcomes.jsonl[.gz]``, ``reference.parquet`` and
    ``episodes.json`` (the plan, for tests) under ``out_dir``; returns their paths."""
    out = Path(out_dir)
    plan = scenario_plan(name, n_events=n_events, days=days)
    stream = generate(plan, seed=seed, delay_days=delay_days)
    ext = ".jsonl.gz" if compress else ".jsonl"
    paths = {
        "predictions": out / f"predictions{ext}",
        "outcomes": out / f"outcomes{ext}",
        "reference": out / "reference.parquet",
        "episodes": out / "episodes.json",
    }
    write_jsonl(paths["predictions"], prediction_records(stream), compress=compress)
    write_jsonl(paths["outcomes"], outcome_records(stream), compress=compress)
    if reference_rows:
        pq.write_table(reference_table(reference_rows, seed=seed), paths["reference"],
                       compression="zstd", compression_level=9)  # fmt: skip
    else:
        del paths["reference"]
    meta = plan.to_dict() | {
        "seed": seed,
        "cutoff": CUTOFF,
        "model_version": MODEL_VERSION,
        "delay_days": list(delay_days),
        "n_outcomes": len(stream.outcome_index),
        "approval_rate": round(float(stream.approved.mean()), 4),
    }
    paths["episodes"].write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2) + b"\n")
    return paths
