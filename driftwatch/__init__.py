"""driftwatch: watch a production risk model for drift and repair it in tiers."""

__all__ = ["__version__"]

__version__ = "0.1.0"
