"""The command-line type of a count flag (``--batch-size``, ``--pane``, ``--bins``): a whole
number of at least its least sensible value, refused by argparse in one line otherwise.
A batch of 0 events never moved a replay on, and a pane or bin count of 0 divided by zero.

>>> at_least(1)("500")
500
>>> at_least(1)("0")
Traceback (most recent call last):
    ...
argparse.ArgumentTypeError: expected a whole number of at least 1, found '0'
>>> at_least(2)("ten")
Traceback (most recent call last):
    ...
argparse.ArgumentTypeError: expected a whole number of at least 2, found 'ten'
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["at_least"]


def at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type`` reading a whole number ``>= low``."""

    def count(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of at least {low}, found {text!r}")
        return value

    return count
