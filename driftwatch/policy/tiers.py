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
        return self.name.lower()

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


#: Tiers that carry thresholds and actions (``none`` never acts).
ACTION_TIERS: tuple[Tier, ...] = (Tier.MILD, Tier.MODERATE, Tier.SEVERE)
TIER_NAMES: tuple[str, ...] = tuple(str(t) for t in Tier)
