"""The policy's per-day limits and cooldowns, read off the GPU pool's own job records.

The policy engine holds them in its checkpointed state; the pool's job records hold them
too, and those outlive a lost or fresh checkpoint, a second process on the same pool or a
replay on a daemon's state folder. Before a retraining submits its job, the model's other
jobs in the pool (each carries the time of the decision that asked for it,
``$DRIFTWATCH_DECIDED_AT`` in its spec) are counted against the policy at the time of the
retraining's own decision, as the engine counts (event time in a replay and a daemon
alike): at most ``limits.max_actions_per_day[tier]`` jobs of a tier decided in any 24
hours, and none while the ``cooldown`` of a job at that tier or above runs. A retraining
held back ends cancelled, saying why, as the engine would have suppressed it. A job without
that variable (one submitted by hand) is not counted.

>>> limits = RetrainLimits(per_day={"severe": 1}, cooldown={"severe": 14 * DAY_S})
>>> jobs = [PastJob("credit:severe:9", "severe", decided_at=0.0)]
>>> print(held_back(limits, jobs, tier="severe", now=3 * DAY_S))  # doctest: +ELLIPSIS
cooldown: job credit:severe:9 (severe) was decided 3.0 days before; ... is 14.0 days
>>> held_back(limits, jobs, tier="severe", now=15 * DAY_S) is None
True
>>> print(held_back(RetrainLimits(per_day={"severe": 1}), jobs, tier="severe", now=3600.0))
1 severe retraining job(s) decided in the 24 hours before; limits.max_actions_per_day.severe is 1
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DAY_S",
    "DECIDED_AT_ENV",
    "PastJob",
    "RetrainLimits",
    "held_back",
    "past_jobs",
]

DAY_S = 86400.0
DECIDED_AT_ENV = "DRIFTWATCH_DECIDED_AT"
_RANK = {"mild": 1, "moderate": 2, "severe": 3}


@dataclass(frozen=True)
class RetrainLimits:
    """Jobs of a tier in any 24 hours (``per_day``) and seconds of ``cooldown`` per tier."""

    per_day: Mapping[str, int] = field(default_factory=dict)
    cooldown: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_policy(cls, policy: Any) -> RetrainLimits:
        """The limits of a parsed policy (``limits.max_actions_per_day``, ``cooldown``)."""
        per_day = {t: policy.limits.max_actions_per_day.get(t) for t in _RANK}
        return cls(
            per_day={t: int(n) for t, n in per_day.items() if n is not None},
            cooldown={t: float(policy.cooldown.get(t)) for t in _RANK},
        )


@dataclass(frozen=True)
class PastJob:
    """One of the model's jobs in the pool: its action key, tier and decision time."""

    key: str
    tier: str
    decided_at: float


def past_jobs(records: Iterable[Any], model: str, *, exclude_key: str) -> list[PastJob]:
    """The model's jobs among the pool's ``records`` (any state), but ``exclude_key``'s."""
    out = []
    for r in records:
        key = r.key or ""
        decided = r.spec.env.get(DECIDED_AT_ENV)
        if not key.startswith(f"{model}:") or key == exclude_key or decided is None:
            continue
        out.append(PastJob(key, str(r.spec.severity), float(decided)))
    return out


def held_back(
    limits: RetrainLimits, jobs: Sequence[PastJob], *, tier: str, now: float
) -> str | None:
    """Why a retraining at ``tier`` decided at ``now`` may not run; None when the pool's
    records allow it."""
    rank = _RANK.get(tier, 3)
    for j in sorted(jobs, key=lambda j: -j.decided_at):
        wait = limits.cooldown.get(j.tier, 0.0)
        if _RANK.get(j.tier, 3) >= rank and j.decided_at <= now < j.decided_at + wait:
            return (f"cooldown: job {j.key} ({j.tier}) was decided "
                    f"{(now - j.decided_at) / DAY_S:.1f} days before; the policy's "
                    f"cooldown.{j.tier} is {wait / DAY_S:.1f} days")
    limit = limits.per_day.get(tier)
    if limit is not None:
        recent = [j for j in jobs if j.tier == tier and now - DAY_S < j.decided_at <= now]
        if len(recent) >= limit:
            return (f"{len(recent)} {tier} retraining job(s) decided in the 24 hours before; "
                    f"limits.max_actions_per_day.{tier} is {limit}")
    return None
