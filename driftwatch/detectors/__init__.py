"""Detectors: pure, vectorised functions of (reference sketch, current sketch)."""

__all__: list[str] = []
