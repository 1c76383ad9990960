"""Severity tiers, ordered so that ``max`` and comparisons mean "worse".

>>> Tier.parse("moderate") > Tier.MILD
True
>>> str(max(Tier.MILD, Tier.SEVERE))
'severe'
>>> [str(t) for t in ACTION_TIERS]
['mild', 'moderate', 'severe']
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["ACTION_TIERS", "TIER_NAMES", "Tier"]


class Tier(IntEnum):
    """``none < mild < moderate < severe``; the string form is the lower-case name."""

    NONE = 0
    MILD = 1
    MODERATE = 2
    SEVERE = 3

    def __str__(self) -> str:
        # a tuple look-up, not ``name.lower()`` (0.4 µs through the enum's descriptor):
        # every decision and timeline line writes several tiers
        return _NAMES[self._value_]

    @classmethod
    def parse(cls, name: str | Tier) -> Tier:
        """``"mild"`` -> ``Tier.MILD``; raises ``ValueError`` listing the valid names."""
        if isinstance(name, Tier):
            return name
        try:
            return cls[str(name).upper()]
        except KeyError:
            raise ValueError(
                f"unknown tier {name!r}; valid: {', '.join(TIER_NAMES)}"
            ) from None


_NAMES: dict[int, str] = {t.value: t.name.lower() for t in Tier}

#: Tiers that carry thresholds and actions (``none`` never acts).
ACTION_TIERS: tuple[Tier, ...] = (Tier.MILD, Tier.MODERATE, Tier.SEVERE)
TIER_NAMES: tuple[str, ...] = tuple(str(t) for t in Tier)
