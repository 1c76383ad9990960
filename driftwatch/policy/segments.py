"""The policy's ``segments:`` section: how many segment values get signals of their own.

The segment column is named in ``reference: {segment: <column>}`` (the connector maps the
live ``segment`` field); without it there are no segment signals and this section is
unused.

>>> s = SegmentSettings()
>>> s.top_k, s.min_events
(5, 500)
"""

from __future__ import annotations

from pydantic import Field

from driftwatch.policy.base import StrictModel
from driftwatch.windows.segments import DEFAULT_TOP_K

__all__ = ["SegmentSettings"]


class SegmentSettings(StrictModel):
    """Per-segment drift signals (see :mod:`driftwatch.windows.segments`)."""

    #: The most frequent segment values of the reference kept; every other value, and a
    #: missing one, is the segment ``other``. Fixed when the profile is built: a saved
    #: profile keeps its own segments.
    top_k: int = Field(default=DEFAULT_TOP_K, ge=1, le=50)
    #: Events a segment needs, in the window and in the reference, before its signals are
    #: reported (a handful of events says nothing about a distribution).
    min_events: int = Field(default=500, ge=1)
