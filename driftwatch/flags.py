"""A yes/no feature spelled otherwise in the stream than in the reference, read side for side.

Home Credit's reference writes its flags ``0``/``1`` (``FLAG_EMP_PHONE``) or ``Y``/``N``
(``FLAG_OWN_CAR``), IEEE-CIS's ``T``/``F`` (``M1``); a JSON service sends ``true`` and
``false``, a database export ``t`` and ``f``. Matched by text, every value was a level the
reference never saw: a new category, and a severe data-quality fault, in every window of an
unchanged stream. When every level of a categorical feature in the reference is a flag
spelling, a stream value that is no level but a flag is read as the reference's level of
the same side, as an outcome's ``true`` is bad where the reference's ``1`` is.

>>> sides = flag_levels(["N", "Y"])
>>> sides
{False: 'N', True: 'Y'}
>>> [flag_level(v, sides) for v in ("true", "0", "maybe")]
['Y', 'N', None]
>>> flag_levels(["N", "Y", "unknown"]) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

__all__ = ["flag_level", "flag_levels", "flag_side"]

_TRUE = frozenset({"1", "true", "t", "yes", "y"})
_FALSE = frozenset({"0", "false", "f", "no", "n"})


def flag_side(text: str) -> bool | None:
    """Which side of a flag ``text`` spells (1, true, t, yes, y; 0, false, f, no, n, in any
    case), None where it spells none: the one vocabulary of flags, for features and labels.

    >>> flag_side(" Yes"), flag_side("f"), flag_side("2")
    (True, False, None)
    """
    k = text.strip().lower()
    return True if k in _TRUE else False if k in _FALSE else None


def flag_levels(levels: Sequence[str]) -> dict[bool, str] | None:
    """The reference's level of each side when every one of ``levels`` (one per side at
    most) spells a flag; None otherwise."""
    sides: dict[bool, str] = {}
    for lv in levels:
        side = flag_side(lv)
        if side is None or side in sides:
            return None
        sides[side] = lv
    return sides or None


def flag_level(text: str | None, sides: Mapping[bool, str]) -> str | None:
    """The reference's level that flag ``text`` stands for; None when it spells no flag or
    a side the reference lacks."""
    side = None if text is None else flag_side(text)
    return None if side is None else sides.get(side)
