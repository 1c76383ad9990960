"""False alarms and power of calibrated levels, fixed thresholds and p-values, by window size.

Stationary streams at window sizes 1k, 10k, 100k and 1M events, 20 numeric features of
assorted shapes (normal, lognormal, Poisson, t, gamma, beta...), a model score and an
approval decision. Everything works on sketches: a window is multinomial counts on the
reference's fine bins (exactly what the sketch of that many events holds), assessed by
the real detectors (:func:`~driftwatch.detectors.assess.assess`) against levels from the
real :class:`~driftwatch.detectors.calibrate.Calibrator`.

Scenarios (one run, same reference and bins):

* **A. stream from the fixed reference** (the reference is the population; calibration
  with ``reference_noise: false``). Each calibrated detector's false-alarm rate per
  feature-window must lie in the binomial 99% interval of the configured rate.
* **B. stream from the population, reference re-sampled** (the reference is one sample of
  n_ref; each window is judged against a fresh one, so windows are independent trials of
  the two-sample null; calibration as shipped, ``reference_noise: true``). Same check.
* **C. stream from the population, one fixed reference sample** (production): reported,
  not checked. For one fixed reference, windows are not independent trials: once windows
  outgrow the reference, its own sampling error is a fixed offset.

Beside each: the rules of thumb (the registry's effect sizes: PSI 0.1, KS 0.1, ...) and
per-feature p-values at alpha = 0.05 (KS, chi-square). Then power: the smallest mean shift
(in sds of a normal feature) that each rule flags in at least half the windows, per size.

    python benchmarks/false_alarms.py [--windows 300] [--model-windows 3000] [--draws 4000]

Exit status 1 when a checked rate falls outside its interval.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from driftwatch.detectors.assess import assess  # noqa: E402
from driftwatch.detectors.bins import BinGeometry  # noqa: E402
from driftwatch.detectors.calibrate import Calibrator  # noqa: E402
from driftwatch.detectors.config import DEFAULT_THRESHOLDS, DetectorConfig  # noqa: E402
from driftwatch.detectors.registry import CALIBRATED_LEVELS, rate_key  # noqa: E402
from driftwatch.windows.profile import ReferenceProfile  # noqa: E402
from driftwatch.windows.sketch import Sketch  # noqa: E402

SIZES = (1_000, 10_000, 100_000, 1_000_000)
N_REF = 200_000
APPROVAL = 0.7
FEATURE_STATS = ("psi", "kl_cur_ref", "kl_ref_cur", "js", "hellinger", "chi2", "cramers_v",
                 "ks", "wasserstein")
MODEL_STATS = ("score_psi", "variance_ratio", "approval_rate")
DISTS = [
    stats.norm(0, 1), stats.lognorm(0.6, scale=math.exp(10)), stats.poisson(3), stats.t(4),
    stats.gamma(2.0), stats.expon(), stats.beta(2, 5), stats.uniform(0, 1),
    stats.norm(50, 10), stats.lognorm(1.0), stats.poisson(12), stats.gamma(0.7),
    stats.t(10), stats.beta(0.8, 0.8), stats.norm(-3, 0.2), stats.lognorm(0.3),
    stats.weibull_min(1.5), stats.logistic(), stats.laplace(), stats.chi2(3),
]
SCORE = stats.beta(2, 5)


# -- population and reference ---------------------------------------------------------------
def _fine_mass(dist, edges: np.ndarray, width: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    m = np.diff(np.concatenate(([0.0], dist.cdf(edges), [1.0])))
    out = np.zeros(width)
    out[: len(m)] = np.clip(m, 0, None)
    return out / out.sum()


def build_reference(rng: np.random.Generator) -> ReferenceProfile:
    df = pd.DataFrame({f"x{j}": d.rvs(N_REF, random_state=rng).astype(float)
                       for j, d in enumerate(DISTS)})
    df["score"] = SCORE.rvs(N_REF, random_state=rng)
    df["decision"] = np.where(rng.uniform(size=N_REF) < APPROVAL, "approve", "decline")
    prof = ReferenceProfile.build(df, numeric=list(df.columns[:20]), label=None)
    _midpoint_moments(prof.sketch)
    return prof


def _midpoint_moments(s: Sketch) -> None:
    """Score moments from the fine histogram's representative points, as the windows'
    (a window here is counts only: both sides must measure variance the same way)."""
    mid = BinGeometry.of(s.layout.score).mid[0]
    c = s.score_fine[0, :-1].astype(np.float64)
    x = mid - s.layout.score_center
    s.n_score = int(c.sum())
    s.score_sum = float((c * x).sum())
    s.score_sumsq = float((c * x * x).sum())


class Population:
    """Fine-bin shares to draw windows (and fresh references) from."""

    def __init__(self, prof: ReferenceProfile, *, from_reference: bool) -> None:
        lay = prof.layout
        self.layout = lay
        sk = prof.sketch
        if from_reference:
            self.num = sk.num_fine / sk.num_fine.sum(axis=1, keepdims=True)
            self.score = sk.score_fine[0] / sk.score_fine[0].sum()
            app, dec = int(sk.decisions[1]), int(sk.decisions[0])
            self.approval = app / (app + dec)
        else:
            w = lay.numeric.fine_width
            self.num = np.stack([_fine_mass(d, e, w)
                                 for d, e in zip(DISTS, lay.numeric.fine_edges, strict=True)])
            self.score = _fine_mass(SCORE, lay.score.fine_edges[0], lay.score.fine_width)
            self.approval = APPROVAL

    def sketch(self, rng: np.random.Generator, n: int, num: np.ndarray | None = None) -> Sketch:
        s = Sketch.empty(self.layout)
        s.n = n
        s.num_fine = rng.multinomial(n, self.num if num is None else num)
        s.score_fine = rng.multinomial(n, self.score)[None, :]
        app = int(rng.binomial(n, self.approval))
        s.decisions = np.array([n - app, app, 0], dtype=np.int64)
        _midpoint_moments(s)
        return s


# -- rates -----------------------------------------------------------------------------------
def _interval(rate: float, trials: int) -> tuple[float, float]:
    lo, hi = stats.binom.interval(0.99, trials, rate)
    return float(lo) / trials, float(hi) / trials


def _hits(a, rate: float) -> dict[str, list[bool]]:  # type: ignore[no-untyped-def]
    """Per signal: calibrated, fixed-rule and p-value alarms of one window."""
    key = rate_key(rate)
    out: dict[str, list[bool]] = defaultdict(list)
    for r in a.signals:
        name = r.signal
        if name not in FEATURE_STATS and name not in MODEL_STATS:
            continue
        value = abs(r.details["abs_change"]) if name == "approval_rate" else r.value
        level = (r.details.get(CALIBRATED_LEVELS) or {}).get(key)
        if level is not None and math.isfinite(value):
            out[f"cal:{name}"].append(value > level)
        if name in DEFAULT_THRESHOLDS and math.isfinite(value):
            out[f"fixed:{name}"].append(value >= DEFAULT_THRESHOLDS[name])
        if name in ("ks", "chi2") and r.p_value is not None:
            out[f"p<0.05:{name}"].append(r.p_value < 0.05)
    return out


def run_scenario(name: str, prof: ReferenceProfile, cals: dict[int, Calibrator],
                 pop: Population, windows: int, rate: float, seed: int,
                 fresh_reference: bool, model_windows: int) -> dict[int, dict[str, float]]:
    """``windows`` windows with every signal, then model-level signals alone up to
    ``model_windows`` (one trial per window: they need more windows for the same check)."""
    everything = DetectorConfig(detectors=("drift", "confidence", "business"), aggregate=())
    model_only = DetectorConfig(detectors=MODEL_STATS, aggregate=())
    out: dict[int, dict[str, float]] = {}
    for n in SIZES:
        rng = np.random.default_rng([seed, n])
        acc: dict[str, list[bool]] = defaultdict(list)
        for w in range(max(windows, model_windows)):
            ref = prof
            if fresh_reference:
                ref = ReferenceProfile(prof.schema, prof.layout, pop.sketch(rng, N_REF))
            cfg = everything if w < windows else model_only
            a = assess(ref, pop.sketch(rng, n), model="bench", window_id=w, start_time=0.0,
                       end_time=1.0, config=cfg, calibrator=cals[n])
            for k, v in _hits(a, rate).items():
                if w < windows or k.split(":")[1] in MODEL_STATS:
                    acc[k] += v
        out[n] = {k: float(np.mean(v)) for k, v in sorted(acc.items())}
        out[n]["_trials_feature"] = windows * len(DISTS)
        out[n]["_trials_model"] = max(windows, model_windows)
        print(f"  {name} n={n:>9,}: done", file=sys.stderr)
    return out


# -- power -----------------------------------------------------------------------------------
def power(prof: ReferenceProfile, cal: dict[int, Calibrator], rate: float, seed: int,
          windows: int = 40) -> dict[int, dict[str, float | None]]:
    """Smallest mean shift (sds) of feature x0 (normal) each rule flags in >= 50% of
    windows, on a grid of shifts; None when even the largest is missed."""
    shifts = np.round(np.geomspace(0.0005, 1.0, 34), 4)
    pop = Population(prof, from_reference=True)
    lay = prof.layout.numeric
    base = _fine_mass(stats.norm(0, 1), lay.fine_edges[0], lay.fine_width)
    cfg = DetectorConfig(detectors=("psi", "ks", "wasserstein"), features=("x0",),
                         aggregate=())
    key = rate_key(rate)
    out: dict[int, dict[str, float | None]] = {}
    for n in SIZES:
        rng = np.random.default_rng([seed, n, 7])
        found: dict[str, float | None] = {}
        for d in shifts:
            num = pop.num.copy()
            # the reference's own shares, moved by d sds (likelihood ratio per fine bin)
            moved = _fine_mass(stats.norm(d, 1), lay.fine_edges[0], lay.fine_width)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = np.where(base > 0, moved / base, 0.0)
            num[0] = num[0] * ratio / (num[0] * ratio).sum()
            rules: dict[str, list[bool]] = defaultdict(list)
            for w in range(windows):
                a = assess(prof, pop.sketch(rng, n, num), model="p", window_id=w,
                           start_time=0.0, end_time=1.0, config=cfg, calibrator=cal[n])
                for r in a.signals:
                    rules[f"cal:{r.signal}"].append(r.value > r.details[CALIBRATED_LEVELS][key])
                    rules[f"fixed:{r.signal}"].append(r.value >= DEFAULT_THRESHOLDS[r.signal])
                    if r.signal == "ks":
                        rules["p<0.05:ks"].append(r.p_value < 0.05)
            for k, v in rules.items():
                if k not in found and np.mean(v) >= 0.5:
                    found[k] = float(d)
            if len(found) == 7:
                break
        out[n] = {k: found.get(k) for k in sorted(
            {"cal:psi", "cal:ks", "cal:wasserstein", "fixed:psi", "fixed:ks",
             "fixed:wasserstein", "p<0.05:ks"})}
        print(f"  power n={n:>9,}: done", file=sys.stderr)
    return out


# -- report ----------------------------------------------------------------------------------
def _table(title: str, res: dict[int, dict[str, float]], rate: float,
           check: bool) -> tuple[list[str], list[str]]:
    lines = [f"\n{title}", "  rule".ljust(24) + "".join(f"{n:>12,}" for n in SIZES)]
    bad = []
    keys = sorted({k for r in res.values() for k in r if not k.startswith("_")},
                  key=lambda k: (k.split(":")[0] != "cal", k))
    for k in keys:
        row = f"  {k}".ljust(24)
        for n in SIZES:
            v = res[n].get(k)
            mark = " "
            if check and v is not None and k.startswith("cal:"):
                trials = res[n]["_trials_model" if k[4:] in MODEL_STATS else "_trials_feature"]
                lo, hi = _interval(rate, int(trials))
                if not lo <= v <= hi:
                    mark = "!"
                    bad.append(f"{title.split('.')[0]} {k} n={n}: {v:.4f} not in "
                               f"[{lo:.4f}, {hi:.4f}]")
            row += ("" if v is None else f"{v:.4f}{mark}").rjust(12)
        lines.append(row)
    if check:
        for trials_key, what in (("_trials_feature", "per feature"), ("_trials_model", "model")):
            t = int(res[SIZES[0]][trials_key])
            lo, hi = _interval(rate, t)
            lines.append(f"  99% binomial interval of {rate:g} over {t} trials ({what}): "
                         f"[{lo:.4f}, {hi:.4f}]")
    return lines, bad


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--windows", type=int, default=300, help="windows per size and scenario")
    ap.add_argument("--rate", type=float, default=0.01, help="configured false-alarm rate")
    ap.add_argument("--model-windows", type=int, default=3000,
                    help="windows per size for the model-level signals (one trial each)")
    ap.add_argument("--draws", type=int, default=4000,
                    help="null draws per window size (the level's own error shrinks with it)")
    ap.add_argument("--seed", type=int, default=20260101)
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    prof = build_reference(np.random.default_rng(args.seed))

    def cals(noise: bool) -> dict[int, Calibrator]:
        return {n: Calibrator(prof, np.random.default_rng(int(prof.fingerprint, 16)),
                              rates=(args.rate,), n_draws=args.draws, reference_noise=noise,
                              sizes=(n,)) for n in SIZES}

    exact, noisy = cals(False), cals(True)
    t_cal = time.perf_counter()
    for c in (*exact.values(), *noisy.values()):
        for n in SIZES:
            if n in c.sizes:
                c.levels(n)
    t_cal = time.perf_counter() - t_cal
    from_ref, from_pop = Population(prof, from_reference=True), Population(prof,
                                                                           from_reference=False)
    a = run_scenario("A", prof, exact, from_ref, args.windows, args.rate, args.seed + 1, False,
                     args.model_windows)
    b = run_scenario("B", prof, noisy, from_pop, args.windows, args.rate, args.seed + 2, True,
                     args.model_windows)
    c_noise = run_scenario("C", prof, noisy, from_pop, args.windows, args.rate,
                           args.seed + 3, False, args.windows)
    c_exact = run_scenario("C'", prof, exact, from_pop, args.windows, args.rate,
                           args.seed + 3, False, args.windows)
    pw = power(prof, exact, args.rate, args.seed + 4)
    out: list[str] = [f"false alarms per window (configured rate {args.rate:g}), "
                      f"reference n={N_REF:,}, {len(DISTS)} features, {args.windows} "
                      f"windows per size; '!' = outside the 99% interval"]
    bad: list[str] = []
    for title, res, check in (
        ("A. stream from the fixed reference (reference_noise: false)", a, True),
        ("B. stream from the population, reference re-sampled per window "
         "(reference_noise: true)", b, True),
        ("C. stream from the population, one fixed reference (reference_noise: true)",
         c_noise, False),
        ("C'. the same stream, levels without the reference's noise (reference_noise: false)",
         c_exact, False),
    ):
        lines, fails = _table(title, res, args.rate, check)
        out += lines
        bad += fails
    out.append("\nsmallest mean shift (sd) of a normal feature flagged in >= 50% of windows")
    out.append("  rule".ljust(24) + "".join(f"{n:>12,}" for n in SIZES))
    for k in pw[SIZES[0]]:
        out.append(f"  {k}".ljust(24) + "".join(
            ("-" if pw[n][k] is None else f"{pw[n][k]:.4f}").rjust(12) for n in SIZES))
    total = time.perf_counter() - t0
    out.append(f"\ncalibration: {t_cal:.1f} s for {2 * len(SIZES)} sizes x modes "
               f"({args.draws} draws each); whole run {total:.0f} s")
    print("\n".join(out))
    if args.json:
        args.json.write_text(json.dumps({"A": a, "B": b, "C": c_noise, "C_exact": c_exact,
                                         "power": pw, "failures": bad}, indent=1))
    if bad:
        print("\nFAIL\n  " + "\n  ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
