"""The base of every policy model: strict types, no unknown keys, immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictModel"]


class StrictModel(BaseModel):
    """Strict (``"1"`` is not a number, ``1`` is not ``true``), closed and frozen; a
    number is finite (``.nan`` and ``.inf`` are refused)."""

    model_config = ConfigDict(
        extra="forbid", frozen=True, strict=True, populate_by_name=True, allow_inf_nan=False
    )
