"""Delayed labels: predictions wait for their outcomes, joined by event key."""

__all__: list[str] = []
